"""The opt-in "start with my session" setting.

On Linux (and other freedesktop systems) this is an XDG autostart entry: a ``.desktop`` file in
``$XDG_CONFIG_HOME/autostart/`` (default ``~/.config/autostart/``) that the desktop session
starts at login (XDG Autostart specification). Turning it off deletes the file, so nothing is
left behind. The entry runs the program that is running now: the frozen bundle's executable,
else the installed ``gpufleet`` script, else ``python -m gpufleet`` of this interpreter.

Elsewhere (macOS login items, the Windows Run key) it is not implemented: ``supported()`` is
False, ``set_enabled`` does nothing and returns None, and the settings dialog greys the option
out with a note.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

APP_ID = "io.github.gpufleet.GpuFleet"
FILE_NAME = f"{APP_ID}.desktop"
# Characters that make a desktop-entry Exec argument need quoting (spec: "Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def supported() -> bool:
    """True where an XDG autostart entry is how sessions start programs."""
    return sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd"))


def autostart_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    # The spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "autostart"


def entry_path() -> Path:
    return autostart_dir() / FILE_NAME


def launch_command() -> list[str]:
    """How to start this very app at login."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = shutil.which("gpufleet")
    if script:
        return [str(Path(script).resolve())]
    return [sys.executable, "-m", "gpufleet"]


def exec_quote(arg: str) -> str:
    """One Exec argument, quoted as the desktop entry specification asks."""
    if arg and not (_RESERVED & set(arg)) and "=" not in arg and "%" not in arg:
        return arg
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg.replace("%", "%%"))
    return f'"{escaped}"'


def entry_text(command: list[str]) -> str:
    exec_line = " ".join(exec_quote(a) for a in command)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.4\n"
        "Name=gpufleet\n"
        "Comment=Watch every GPU you rent (started with your session; turn off in gpufleet's "
        "settings)\n"
        f"Exec={exec_line}\n"
        f"Icon={APP_ID}\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def is_enabled() -> bool:
    return supported() and entry_path().is_file()


def set_enabled(on: bool, command: list[str] | None = None) -> Path | None:
    """Create or delete the autostart entry; returns its path (None where unsupported).

    Raises OSError with the path when the file cannot be written or removed."""
    if not supported():
        return None
    path = entry_path()
    if not on:
        path.unlink(missing_ok=True)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(entry_text(command or launch_command()), encoding="utf-8")
    os.replace(tmp, path)
    return path
