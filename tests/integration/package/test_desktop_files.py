"""Desktop integration files: the freedesktop entry, the AppStream metainfo, the icons, and the
"start with my session" autostart entry (enabled and disabled in a temporary XDG_CONFIG_HOME).

The validators are the real Debian tools (desktop-file-utils, appstream); a test skips with
the package to install when one is missing.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gpufleet.core.config import autostart

from tests.support.paths import ROOT

RES = ROOT / "resources"
APP_ID = "io.github.gpufleet.GpuFleet"
DESKTOP = RES / f"{APP_ID}.desktop"
METAINFO = RES / f"{APP_ID}.metainfo.xml"


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (apt-get install {package})")
    return path


def _validate_desktop(path: Path) -> None:
    tool = _tool("desktop-file-validate", "desktop-file-utils")
    p = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout + p.stderr


def test_desktop_file_validates() -> None:
    _validate_desktop(DESKTOP)
    text = DESKTOP.read_text()
    assert f"Icon={APP_ID}\n" in text
    assert "Exec=gpufleet\n" in text


def test_metainfo_validates_offline() -> None:
    tool = _tool("appstreamcli", "appstream")
    p = subprocess.run(
        [tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, check=False
    )
    assert p.returncode == 0, p.stdout + p.stderr
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == DESKTOP.name  # type: ignore[union-attr]
    assert root.find("content_rating") is not None
    assert root.find("releases/release") is not None
    # The screenshots are the ones `gpufleet screenshot` writes into docs/img.
    for url in (e.text or "" for e in root.iter("image")):
        assert url.rsplit("/", 1)[-1] in {
            "overview.png",
            "clocks.png",
            "thermal.png",
            "memory.png",
            "interconnect.png",
            "cost.png",
        }


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def test_icons_exist_in_every_size_and_container() -> None:
    icons = RES / "icons"
    assert (icons / "gpufleet.svg").read_text().lstrip().startswith("<?xml")
    for s in (16, 24, 32, 48, 64, 128, 256, 512):
        png = icons / "hicolor" / f"{s}x{s}" / "apps" / f"{APP_ID}.png"
        assert _png_size(png.read_bytes()) == (s, s)
    ico = (icons / "gpufleet.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    for i in range(count):
        w, _h, _c, _r, _p, _b, size, offset = struct.unpack(
            "<BBBBHHII", ico[6 + 16 * i : 22 + 16 * i]
        )
        assert _png_size(ico[offset : offset + size])[0] == (w or 256)
    icns = (icons / "gpufleet.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    pos, kinds = 8, []
    while pos < len(icns):
        kind_b, length = icns[pos : pos + 4], struct.unpack(">I", icns[pos + 4 : pos + 8])[0]
        _png_size(icns[pos + 8 : pos + length])
        kinds.append(kind_b)
        pos += length
    assert pos == len(icns) and b"ic10" in kinds and b"icp4" in kinds


@pytest.mark.skipif(not autostart.supported(), reason="XDG autostart is for Linux sessions")
def test_autostart_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert not autostart.is_enabled()
    cmd = [sys.executable, "-m", "gpufleet", "--title=a b$c"]
    path = autostart.set_enabled(True, cmd)
    assert path == tmp_path / "xdg" / "autostart" / f"{APP_ID}.desktop"
    assert autostart.is_enabled()
    _validate_desktop(path)
    exec_line = next(x for x in path.read_text().splitlines() if x.startswith("Exec="))
    assert exec_line == f'Exec={sys.executable} -m gpufleet "--title=a b\\$c"'
    # Enabling twice rewrites the same single file.
    autostart.set_enabled(True)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    assert autostart.set_enabled(False) == path
    assert not path.exists() and not autostart.is_enabled()
    autostart.set_enabled(False)  # already off: no error


def test_autostart_ignores_a_relative_xdg_config_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")
    assert autostart.autostart_dir() == Path.home() / ".config" / "autostart"
