"""Time plots shared by the tabs: one pyqtgraph PlotItem with a date axis, a curve per GPU,
dashed nominal lines, a "not reported by this GPU" note and a crosshair.

Kept cheap per DESIGN.md: curves get NumPy arrays already reduced to the plot's pixel width,
thin cosmetic pens, no antialiasing, clip-to-view; items are created once and reused, so a
redraw is only ``setData`` calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QPointF, QRectF, Qt

from gpufleet.ui.theme import REASON_BANDS, Theme, gpu_colour, gpu_pen

F64 = npt.NDArray[np.float64]


def style_axis(axis: pg.AxisItem, text: str) -> None:
    """Units go in the label text: pyqtgraph's SI prefixing turns "MHz" into "kMHz"."""
    axis.enableAutoSIPrefix(False)
    axis.setLabel(text)


def opaque_grid(plot: pg.PlotItem, theme: Theme, x: bool = True, y: bool = True) -> None:
    """Grid lines in an opaque dim colour: pyqtgraph's showGrid(alpha=...) blends every line,
    which made the grid the most expensive thing on screen (DESIGN.md budgets)."""
    for name, on in (("bottom", x), ("left", y)):
        ax = plot.getAxis(name)
        ax.setPen(pg.mkPen(theme.grid))
        ax.setTextPen(pg.mkPen(theme.fg))
        ax.setGrid(255 if on else False)


@dataclass
class _Nominal:
    curve: pg.PlotCurveItem
    text: pg.TextItem
    value: float | None = None


class TimePlot:
    """A PlotItem in a GraphicsLayout with curves keyed by anything hashable."""

    def __init__(
        self,
        layout: pg.GraphicsLayout,
        row: int,
        y_label: str,
        theme: Theme,
        *,
        legend: bool = True,
        height: int | None = None,
    ) -> None:
        self.theme = theme
        self.plot: pg.PlotItem = layout.addPlot(
            row=row, col=0, axisItems={"bottom": pg.DateAxisItem(orientation="bottom")}
        )
        if height:
            self.plot.setMinimumHeight(height)
        opaque_grid(self.plot, theme)
        style_axis(self.plot.getAxis("left"), y_label)
        self.plot.getAxis("left").setWidth(62)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.vb: pg.ViewBox = self.plot.getViewBox()
        self.vb.setMouseEnabled(x=True, y=False)
        # The y range is computed from the data handed to setData (see fit_y): pyqtgraph's
        # auto-range would rescan every item and zooms a constant 2619 MHz to ±0.4 MHz.
        self.vb.disableAutoRange()
        self._ylo = np.inf
        self._yhi = -np.inf
        self.y_span_frac = 0.25  # the y range is at least this share of the top value tall
        self.y_floor: float | None = 0.0
        self.legend: pg.LegendItem | None = None
        if legend:
            self.legend = self.plot.addLegend(offset=(-8, 4), colCount=4)
            self.legend.setLabelTextColor(theme.fg)
            self.legend.setBrush(pg.mkBrush(theme.bg + "c0"))
        self.curves: dict[Hashable, pg.PlotCurveItem] = {}
        self.nominals: dict[Hashable, _Nominal] = {}
        self.note = pg.TextItem("", color=theme.muted, anchor=(0.5, 0.5))
        self.note.setZValue(20)
        self.plot.addItem(self.note, ignoreBounds=True)
        self.vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.muted, width=1))
        self.vline.setVisible(False)
        self.plot.addItem(self.vline, ignoreBounds=True)

    # -- curves ----------------------------------------------------------------------------

    def curve(self, key: Hashable, name: str, pen: object, legend: bool = True) -> pg.PlotCurveItem:
        c = self.curves.get(key)
        if c is None:
            # A bare PlotCurveItem: the data arrive clipped to the range and reduced to the
            # pixel width already (LiveBuffers.series), so PlotDataItem's own clipping and
            # downsampling would only cost time. NaN breaks the line (connect="finite").
            # A curve without a name stays out of the legend (pyqtgraph adds named ones).
            c = pg.PlotCurveItem(name=name if legend else None, pen=pen, connect="finite")
            self.plot.addItem(c)
            self.curves[key] = c
        return c

    def set_curve(
        self, key: Hashable, name: str, pen: object, t: F64, v: F64, legend: bool = True
    ) -> None:
        c = self.curve(key, name, pen, legend)
        if legend and c.name() != name and self.legend is not None:
            # A renamed curve (another host selected) gets a fresh legend entry.
            self.legend.removeItem(c)
            c.opts["name"] = name
            self.legend.addItem(c, name)
        # Visibility stays the user's: clicking a legend entry hides or shows that GPU.
        c.setData(t, v)
        self._grow(v)

    def retain(self, keys: Sequence[Hashable]) -> None:
        """Remove curves and nominal lines whose keys are not in ``keys``."""
        keep = set(keys)
        for k in [k for k in self.curves if k not in keep]:
            c = self.curves.pop(k)
            if self.legend is not None:
                self.legend.removeItem(c)
            self.plot.removeItem(c)
        for k in [k for k in self.nominals if k not in keep]:
            n = self.nominals.pop(k)
            self.plot.removeItem(n.curve)
            self.plot.removeItem(n.text)

    def set_nominal(
        self,
        key: Hashable,
        value: float | None,
        label: str,
        t0: float,
        t1: float,
        colour: str | None = None,
        style: Qt.PenStyle = Qt.PenStyle.DashLine,
        below: bool = False,
    ) -> None:
        """A horizontal reference line across the view (it counts for auto-range, so the
        max clock or the power cap is always on screen), with its label at the left."""
        n = self.nominals.get(key)
        if n is None:
            pen = pg.mkPen(colour or self.theme.nominal, width=1, style=style)
            n = _Nominal(
                pg.PlotCurveItem(pen=pen),
                pg.TextItem("", color=colour or self.theme.muted, anchor=(0, 1)),
            )
            self.plot.addItem(n.curve)
            self.plot.addItem(n.text, ignoreBounds=True)
            self.nominals[key] = n
        if value is None:
            n.curve.setVisible(False)
            n.text.setVisible(False)
            return
        n.curve.setVisible(True)
        n.text.setVisible(True)
        n.curve.setData(np.array([t0, t1], dtype=np.float64), np.array([value, value]))
        n.curve.setZValue(-5)  # under the live curves that run at the limit
        self._grow(np.array([value]))
        n.text.setText(label)
        n.text.setAnchor((0, 0) if below else (0, 1))
        n.text.setPos(t0 + (t1 - t0) * 0.005, value)

    def _grow(self, v: F64) -> None:
        if len(v):
            fin = v[np.isfinite(v)]
            if len(fin):
                self._ylo = min(self._ylo, float(fin.min()))
                self._yhi = max(self._yhi, float(fin.max()))

    def fit_y(self, min_span_frac: float | None = None, floor: float | None = -1.0) -> None:
        """Set the y range to what this refresh drew, at least ``min_span_frac`` of the top
        value tall (a flat line stays a flat line, not noise blown up), never below
        ``floor``; then start collecting afresh for the next refresh."""
        min_span_frac = self.y_span_frac if min_span_frac is None else min_span_frac
        floor = self.y_floor if floor == -1.0 else floor
        lo, hi = self._ylo, self._yhi
        self._ylo, self._yhi = np.inf, -np.inf
        if not np.isfinite(lo) or not np.isfinite(hi):
            lo, hi = 0.0, 1.0
        span = hi - lo
        need = max(abs(hi) * min_span_frac, 1e-6)
        if span < need:
            lo = hi - need
        if floor is not None and lo < floor:
            lo = floor
        pad = (hi - lo) * 0.06
        lo2 = lo - pad if floor is None or lo - pad >= floor else floor
        # Extra room at the top for the nominal lines' labels and the legend.
        self.vb.setYRange(lo2, hi + 2.5 * pad, padding=0)

    def set_note(self, text: str) -> None:
        """A centred note, e.g. "not reported by this GPU" instead of a misleading flat 0."""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        if text:
            (x0, x1), (y0, y1) = self.vb.viewRange()
            self.note.setPos((x0 + x1) / 2, (y0 + y1) / 2)

    def set_x_range(self, t0: float, t1: float) -> None:
        self.vb.setXRange(t0, t1, padding=0)

    def pixel_width(self) -> int:
        return max(100, int(self.vb.width()))


class ReasonBands:
    """Throttle reasons as coloured bands, one row per GPU, on the shared time axis.

    Drawn as one ImageItem (GPU rows × pixel columns), so its cost does not grow with the
    number of samples or of reason changes."""

    def __init__(self, layout: pg.GraphicsLayout, row: int, theme: Theme) -> None:
        self.theme = theme
        self.plot: pg.PlotItem = layout.addPlot(
            row=row, col=0, axisItems={"bottom": pg.DateAxisItem(orientation="bottom")}
        )
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        style_axis(
            self.plot.getAxis("left"), QCoreApplication.translate("Plots", "throttle reasons")
        )
        self.plot.getAxis("left").setWidth(62)
        self.vb: pg.ViewBox = self.plot.getViewBox()
        self.vb.setMouseEnabled(x=True, y=False)
        opaque_grid(self.plot, theme, y=False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.muted, width=1))
        self.vline.setVisible(False)
        self.plot.addItem(self.vline, ignoreBounds=True)
        self.n_rows = 0
        self._colours = np.array(
            [[0, 0, 0, 0]] + [list(pg.mkColor(c).getRgb()) for _, c, _ in REASON_BANDS],
            dtype=np.uint8,
        )
        self.any_band = False

    def update(
        self, gpus: Sequence[int], masks: Sequence[tuple[F64, F64]], t0: float, t1: float
    ) -> None:
        """``masks[i]`` = (times, clock_reasons values) of GPU ``gpus[i]``."""
        n_bins = max(50, min(2000, int(self.vb.width())))
        rows = max(1, len(gpus))
        cat = np.zeros((rows, n_bins), dtype=np.uint8)
        span = max(1e-9, t1 - t0)
        for r, (t, v) in enumerate(masks):
            ok = np.isfinite(v) & (t >= t0) & (t <= t1)
            if not ok.any():
                continue
            idx = np.minimum(((t[ok] - t0) / span * n_bins).astype(np.int64), n_bins - 1)
            bits = np.zeros(n_bins, dtype=np.int64)
            np.bitwise_or.at(bits, idx, v[ok].astype(np.int64))
            # Lowest category number = most serious; paint the least serious first.
            for ci in range(len(REASON_BANDS), 0, -1):
                cat[r, (bits & REASON_BANDS[ci - 1][2]) != 0] = ci
        self.any_band = bool(cat.any())
        # A thin gap between GPU rows: each row is drawn 3 pixels-rows tall, the middle ones
        # coloured, so neighbouring bands stay apart.
        img = self._colours[np.repeat(cat, 4, axis=0)]
        img[3::4] = 0
        self.image.setImage(img, autoLevels=False)
        self.image.setRect(QRectF(t0, -0.5, span, rows))
        if rows != self.n_rows:
            self.n_rows = rows
            ax = self.plot.getAxis("left")
            gpu = QCoreApplication.translate("Plots", "GPU {n}")
            ax.setTicks([[(i + 0.375, gpu.format(n=g)) for i, g in enumerate(gpus)]])
            self.vb.setYRange(-0.5, rows - 0.5, padding=0.02)
            self.plot.setMaximumHeight(40 + 18 * rows)
            self.plot.setMinimumHeight(40 + 14 * rows)

    def set_x_range(self, t0: float, t1: float) -> None:
        self.vb.setXRange(t0, t1, padding=0)


class Crosshair:
    """A vertical line on every plot of a tab, following the mouse, with a read-out of the
    values at that moment (the text comes from the tab)."""

    def __init__(
        self,
        plots: Sequence[TimePlot | ReasonBands],
        readout: Callable[[float], str],
        theme: Theme,
    ) -> None:
        self.plots = list(plots)
        self.readout = readout
        self.text = pg.TextItem("", anchor=(0, 0), color=theme.fg, fill=pg.mkBrush(theme.bg + "e0"))
        self.text.setZValue(50)
        self.plots[0].plot.addItem(self.text, ignoreBounds=True)
        self.text.setVisible(False)
        for p in self.plots:
            p.plot.scene().sigMouseMoved.connect(self._moved)
        self.t: float | None = None

    def _moved(self, pos: QPointF) -> None:
        hit = None
        for p in self.plots:
            if p.plot.sceneBoundingRect().contains(pos):
                hit = p
                break
        if hit is None:
            self.hide()
            return
        t = float(hit.vb.mapSceneToView(pos).x())
        self.show_at(t)

    def show_at(self, t: float) -> None:
        self.t = t
        for p in self.plots:
            p.vline.setPos(t)
            p.vline.setVisible(True)
        html = self.readout(t)
        top = self.plots[0]
        (x0, x1), (y0, y1) = top.vb.viewRange()
        self.text.setHtml(html)
        # Keep the box inside the plot: flip to the left of the line in the right third.
        self.text.setAnchor((1, 0) if t > x0 + (x1 - x0) * 0.66 else (0, 0))
        # Below the legend row, which sits at the top of the plot.
        self.text.setPos(t, y1 - (y1 - y0) * 0.12)
        self.text.setVisible(bool(html))

    def hide(self) -> None:
        self.t = None
        self.text.setVisible(False)
        for p in self.plots:
            p.vline.setVisible(False)


def clock_text(t: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t))


def swatch(i: int) -> str:
    return f'<span style="color:{gpu_colour(i)}">■</span>'


__all__ = ["Crosshair", "ReasonBands", "TimePlot", "clock_text", "gpu_pen", "style_axis", "swatch"]
