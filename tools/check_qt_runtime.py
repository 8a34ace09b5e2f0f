#!/usr/bin/env python3
"""Says, before `make demo` builds anything, which system libraries Qt's window needs and how
to install them on this distribution.

PySide6's wheel carries Qt itself but not the X11/xcb, EGL, fontconfig and D-Bus libraries its
platform plugin loads; a machine without them builds the whole virtualenv and then aborts with
Qt's one-line "xcb-cursor0 is needed" (which names one of several missing). This script looks
each library up in the dynamic linker's cache (`ldconfig -p`), and when some are missing prints
the one command that installs them for the distribution family (Debian/Ubuntu apt, Fedora
dnf, Arch pacman) and exits 1. Run by the system python3: stdlib only, Python 3.8.
"""

import os
import re
import subprocess
import sys
from typing import Dict, List, Optional, Set, Tuple

# soname -> (Debian/Ubuntu package, Fedora package, Arch package). What Qt 6's xcb platform
# plugin (libqxcb.so and libQt6XcbQpa) and QtGui link against outside the wheel.
LIBS: Dict[str, Tuple[str, str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0",
        "xcb-util-renderutil",
        "xcb-util-renderutil",
    ),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
}
# Offscreen rendering (screenshots, tests, CI) needs only these of them.
OFFSCREEN = (
    "libxkbcommon.so.0",
    "libEGL.so.1",
    "libGL.so.1",
    "libX11.so.6",
    "libfontconfig.so.1",
    "libfreetype.so.6",
    "libglib-2.0.so.0",
    "libdbus-1.so.3",
)
FAMILIES = ("debian", "fedora", "arch")
INSTALL = {
    "debian": "sudo apt-get install -y {}",
    "fedora": "sudo dnf install -y {}",
    "arch": "sudo pacman -S --needed {}",
}


def linker_cache() -> Optional[Set[str]]:
    """The sonames the dynamic linker knows, or None when ldconfig cannot be run."""
    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            out = subprocess.run(
                [exe, "-p"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False
            ).stdout.decode("utf-8", "replace")
        except OSError:
            continue
        return set(re.findall(r"^\s*(\S+)\s+\(", out, re.MULTILINE))
    return None


def os_family(path: str = "/etc/os-release") -> Optional[str]:
    """debian, fedora or arch from os-release's ID and ID_LIKE; None for anything else."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    ids: List[str] = []
    for key in ("ID", "ID_LIKE"):
        m = re.search(rf"^{key}=\"?([^\"\n]*)\"?$", text, re.MULTILINE)
        if m:
            ids.extend(m.group(1).lower().split())
    aliases = {"ubuntu": "debian", "rhel": "fedora", "centos": "fedora", "manjaro": "arch"}
    for i in ids:
        fam = aliases.get(i, i)
        if fam in FAMILIES:
            return fam
    return None


def missing_libs(known: Set[str], offscreen: bool) -> List[str]:
    wanted = OFFSCREEN if offscreen else tuple(LIBS)
    return [so for so in wanted if so not in known]


def advice(missing: List[str], family: Optional[str]) -> str:
    lines = ["Qt cannot open a window here: these system libraries are missing:"]
    lines += ["  " + so for so in missing]
    families = [family] if family else list(FAMILIES)
    if not family:
        lines.append("Install them with your distribution's package manager, for example:")
    else:
        lines.append("Install them with:")
    for fam in families:
        pkgs = sorted({LIBS[so][FAMILIES.index(fam)] for so in missing})
        label = {"debian": "Debian/Ubuntu", "fedora": "Fedora", "arch": "Arch"}[fam]
        lines.append("  {:<14} {}".format(label + ":", INSTALL[fam].format(" ".join(pkgs))))
    lines.append("then run the same make command again.")
    return "\n".join(lines)


def main() -> int:
    offscreen = os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal")
    known = linker_cache()
    if known is None:
        print("check_qt_runtime: ldconfig not found; not checking Qt's system libraries")
        return 0
    missing = missing_libs(known, offscreen)
    if not missing:
        return 0
    print(advice(missing, os_family(os.environ.get("GPUFLEET_OS_RELEASE", "/etc/os-release"))))
    return 1


if __name__ == "__main__":
    sys.exit(main())
