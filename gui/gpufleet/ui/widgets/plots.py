"""Time plots shared by the tabs: one pyqtgraph PlotItem with a date axis, a curve per GPU,
dashed nominal lines, a "not reported by this GPU" note and a crosshair.

Kept cheap (the redraw budget in docs/benchmarks.md): curves get NumPy arrays already reduced
to the plot's pixel width, thin cosmetic pens, no antialiasing, clip-to-view; items are
created once and reused, so a redraw is only ``setData`` calls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QLabel

from gpufleet.core.alerts.throttle import reason_bits
from gpufleet.ui.widgets.curveset import CurveHandle, CurveSet, padded_rect
from gpufleet.ui.widgets.legend import FastLegend
from gpufleet.ui.widgets.theme import REASON_BANDS, Theme, gpu_colour, gpu_pen

F64 = npt.NDArray[np.float64]


def style_axis(axis: pg.AxisItem, text: str) -> None:
    """Units go in the label text: pyqtgraph's SI prefixing turns "MHz" into "kMHz"."""
    axis.enableAutoSIPrefix(False)
    set_axis_label(axis, text)


def set_axis_label(axis: pg.AxisItem, text: str) -> None:
    """Set an axis label only when it changes: a new label resizes the axis and re-lays out
    the plot."""
    if axis.labelText != text or not axis.label.isVisible():
        axis.setLabel(text)


def set_label_text(label: QLabel, text: str) -> None:
    """QLabel.setText only when the text changes (a rich-text label re-lays out, and a
    height change moves the plots below it)."""
    if label.text() != text:
        label.setText(text)


class _OpaqueGrid:
    """Grid lines and ticks pre-blended over the plot background.

    pyqtgraph fades grid lines with alpha (the minor ones always, whatever ``setGrid`` says),
    and an alpha-blended line across the plot is a slow path of Qt's raster engine: measured
    here ~4 ms per axis paint, against ~0.5 ms with the same colours made opaque
    (docs/benchmarks.md, GUI). The background is solid, so the look does not change."""

    bg: QColor | None = None
    _pens: dict[int, QPen]

    def generateDrawSpecs(self, p: QPainter) -> Any:
        specs = super().generateDrawSpecs(p)  # type: ignore[misc]
        if specs is None or self.bg is None:
            return specs
        axis, ticks, texts = specs
        return axis, [(self._opaque(pen), a, b) for pen, a, b in ticks], texts

    def _opaque(self, pen: QPen) -> QPen:
        c = pen.color()
        if c.alpha() == 255 or self.bg is None:
            return pen
        if not hasattr(self, "_pens"):
            self._pens = {}
        key = c.rgba()
        hit = self._pens.get(key)
        if hit is None:
            a, bg = c.alphaF(), self.bg
            mixed = QColor.fromRgbF(
                c.redF() * a + bg.redF() * (1 - a),
                c.greenF() * a + bg.greenF() * (1 - a),
                c.blueF() * a + bg.blueF() * (1 - a),
            )
            hit = self._pens[key] = pg.mkPen(mixed)
        return hit


class GridAxis(_OpaqueGrid, pg.AxisItem):  # type: ignore[misc]
    """A value axis whose grid lines are opaque (see _OpaqueGrid)."""


class GridDateAxis(_OpaqueGrid, pg.DateAxisItem):  # type: ignore[misc]
    """The time axis, with opaque grid lines (see _OpaqueGrid)."""


def grid_axes() -> dict[str, pg.AxisItem]:
    return {"bottom": GridDateAxis(orientation="bottom"), "left": GridAxis(orientation="left")}


def opaque_grid(plot: pg.PlotItem, theme: Theme, x: bool = True, y: bool = True) -> None:
    """Grid lines in a dim colour, made opaque over the background (see _OpaqueGrid)."""
    for name, on in (("bottom", x), ("left", y)):
        ax = plot.getAxis(name)
        ax.setPen(pg.mkPen(theme.grid))
        ax.setTextPen(pg.mkPen(theme.fg))
        ax.setGrid(255 if on else False)
        if isinstance(ax, _OpaqueGrid):
            ax.bg = QColor(theme.bg)
            ax._pens = {}
            # Under the view box (z -100), so the curves are drawn over the grid lines (an
            # opaque grid line over a flat curve on the same pixel row would hide it).
            plot.getAxis(name).setZValue(-200)  # the QGraphicsItem side of the same axis


class LiveCurve(pg.PlotCurveItem):  # type: ignore[misc]
    """A PlotCurveItem whose bounds are computed once per ``setData``.

    pyqtgraph recomputes a curve's bounds (nanmin/nanmax under a warnings filter, then the
    pixel padding through the item's device transform) after every data change and every
    change of the view range: ~0.5 ms per curve, more than drawing it. Here the bounds come
    from one NaN-ignoring reduction at ``setData`` and the padding from the view's pixel
    size."""

    _span: tuple[float, float, float, float] | None = None
    _boundingRect: QRectF | None

    def setData(self, *args: Any, **kwargs: Any) -> None:
        super().setData(*args, **kwargs)
        x, y = self.xData, self.yData
        self._span = None
        if x is not None and y is not None and len(x) and len(y):
            lo, hi = float(np.fmin.reduce(y)), float(np.fmax.reduce(y))
            if math.isfinite(lo) and math.isfinite(hi):
                self._span = (float(x[0]), float(x[-1]), lo, hi)

    def y_bounds(self) -> tuple[float, float] | None:
        return None if self._span is None else (self._span[2], self._span[3])

    def dataBounds(
        self, ax: int, frac: float = 1.0, orthoRange: Any = None
    ) -> tuple[float | None, float | None]:
        if frac < 1.0 or orthoRange is not None or self.opts["fillLevel"] is not None:
            return super().dataBounds(ax, frac, orthoRange)  # type: ignore[no-any-return]
        if self._span is None:
            return None, None
        return (self._span[0], self._span[1]) if ax == 0 else (self._span[2], self._span[3])

    def boundingRect(self) -> QRectF:
        if self._boundingRect is None:
            if self._span is None or self.opts["fillLevel"] is not None:
                return super().boundingRect()  # type: ignore[no-any-return]
            x0, x1, y0, y1 = self._span
            self._boundingRect = padded_rect(self.getViewBox(), x0, x1, y0, y1, 2)
        return self._boundingRect


@dataclass
class _Nominal:
    curve: pg.PlotCurveItem
    text: pg.TextItem
    value: float | None = None
    drawn: tuple[float, float, float] | None = None
    label: tuple[str, bool] | None = None


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
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=0, axisItems=grid_axes())
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
        self.legend: FastLegend | None = None
        if legend:
            self.legend = FastLegend(
                self.vb, fg=theme.fg, bg=theme.bg, muted=theme.muted, border=theme.grid
            )
        # Live curves (set_curve) share one item; curve() still makes a PlotCurveItem for
        # the few that need one (fills between curves on the cost tab).
        self.set = CurveSet()
        self.plot.addItem(self.set)
        self._set_dirty = False
        self.curves: dict[Hashable, LiveCurve | CurveHandle] = {}
        self.nominals: dict[Hashable, _Nominal] = {}
        self.note = pg.TextItem("", color=theme.muted, anchor=(0.5, 0.5))
        self._note_text = ""
        self._title: str | None = None
        self.note.setZValue(20)
        self.plot.addItem(self.note, ignoreBounds=True)
        self.vline = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.muted, width=1))
        self.vline.setVisible(False)
        self.plot.addItem(self.vline, ignoreBounds=True)

    # -- curves ----------------------------------------------------------------------------

    def curve(self, key: Hashable, name: str, pen: object, legend: bool = True) -> LiveCurve:
        """A curve as its own PlotCurveItem (for a FillBetweenItem); ``set_curve`` is the
        cheap path for plain lines."""
        c = self.curves.get(key)
        if isinstance(c, CurveHandle):
            self._drop(key)
            c = None
        if c is None:
            # A bare PlotCurveItem: the data arrive clipped to the range and reduced to the
            # pixel width already (LiveBuffers.series), so PlotDataItem's own clipping and
            # downsampling would only cost time. NaN breaks the line (connect="finite").
            c = LiveCurve(pen=pen, connect="finite")
            self.plot.addItem(c)
            self.curves[key] = c
            if legend and self.legend is not None:
                self.legend.addItem(c, name)
        return c

    def set_curve(
        self, key: Hashable, name: str, pen: QPen, t: F64, v: F64, legend: bool = True
    ) -> None:
        """Show (t, v) as the curve ``key``; drawn with the plot's other live curves by one
        item (see curveset.py)."""
        h = self.curves.get(key)
        if isinstance(h, LiveCurve):
            self._drop(key)
            h = None
        if h is None:
            h = self.set.add(key, name if legend else None, pen)
            self.curves[key] = h
            if legend and self.legend is not None:
                self.legend.addItem(h, name)
        else:
            h.opts["pen"] = pen
            if legend and h.name() != name and self.legend is not None:
                # A renamed curve (another host selected) gets a fresh legend entry.
                self.legend.removeItem(h)
                h.opts["name"] = name
                self.legend.addItem(h, name)
        # Visibility stays the user's: clicking a legend entry hides or shows that GPU.
        h.setData(t, v)
        self._set_dirty = True
        yb = h.y_bounds()
        if yb is not None:
            self._ylo = min(self._ylo, yb[0])
            self._yhi = max(self._yhi, yb[1])

    def _flush_set(self) -> None:
        if self._set_dirty:
            self._set_dirty = False
            self.set.changed()

    def _drop(self, key: Hashable) -> None:
        c = self.curves.pop(key)
        if self.legend is not None:
            self.legend.removeItem(c)
        if isinstance(c, CurveHandle):
            self.set.remove(key)
        else:
            self.plot.removeItem(c)

    def retain(self, keys: Sequence[Hashable]) -> None:
        """Remove curves and nominal lines whose keys are not in ``keys``."""
        keep = set(keys)
        for k in [k for k in self.curves if k not in keep]:
            self._drop(k)
        for k in [k for k in self.nominals if k not in keep]:
            n = self.nominals.pop(k)
            self.plot.removeItem(n.curve)
            self.plot.removeItem(n.text)
        self._flush_set()

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
                LiveCurve(pen=pen),
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
        self._grow(np.array([value]))
        # Only what changed: a text item re-lays out its document on every setText.
        if n.drawn != (value, t0, t1):
            n.drawn = (value, t0, t1)
            n.curve.setData(np.array([t0, t1], dtype=np.float64), np.array([value, value]))
            n.curve.setZValue(-5)  # under the live curves that run at the limit
            n.text.setPos(t0 + (t1 - t0) * 0.005, value)
        if n.label != (label, below):
            n.label = (label, below)
            n.text.setText(label)
            n.text.setAnchor((0, 0) if below else (0, 1))

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
        self._flush_set()
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
        hi2 = hi + 2.5 * pad
        # In a short plot (the memory clock's) that was less than a label's height, and the
        # "max 2 619 MHz" written above its line was cut: leave the label's pixels free.
        h = float(self.vb.height())
        if h > 0 and any(
            n.text.isVisible() and not n.label[1] for n in self.nominals.values() if n.label
        ):
            frac = min(0.5, 22.0 / h)
            hi2 = max(hi2, hi + (hi - lo2) * frac / (1.0 - frac))
        # Snap outwards to a 1/25 of the span's decade: the range (and with it the axis's
        # ticks, labels and grid, ~1.5 ms to lay out) then changes only when the data move
        # by a visible amount, not with every new sample's noise.
        step = 10.0 ** math.floor(math.log10(max(hi2 - lo2, 1e-9))) / 25
        lo3 = math.floor(lo2 / step) * step
        if floor is not None and lo3 < floor <= lo2:
            lo3 = floor
        hi3 = math.ceil(hi2 / step) * step
        (cur_lo, cur_hi) = self.vb.viewRange()[1]
        if (cur_lo, cur_hi) != (lo3, hi3):
            self.vb.setYRange(lo3, hi3, padding=0)

    def set_note(self, text: str) -> None:
        """A centred note, e.g. "not reported by this GPU" instead of a misleading flat 0."""
        if text != self._note_text:
            self._note_text = text
            self.note.setText(text)
            self.note.setVisible(bool(text))
        if text:
            (x0, x1), (y0, y1) = self.vb.viewRange()
            self.note.setPos((x0 + x1) / 2, (y0 + y1) / 2)

    def set_title(self, html: str | None) -> None:
        """The plot's title, set only when it changes: a new title re-lays out the whole
        plot (axes re-tick, every item moves)."""
        if html != self._title:
            self._title = html
            self.plot.setTitle(html)

    def set_x_range(self, t0: float, t1: float) -> None:
        self.vb.setXRange(t0, t1, padding=0)

    def pixel_width(self) -> int:
        return max(100, int(self.vb.width()))

    def max_points(self) -> int:
        """Points per curve for LiveBuffers.series: a min and a max per 3 pixels, per 5
        pixels when the plot holds more than 8 curves (16 lines on top of one another show
        no finer detail). Stroking costs ~0.2 µs per point (docs/benchmarks.md, GUI);
        at these densities a one-sample spike still shows and a noisy line reads as a band."""
        n = len(self.set.curves)
        per_px = 2 / 3 if n <= 8 else 2 / 5
        return max(64, int(self.pixel_width() * per_px))


class ReasonBands:
    """Throttle reasons as coloured bands, one row per GPU, on the shared time axis.

    Drawn as one ImageItem (GPU rows × pixel columns), so its cost does not grow with the
    number of samples or of reason changes."""

    def __init__(self, layout: pg.GraphicsLayout, row: int, theme: Theme) -> None:
        self.theme = theme
        self.plot: pg.PlotItem = layout.addPlot(row=row, col=0, axisItems=grid_axes())
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
            ok = np.isfinite(v) & (t >= t0 - span) & (t <= t1 + span)
            if not ok.any():
                continue
            ts, vs = t[ok], reason_bits(v[ok])
            # A sample's reasons held over the interval it closes (back to the previous
            # sample, at most a few intervals for a gap in the data): painting each sample
            # as one bin drew a comb of 1-px bars when the range has more pixels than samples.
            step = float(np.median(np.diff(ts))) if len(ts) > 1 else 1.0
            back = np.empty_like(ts)
            back[0] = step
            back[1:] = np.minimum(np.diff(ts), 3 * step)
            lo = np.clip(((ts - back - t0) / span * n_bins).astype(np.int64), 0, n_bins)
            hi = np.clip(np.ceil((ts - t0) / span * n_bins).astype(np.int64), 0, n_bins)
            # Lowest category number = most serious; paint the least serious first.
            for ci in range(len(REASON_BANDS), 0, -1):
                on = (vs & REASON_BANDS[ci - 1][2]) != 0
                if not on.any():
                    continue
                cover = np.zeros(n_bins + 1, dtype=np.int64)
                np.add.at(cover, lo[on], 1)
                np.add.at(cover, hi[on], -1)
                cat[r, np.cumsum(cover[:-1]) > 0] = ci
        self.any_band = bool(cat.any())
        # Each GPU row is 4 pixel-rows: the middle two coloured, so neighbouring bands stay
        # apart and each band is centred on its GPU's label (the band used to sit a quarter
        # row below it and the label a quarter above: half a row off).
        img = self._colours[np.repeat(cat, 4, axis=0)]
        img[0::4] = 0
        img[3::4] = 0
        self.image.setImage(img, autoLevels=False)
        self.image.setRect(QRectF(t0, -0.5, span, rows))
        if rows != self.n_rows:
            self.n_rows = rows
            ax = self.plot.getAxis("left")
            gpu = QCoreApplication.translate("Plots", "GPU {n}")
            ax.setTicks([[(float(i), gpu.format(n=g)) for i, g in enumerate(gpus)]])
            self.vb.setYRange(-0.5, rows - 0.5, padding=0.02)
            self.plot.setMaximumHeight(40 + 18 * rows)
            self.plot.setMinimumHeight(40 + 14 * rows)

    def set_x_range(self, t0: float, t1: float) -> None:
        self.vb.setXRange(t0, t1, padding=0)


class _LeaveFilter(QObject):
    def __init__(self, on_leave: Callable[[], None]) -> None:
        super().__init__()
        self.on_leave = on_leave

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.on_leave()
        return False


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
        # The scene hears only moves inside it: leaving the plots' widget must hide the
        # line and the read-out too, or they stay where the pointer left.
        self._leave = _LeaveFilter(self.hide)
        for view in self.plots[0].plot.scene().views():
            view.viewport().installEventFilter(self._leave)
            view.installEventFilter(self._leave)

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
        # Keep the box inside the plot: right of the line where it fits, else left of it,
        # else against the plot's left edge (a narrow window, a long read-out).
        try:
            width = self.text.boundingRect().width() * float(top.vb.viewPixelSize()[0])
        except Exception:  # a view not laid out yet has no pixel size
            width = (x1 - x0) * 0.34
        if t + width <= x1:
            anchor, x = (0, 0), t
        elif t - width >= x0:
            anchor, x = (1, 0), t
        else:
            anchor, x = (0, 0), x0
        self.text.setAnchor(anchor)
        # Below the legend row, which sits at the top of the plot.
        self.text.setPos(x, y1 - (y1 - y0) * 0.12)
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
