"""Every live curve of one plot drawn by one graphics item.

A pyqtgraph ``PlotCurveItem`` per curve costs, besides stroking its line, ~0.15 ms of Python
per paint (render hints, path cache checks, the profiler, bounds through the device
transform) and a ``QPainterPath`` rebuilt per ``setData``; with 32–37 curves on a tab that
was a third of a redraw (docs/benchmarks.md, GUI). Here one item strokes every curve as
polylines from ``QPolygonF`` buffers filled straight from NumPy, in one ``paint``.

Each curve keeps a small handle (``CurveHandle``): the legend shows it and toggles its
visibility as it would a curve item, and tests and the crosshair read its data.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem

F64 = npt.NDArray[np.float64]
_EMPTY = np.empty(0, dtype=np.float64)


def polylines(t: F64, v: F64) -> list[QPolygonF]:
    """The finite runs of (t, v) as polygons (a NaN breaks the line, as a gap must)."""
    n = min(len(t), len(v))
    if n < 2:
        return []
    t, v = t[:n], v[:n]
    fin = np.isfinite(v)
    if fin.all():
        return [_polygon(t, v)]
    # Starts and ends of the runs of finite values.
    edges = np.flatnonzero(np.diff(np.concatenate(([0], fin.view(np.int8), [0]))))
    out = []
    for a, b in zip(edges[0::2], edges[1::2], strict=True):
        if b - a >= 2:
            out.append(_polygon(t[a:b], v[a:b]))
    return out


def padded_rect(
    vb: pg.ViewBox | None, x0: float, x1: float, y0: float, y1: float, pixels: float
) -> QRectF:
    """The data rectangle grown by ``pixels`` screen pixels each way (the slack a cosmetic pen
    needs around its line), at the view's current scale."""
    px = py = 0.0
    if vb is not None:
        (a, b), (c, d) = vb.viewRange()
        px = pixels * (b - a) / max(1.0, vb.width())
        py = pixels * (d - c) / max(1.0, vb.height())
    return QRectF(x0 - px, y0 - py, x1 - x0 + 2 * px, y1 - y0 + 2 * py)


def _polygon(t: F64, v: F64) -> QPolygonF:
    poly: QPolygonF = pg.functions.create_qpolygonf(len(t))
    buf = pg.functions.ndarray_from_qpolygonf(poly)
    buf[:, 0] = t
    buf[:, 1] = v
    return poly


class CurveHandle(pg.GraphicsObject):  # type: ignore[misc]
    """One curve of a ``CurveSet``: its pen, name and data. Draws nothing itself; hiding it
    (the legend does on a click) hides the curve."""

    def __init__(self, owner: CurveSet, name: str | None, pen: QPen) -> None:
        super().__init__(owner)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        # What pyqtgraph's LegendItem reads to draw the sample line.
        self.opts: dict[str, Any] = {
            "pen": pen,
            "name": name,
            "antialias": False,
            "symbol": None,
            "fillLevel": None,
            "fillBrush": None,
        }
        self.xData: F64 = _EMPTY
        self.yData: F64 = _EMPTY
        self.polys: list[QPolygonF] = []
        self.span: tuple[float, float, float, float] | None = None
        self.visibleChanged.connect(owner.update)

    def name(self) -> str | None:
        n = self.opts["name"]
        return None if n is None else str(n)

    def getData(self) -> tuple[F64, F64]:
        return self.xData, self.yData

    def setData(self, t: F64, v: F64) -> None:
        self.xData, self.yData = t, v
        self.polys = polylines(t, v)
        self.span = None
        if len(t) and len(v):
            lo, hi = float(np.fmin.reduce(v)), float(np.fmax.reduce(v))
            if math.isfinite(lo) and math.isfinite(hi):
                self.span = (float(t[0]), float(t[-1]), lo, hi)

    def y_bounds(self) -> tuple[float, float] | None:
        return None if self.span is None else (self.span[2], self.span[3])

    def boundingRect(self) -> QRectF:
        return QRectF()

    def paint(self, *args: Any) -> None:
        return None


class CurveSet(pg.GraphicsObject):  # type: ignore[misc]
    """All the live curves of one plot, in data coordinates, stroked in insertion order."""

    def __init__(self) -> None:
        super().__init__()
        self.curves: dict[Hashable, CurveHandle] = {}
        self._rect = QRectF()

    def add(self, key: Hashable, name: str | None, pen: QPen) -> CurveHandle:
        h = self.curves[key] = CurveHandle(self, name, pen)
        return h

    def remove(self, key: Hashable) -> CurveHandle | None:
        h = self.curves.pop(key, None)
        if h is not None:
            h.setParentItem(None)
            if h.scene() is not None:
                h.scene().removeItem(h)
            self.changed()
        return h

    def changed(self) -> None:
        """Call after setting data: recompute the bounds and schedule one repaint."""
        spans = [h.span for h in self.curves.values() if h.span is not None]
        if spans:
            x0 = min(s[0] for s in spans)
            x1 = max(s[1] for s in spans)
            y0 = min(s[2] for s in spans)
            y1 = max(s[3] for s in spans)
            rect = padded_rect(self.getViewBox(), x0, x1, y0, y1, 3)
        else:
            rect = QRectF()
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, p: QPainter, *args: Any) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for h in self.curves.values():
            if h.polys and h.isVisible():
                p.setPen(h.opts["pen"])
                for poly in h.polys:
                    p.drawPolyline(poly)
