"""One cell of nvidia-smi's output (a CSV field or an XML element's text) as a value.

Shared by the CSV side (``nvidia_smi``) and the XML side (``nvidia_smi_xml``): both must agree
on what "no value" looks like, because nvidia-smi spells it many ways ("[N/A]", "N/A",
"[Not Supported]", "[Unknown Error]", "[Requested functionality has been deprecated]",
"[GPU is lost]"), and every one of them must become ``None`` (not reported), never 0.
"""

from __future__ import annotations

import ntpath
import os
import re
from collections.abc import Callable
from typing import Final

MIB: Final = 1 << 20

# What a cell that holds no value becomes in hello's reasons.
NOT_SUPPORTED: Final = "NotSupported: nvidia-smi reports it as not supported on this GPU"
NOT_AVAILABLE: Final = "NotSupported: nvidia-smi reports [N/A] for it on this GPU"

_NUM = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")
# A Windows path ("C:\Program Files\...\NVIDIA Overlay.exe", "\\?\C:\..."): spaces are part of
# the path, and the program's name is what follows the last backslash up to ".exe".
_WIN_PATH = re.compile(r"^(?:[A-Za-z]:\\|\\\\)")
_WIN_EXE = re.compile(r"^(.*?\.exe)(?:\s|$)", re.IGNORECASE)


class SmiError(ValueError):
    """nvidia-smi output this module cannot use (the message says what and why)."""


def missing(text: str) -> str | None:
    """The reason a cell holds no value, or None when it holds one."""
    t = text.strip()
    if not t or t.startswith("["):
        low = t.lower()
        if "not supported" in low:
            return NOT_SUPPORTED
        return NOT_AVAILABLE
    if t in ("N/A", "Unknown", "Unknown Error"):
        return NOT_AVAILABLE
    return None


def to_num(text: str) -> float | None:
    m = _NUM.match(text)
    return float(m.group(1)) if m else None


def to_int(text: str) -> int | None:
    v = to_num(text)
    return int(v) if v is not None else None


def to_pstate(text: str) -> int | None:
    t = text.strip().upper()
    return int(t[1:]) if t.startswith("P") and t[1:].isdigit() else to_int(t)


def to_hex(text: str) -> int | None:
    try:
        return int(text.strip(), 16 if text.strip().lower().startswith("0x") else 10)
    except ValueError:
        return None


def to_mib(text: str) -> int | None:
    v = to_num(text)
    return int(v * MIB) if v is not None else None


def to_bool(text: str) -> int | None:
    t = text.strip().lower()
    if t in ("yes", "true", "enabled", "active"):
        return 1
    if t in ("no", "false", "disabled", "not active"):
        return 0
    return to_int(t)


CONVERT: Final[dict[str, Callable[[str], float | int | None]]] = {
    "num": to_num,
    "int": to_int,
    "pstate": to_pstate,
    "hex": to_hex,
    "mib": to_mib,
    "bool": to_bool,
}


def split_csv(line: str) -> list[str]:
    """A ``--format=csv`` line: fields separated by ", " (nvidia-smi does not quote; a process
    name with a comma is rejoined by the caller that knows the field count)."""
    return [f.strip() for f in line.rstrip("\r\n").split(",")]


def program_name(cmd: str | None) -> str | None:
    """The program's short name from nvidia-smi's process name: the whole path's last part
    on Windows ("C:\\Program Files\\NVIDIA Corporation\\NVIDIA App\\CEF\\NVIDIA Overlay.exe"
    is "NVIDIA Overlay.exe", spaces and all); on Linux, where the name is the command line
    ("/usr/lib/chromium/chromium --type=gpu-process"), the first word's."""
    if not cmd:
        return None
    if _WIN_PATH.match(cmd) or ("\\" in cmd and "/" not in cmd):
        m = _WIN_EXE.match(cmd)
        return ntpath.basename(m.group(1) if m else cmd) or cmd
    return os.path.basename(cmd.split(" ")[0]) or cmd
