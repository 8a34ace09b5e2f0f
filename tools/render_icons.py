"""Render the app icon (resources/icons/gpufleet.svg) to the PNG, ICO and ICNS files that are
committed beside it. Run after editing the SVG:

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/render_icons.py

Writes ``resources/icons/hicolor/<N>x<N>/apps/io.github.gpufleet.GpuFleet.png`` (the
freedesktop icon theme layout, ready to install), ``resources/icons/gpufleet.ico`` (Windows:
PNG images in an ICO container) and ``resources/icons/gpufleet.icns`` (macOS: PNG images in an
ICNS container). Both containers are written here in a few lines, with no imaging library:
since Windows Vista and OS X 10.7 they may simply hold PNG files. Rendering goes through Qt's
QSvgRenderer, the same renderer the app uses for the SVG.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
APP_ID = "io.github.gpufleet.GpuFleet"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS element types that hold a PNG of the given pixel size (the @2x ones share sizes).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),
    (b"icp6", 64),
    (b"ic12", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic13", 256),
    (b"ic09", 512),
    (b"ic14", 512),
    (b"ic10", 1024),
)


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(p)
    p.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    buf.close()
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """ICONDIR + one ICONDIRENTRY per image (width/height 0 means 256) + the PNGs."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for s in sizes:
        data = pngs[s]
        dim = 0 if s >= 256 else s
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    return header + entries + blobs


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """'icns' + total length, then (type, length incl. its 8-byte header, PNG) per element."""
    body = b""
    for kind, size in ICNS_TYPES:
        data = pngs[size]
        body += kind + struct.pack(">I", 8 + len(data)) + data
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    _app = QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(ICONS / "gpufleet.svg"))
    if not renderer.isValid():
        print("render_icons: resources/icons/gpufleet.svg is not a valid SVG", file=sys.stderr)
        return 1
    needed = set(PNG_SIZES) | set(ICO_SIZES) | {s for _, s in ICNS_TYPES}
    pngs = {s: render_png(renderer, s) for s in sorted(needed)}
    for s in PNG_SIZES:
        out = ICONS / "hicolor" / f"{s}x{s}" / "apps" / f"{APP_ID}.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(pngs[s])
        print(out.relative_to(ROOT))
    (ICONS / "gpufleet.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (ICONS / "gpufleet.icns").write_bytes(icns_bytes(pngs))
    print("resources/icons/gpufleet.ico\nresources/icons/gpufleet.icns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
