"""The per-link NVLink grid of the Interconnect tab: GPUs down, links across, one cell per link
with its latest TX+RX in GB/s, coloured by its share of the link's nominal bandwidth.

One custom-painted widget (a few rectangles and short texts per cell in one ``paintEvent``),
not a widget per cell: 8 GPUs × 18 links would be 144 widgets to lay out and restyle. The
colour ramp is viridis-like (dark to light), so the share reads by lightness as well as hue;
a down link is red and says "down" in its cell, so it never depends on colour alone.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpufleet.core.live.links import LinkSnapshot
from gpufleet.ui.widgets.theme import Theme, gpu_colour

GB = 1e9
ROW_H = 20
HEADER_H = 18
LABEL_W = 56
DOWN_COLOUR = "#d62728"
# Viridis at 0, 0.25, 0.5, 0.75, 1: monotonic in lightness, readable by colour-blind users.
_RAMP: tuple[tuple[int, int, int], ...] = (
    (0x44, 0x01, 0x54),
    (0x3B, 0x52, 0x8B),
    (0x21, 0x91, 0x8C),
    (0x5E, 0xC9, 0x62),
    (0xFD, 0xE7, 0x25),
)


def ramp_colour(frac: float) -> QColor:
    """The colour of a share of nominal (0..1, clipped)."""
    x = min(1.0, max(0.0, frac)) * (len(_RAMP) - 1)
    i = min(len(_RAMP) - 2, int(x))
    f = x - i
    a, b = _RAMP[i], _RAMP[i + 1]
    return QColor(*(round(a[k] + (b[k] - a[k]) * f) for k in range(3)))


def _text_on(c: QColor) -> QColor:
    return QColor("#000000") if c.lightnessF() > 0.55 else QColor("#ffffff")


class LinkGrid(QWidget):
    """Paints one ``LinkSnapshot``; ``set_snapshot`` repaints only when it changed."""

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.snap: LinkSnapshot | None = None
        self.down_text = "down"  # set translated by the tab
        self.paints = 0  # tests and benchmarks count repaints
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(HEADER_H + ROW_H)

    def set_snapshot(self, snap: LinkSnapshot | None) -> None:
        if snap is self.snap:
            return
        old = self.snap
        self.snap = snap
        rows = len(snap.gpus) if snap is not None else 1
        if old is None or snap is None or len(old.gpus) != rows:
            self.setFixedHeight(HEADER_H + ROW_H * max(1, rows) + 2)
        self.update()

    def sizeHint(self) -> QSize:
        rows = len(self.snap.gpus) if self.snap is not None else 1
        return QSize(600, HEADER_H + ROW_H * max(1, rows) + 2)

    def cell_text(self, row: int, link: int) -> str:
        """What a cell shows ("down", "–" unknown, else TX+RX in GB/s)."""
        snap = self.snap
        if snap is None:
            return ""
        up = snap.up[row, link]
        if up == 0:
            return self.down_text
        total = snap.tx[row, link] + snap.rx[row, link]
        if math.isnan(total):
            return "–"
        return f"{total / GB:.1f}"

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        snap = self.snap
        p = QPainter(self)
        try:
            p.fillRect(self.rect(), QColor(self.theme.bg))
            if snap is None or not snap.gpus or snap.n_links == 0:
                return
            n = snap.n_links
            cw = max(8.0, (self.width() - LABEL_W - 2) / n)
            font = QFont(self.font())
            font.setPointSizeF(max(6.5, min(9.0, cw / 5.0)))
            p.setFont(font)
            fg = QColor(self.theme.fg)
            muted = QColor(self.theme.muted)
            p.setPen(muted)
            for k in range(n):
                r = QRectF(LABEL_W + k * cw, 0, cw, HEADER_H)
                p.drawText(r, Qt.AlignmentFlag.AlignCenter, str(k))
            frac = snap.fraction()
            for gi, g in enumerate(snap.gpus):
                y = HEADER_H + gi * ROW_H
                p.setPen(QColor(gpu_colour(g)))
                p.drawText(
                    QRectF(2, y, LABEL_W - 4, ROW_H),
                    Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                    f"■ GPU {g}",
                )
                for k in range(n):
                    rect = QRectF(LABEL_W + k * cw, y, cw, ROW_H).adjusted(1, 1, -1, -1)
                    up = snap.up[gi, k]
                    f = frac[gi, k]
                    if up == 0:
                        bg = QColor(DOWN_COLOUR)
                    elif np.isnan(f) or np.isnan(up):
                        bg = QColor(self.theme.grid)
                    else:
                        bg = ramp_colour(float(f))
                    p.fillRect(rect, bg)
                    if up == 0:
                        # A heavy frame as well as the word: unmistakable without colour.
                        p.setPen(QPen(fg, 2))
                        p.drawRect(rect.adjusted(1, 1, -1, -1))
                    p.setPen(_text_on(bg) if not np.isnan(f) or up == 0 else fg)
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.cell_text(gi, k))
        finally:
            p.end()
