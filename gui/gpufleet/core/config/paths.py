"""Where gpufleet keeps its files: config dir (config.toml, rules.toml) and data dir
(history.sqlite, audit.jsonl), overridable with GPUFLEET_CONFIG_DIR / GPUFLEET_DATA_DIR."""

from __future__ import annotations

import os
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


def ensure_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path
