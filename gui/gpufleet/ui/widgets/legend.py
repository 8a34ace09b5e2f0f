"""A plot legend painted from one cached pixmap.

pyqtgraph's LegendItem is a layout of two items per entry (a sample and a rich-text label,
itself a QGraphicsTextItem), each painted on every repaint of the plot: ~1.2 ms per paint for a
16-entry legend here, more than stroking the curves it explains. The entries change only when
a host is selected or a GPU is shown or hidden, so this legend renders them once into a
pixmap and blits it. Clicking an entry hides or shows its curve, as pyqtgraph's does.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QApplication

PAD = 4  # pixels around and between entries
SAMPLE_W = 18  # the short line drawn in each entry's pen


class Entry(Protocol):
    """What a legend entry needs of its curve (CurveHandle and PlotCurveItem have it)."""

    opts: dict[str, Any]

    def isVisible(self) -> bool: ...

    def setVisible(self, visible: bool) -> None: ...


class FastLegend(pg.GraphicsObject):  # type: ignore[misc]
    """Entries in ``columns`` columns at the top right of a ViewBox, ``offset`` pixels in."""

    def __init__(
        self,
        vb: pg.ViewBox,
        *,
        fg: str,
        bg: str,
        muted: str,
        border: str,
        columns: int = 4,
        offset: tuple[int, int] = (8, 4),
    ) -> None:
        super().__init__()
        self.setParentItem(vb)
        self.setZValue(30)
        self.vb = vb
        self.fg, self.bg, self.muted, self.border = QColor(fg), QColor(bg), QColor(muted), border
        self.columns = columns
        self.offset = offset
        self.entries: list[tuple[Entry, str]] = []
        self._pixmap: QPixmap | None = None
        self._cells: list[QRectF] = []
        self._size = (0.0, 0.0)
        vb.sigResized.connect(self._place)

    # -- entries ---------------------------------------------------------------------------

    def addItem(self, item: Entry, name: str) -> None:
        self.entries.append((item, name))
        vis = getattr(item, "visibleChanged", None)
        if vis is not None:
            vis.connect(self.invalidate)
        self.invalidate()

    def removeItem(self, item: Entry) -> None:
        kept = [(i, n) for i, n in self.entries if i is not item]
        if len(kept) != len(self.entries):
            vis = getattr(item, "visibleChanged", None)
            if vis is not None:
                with contextlib.suppress(RuntimeError, TypeError):  # already gone
                    vis.disconnect(self.invalidate)
            self.entries = kept
            self.invalidate()

    def names(self) -> list[str]:
        return [n for _, n in self.entries]

    def invalidate(self) -> None:
        self._pixmap = None
        self._layout()
        self._place()
        self.update()

    # -- geometry --------------------------------------------------------------------------

    def _layout(self) -> None:
        fm = QFontMetrics(QApplication.font())
        h = fm.height()
        n = len(self.entries)
        cols = max(1, min(self.columns, n))
        widths = [0] * cols
        for k, (_, name) in enumerate(self.entries):
            c = k % cols
            widths[c] = max(widths[c], SAMPLE_W + PAD + fm.horizontalAdvance(name))
        rows = (n + cols - 1) // cols
        self._cells = []
        x_of = [PAD + sum(widths[:c]) + c * 2 * PAD for c in range(cols)]
        for k in range(n):
            r, c = divmod(k, cols)
            self._cells.append(QRectF(x_of[c], PAD + r * h, widths[c], h))
        w = (x_of[-1] + widths[-1] + PAD) if n else 0.0
        self._size = (float(w), float(PAD * 2 + rows * h) if n else 0.0)
        self.prepareGeometryChange()

    def _place(self, *_: object) -> None:
        w, _h = self._size
        r = self.vb.boundingRect()
        self.setPos(r.right() - w - self.offset[0], r.top() + self.offset[1])

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, *self._size)

    # -- painting --------------------------------------------------------------------------

    def _render(self) -> QPixmap:
        w, h = self._size
        ratio = 1.0
        view = self.getViewWidget()
        if view is not None:
            ratio = float(view.devicePixelRatioF())
        pm = QPixmap(max(1, round(w * ratio)), max(1, round(h * ratio)))
        pm.setDevicePixelRatio(ratio)
        pm.fill(self.bg)
        p = QPainter(pm)
        try:
            p.setPen(QPen(QColor(self.border), 1))
            p.drawRect(QRectF(0.5, 0.5, w - 1, h - 1))
            fm = QFontMetrics(p.font())
            for (item, name), cell in zip(self.entries, self._cells, strict=True):
                shown = item.isVisible()
                y = cell.center().y()
                pen = QPen(pg.mkPen(item.opts.get("pen")))
                pen.setCosmetic(True)
                if not shown:
                    pen.setColor(self.muted)
                p.setPen(pen)
                p.drawLine(QPointF(cell.left(), y), QPointF(cell.left() + SAMPLE_W, y))
                p.setPen(self.fg if shown else self.muted)
                p.drawText(
                    QPointF(cell.left() + SAMPLE_W + PAD, cell.top() + fm.ascent()),
                    name,
                )
        finally:
            p.end()
        return pm

    def paint(self, p: QPainter, *args: Any) -> None:
        if not self.entries:
            return
        if self._pixmap is None:
            self._pixmap = self._render()
        p.drawPixmap(QPointF(0, 0), self._pixmap)

    # -- clicks ----------------------------------------------------------------------------

    def mouseClickEvent(self, ev: Any) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.pos()
        for (item, _), cell in zip(self.entries, self._cells, strict=True):
            if cell.contains(pos):
                item.setVisible(not item.isVisible())
                self.invalidate()
                ev.accept()
                return
