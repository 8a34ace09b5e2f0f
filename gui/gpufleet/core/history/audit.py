"""The audit log: every kill (and every other action on a host), one JSON object a line.

Appended with O_APPEND and fsync'd so that a crash right after a kill still leaves its record;
the file is private (0600). The demo fleet logs to its own file, never the real one.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from gpufleet.core.config import paths

_lock = threading.Lock()


def append_audit(entry: dict[str, Any], demo: bool) -> Path:
    """Append ``entry`` (with a ``t`` wall-clock time added when absent); returns the path."""
    path = paths.audit_file(demo)
    paths.ensure_private_dir(path.parent)
    record = {"t": time.time(), **entry}
    line = orjson.dumps(record, default=str) + b"\n"
    with _lock:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    return path


def read_audit(demo: bool = False) -> list[dict[str, Any]]:
    """Every record of the audit log, oldest first (a damaged line is skipped)."""
    path = paths.audit_file(demo)
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for raw in path.read_bytes().splitlines():
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out
