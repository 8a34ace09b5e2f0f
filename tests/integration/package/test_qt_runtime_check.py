"""`make demo` on a machine without Qt's system libraries stops before building anything and
prints the command that installs them for the distribution (tools/check_qt_runtime.py).

The dynamic linker's cache is this machine's real `ldconfig -p` output with the libraries a
fresh Debian lacked removed (a fake `ldconfig` first on PATH prints it); os-release is the
real file shape of each distribution family."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

CHECK = ROOT / "tools" / "check_qt_runtime.py"
OS_RELEASE = {
    "debian": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n',
    "ubuntu": 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n',
    "fedora": 'NAME="Fedora Linux"\nID=fedora\n',
    "arch": 'NAME="Arch Linux"\nID=arch\n',
}


def _real_cache() -> str:
    exe = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not os.path.exists(exe):
        pytest.skip("no ldconfig on this machine to take a linker cache from")
    return subprocess.run([exe, "-p"], capture_output=True, text=True, check=True).stdout


def _fake_path(tmp_path: Path, drop: tuple[str, ...], distro: str) -> dict[str, str]:
    lines = [ln for ln in _real_cache().splitlines() if not any(d in ln for d in drop)]
    # Everything the checker asks for is present unless dropped, whatever this machine has.
    sys.path.insert(0, str(CHECK.parent))
    try:
        import check_qt_runtime as cq
    finally:
        sys.path.pop(0)
    lines += [f"\t{so} (libc6,x86-64) => /usr/lib/{so}" for so in cq.LIBS if so not in drop]
    cache = tmp_path / "cache.txt"
    cache.write_text("\n".join(lines) + "\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "ldconfig"
    fake.write_text(f"#!/bin/sh\ncat {cache}\n")
    fake.chmod(0o755)
    rel = tmp_path / "os-release"
    rel.write_text(OS_RELEASE[distro])
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "MAKEFLAGS")}
    env.update(PATH=f"{bindir}:{os.environ['PATH']}", GPUFLEET_OS_RELEASE=str(rel))
    return env


MISSING = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")


def test_make_demo_stops_before_building_with_the_apt_command(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    env = _fake_path(tmp_path, MISSING, "debian")
    venv = tmp_path / "venv"
    p = subprocess.run(
        ["make", "-C", str(ROOT), "demo", f"VENV={venv}", f"PYTHON={sys.executable}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode != 0
    assert "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1" in p.stdout
    assert "libxcb-icccm.so.4" in p.stdout and "libxcb-keysyms.so.1" in p.stdout
    assert not venv.exists(), "the virtualenv was built before the check"


@pytest.mark.parametrize(
    ("distro", "command"),
    [
        ("ubuntu", "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1"),
        ("fedora", "sudo dnf install -y xcb-util-keysyms xcb-util-wm"),
        ("arch", "sudo pacman -S --needed xcb-util-keysyms xcb-util-wm"),
    ],
)
def test_the_install_command_is_the_distribution_family_s(
    tmp_path: Path, distro: str, command: str
) -> None:
    env = _fake_path(tmp_path, MISSING, distro)
    p = subprocess.run([sys.executable, str(CHECK)], env=env, capture_output=True, text=True)
    assert p.returncode == 1
    assert command in p.stdout


def test_nothing_missing_passes_quietly(tmp_path: Path) -> None:
    env = _fake_path(tmp_path, (), "debian")
    p = subprocess.run([sys.executable, str(CHECK)], env=env, capture_output=True, text=True)
    assert (p.returncode, p.stdout) == (0, "")


def test_offscreen_needs_no_xcb_library(tmp_path: Path) -> None:
    env = _fake_path(tmp_path, MISSING, "debian")
    env["QT_QPA_PLATFORM"] = "offscreen"
    p = subprocess.run([sys.executable, str(CHECK)], env=env, capture_output=True, text=True)
    assert p.returncode == 0
