"""Where gpufleet keeps its files: config dir (config.toml, rules.toml) and data dir
(history.sqlite, audit.jsonl), overridable with GPUFLEET_CONFIG_DIR / GPUFLEET_DATA_DIR.

Everything under them is private to the user: directories 0700, files 0600 (the history
holds user names and command lines, the config the hosts one rents). ``ensure_private_dir``
and ``private_file`` create them so and tighten what an older version left wider."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs

APP = "gpufleet"


def config_dir() -> Path:
    env = os.environ.get("GPUFLEET_CONFIG_DIR")
    return Path(env) if env else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    env = os.environ.get("GPUFLEET_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir(APP))


def demo_data_dir() -> Path:
    """The demo fleet writes here, never into real history or cost."""
    return data_dir() / "demo"


def config_file() -> Path:
    return config_dir() / "config.toml"


def rules_file() -> Path:
    return config_dir() / "rules.toml"


def history_file(demo: bool = False) -> Path:
    return (demo_data_dir() if demo else data_dir()) / "history.sqlite"


def audit_file(demo: bool = False) -> Path:
    return (demo_data_dir() if demo else data_dir()) / "audit.jsonl"


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def _tighten(path: Path, mode: int) -> None:
    """Give a path of ours (never someone else's) no group or other access, and at least
    the owner access of ``mode``."""
    if os.name != "posix":
        return
    try:
        st = path.stat()
        want = (stat.S_IMODE(st.st_mode) & 0o700) | mode
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != want:
            path.chmod(want)
    except OSError:
        pass


def _app_root(path: Path) -> Path | None:
    """The config or data dir that ``path`` is in (or is), if any."""
    for root in (config_dir(), data_dir()):
        if path == root or root in path.parents:
            return root
    return None


def ensure_private_dir(path: Path) -> Path:
    """``path`` and its missing parents, 0700. Within the config or data dir (and that dir
    itself) an existing directory of ours that is wider is tightened too; elsewhere only the
    directories made here are set (a parent such as ~/.local/share or /tmp is left alone)."""
    path = Path(path)
    root = _app_root(path)
    missing = []
    p = path
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    # mkdir's mode goes through the umask and reaches only the leaf: set each one made (above
    # an app dir, such as a new ~/.local/share, as mkdir -p makes it).
    for p in missing:
        if root is None or p == root or root in p.parents:
            _tighten(p, PRIVATE_DIR)
    if root is not None:
        p = path
        while True:
            _tighten(p, PRIVATE_DIR)
            if p == root or p.parent == p:
                break
            p = p.parent
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and 0600 if missing (so whatever writes it next, SQLite for
    one, keeps that mode for it and its side files); tighten it if it is wider."""
    path = Path(path)
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE)
    os.close(fd)
    _tighten(path, PRIVATE_FILE)
    return path
