"""Integration tests of the packaged app: the PyInstaller bundle, the wheel, the desktop
files, the Qt runtime check of ``make demo``."""
