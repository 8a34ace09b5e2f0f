"""The common frame of a plot tab: a pyqtgraph layout of stacked time plots, a crosshair, and
one sentence under the plots that says what the data shows.

Tabs are redrawn by the main window's timer only while visible (``refresh``); they never
subscribe to data themselves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QLabel, QVBoxLayout, QWidget

from gpufleet.core.live.buffers import Series
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.wire.gpu_kind import short_index
from gpufleet.ui.i18n import unsupported_text
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.plots import Crosshair, ReasonBands, TimePlot, clock_text, swatch
from gpufleet.ui.widgets.theme import Theme, gpu_pen, gpu_pen_secondary

F64 = npt.NDArray[np.float64]

# lupdate extracts translate("Context", "text") calls.
translate = QCoreApplication.translate

NOT_REPORTED = QT_TRANSLATE_NOOP("Tab", "not reported by this GPU")
SENTENCE_EVERY_S = 2.0

# A metric's value at the crosshair's time for one GPU (see PlotTab.gpu_readout).
ValueAt = Callable[[str], float | None]


class Tab(QWidget):
    """Base of every tab. ``title`` uses ``&&`` for a literal ampersand (``&`` alone is a
    keyboard mnemonic marker in Qt tab labels)."""

    title = "?"  # marked with QT_TRANSLATE_NOOP("Tabs", ...); the window translates it
    # The user dragged or zoomed the time axis: the window stops following live.
    range_changed_by_user = Signal(float, float)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSpacing(4)
        self.sentence = QLabel("")
        self.sentence.setWordWrap(True)
        self.sentence.setTextFormat(Qt.TextFormat.RichText)
        self.sentence.setObjectName("sentence")
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.last_view: View | None = None
        self._sentence_key: object = None
        self._sentence_at = 0.0
        self.populated = False  # True once a refresh drew real data (tests wait on it)
        self._drawn_key: object = None

    def refresh(self, view: View) -> None:
        raise NotImplementedError

    def change_key(self, view: View) -> object:
        """What this tab's picture depends on: the redraw timer skips ``refresh`` while it is
        unchanged (the data arrive at 1 Hz, the timer runs faster; the budgets in
        docs/benchmarks.md)."""
        return (
            view.host,
            view.t0,
            view.t1,
            view.live.version(view.host),
            self.width(),
            self.height(),
        )

    def refresh_if_changed(self, view: View) -> bool:
        """``refresh`` unless nothing it depends on changed since the last one; True when it
        redrew."""
        key = self.change_key(view)
        if key == self._drawn_key:
            return False
        self.refresh(view)
        self._drawn_key = key
        return True

    def invalidate(self) -> None:
        """Make the next ``refresh_if_changed`` redraw."""
        self._drawn_key = None

    def sentence_due(self, view: View) -> bool:
        """The sentence needs full-resolution series: recompute it every 2 s, or at once
        when the host or the range length changed, not on every redraw."""
        key = (view.host, round(view.t1 - view.t0))
        now = time.monotonic()
        if key != self._sentence_key or now - self._sentence_at > SENTENCE_EVERY_S:
            self._sentence_key, self._sentence_at = key, now
            return True
        return False

    def set_sentence(self, html: str) -> None:
        if self.sentence.text() != html:
            self.sentence.setText(html)


class PlotTab(Tab):
    """A tab made of TimePlots (and optional reason bands) on one linked time axis."""

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(theme.bg)
        self.glw.ci.setSpacing(2)
        # A few dozen items whose bounds change on every redraw: a BSP index would be
        # rebuilt for nothing (Qt's advice for dynamic scenes).
        self.glw.scene().setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        # pyqtgraph caches the view's background in a pixmap the size of the viewport (~3 MiB
        # per tab at 1600 × 1000, ~18 MiB for the six plot tabs once shown); it is one flat
        # colour, which is as fast to fill as to blit (docs/benchmarks.md, "Issue 28: GUI
        # memory, session 6").
        self.glw.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
        self.box.addWidget(self.glw, 1)
        self.box.addWidget(self.sentence)
        self.plots: list[TimePlot | ReasonBands] = []
        self.crosshair: Crosshair | None = None
        self._setting_range = False

    def add_plot(self, y_label: str, *, legend: bool = True, height: int | None = None) -> TimePlot:
        p = TimePlot(
            self.glw.ci, len(self.plots), y_label, self.theme, legend=legend, height=height
        )
        self._link(p)
        return p

    def add_bands(self) -> ReasonBands:
        b = ReasonBands(self.glw.ci, len(self.plots), self.theme)
        self._link(b)
        return b

    def _link(self, p: TimePlot | ReasonBands) -> None:
        if self.plots:
            p.plot.setXLink(self.plots[0].plot)
            # Only the bottom plot shows the time labels; the others share its axis.
            self.plots[-1].plot.getAxis("bottom").setStyle(showValues=False)
        else:
            p.vb.sigRangeChangedManually.connect(self._user_range)
        self.plots.append(p)

    def finish(self) -> None:
        self.crosshair = Crosshair(self.plots, self.readout, self.theme)

    def _user_range(self, *_: object) -> None:
        if self._setting_range:
            return
        (x0, x1), _ = self.plots[0].vb.viewRange()
        self.range_changed_by_user.emit(float(x0), float(x1))

    def set_range(self, t0: float, t1: float) -> None:
        self._setting_range = True
        try:
            self.plots[0].vb.setXRange(t0, t1, padding=0)
        finally:
            self._setting_range = False

    def readout(self, t: float) -> str:
        return clock_text(t)

    def gpu_readout(self, t: float, line: Callable[[int, ValueAt], str]) -> str:
        """The crosshair readout of a per-GPU tab: the time in bold, then one line per GPU of
        the selected host, led by its swatch and name; ``line(gpu, at)`` writes the rest of
        that GPU's line, ``at(metric)`` being the metric's value at ``t`` (None: not
        reported)."""
        v = self.last_view
        if v is None or v.host is None:
            return ""
        live, host, history = v.live, v.host, v.history
        lines = [f"<b>{clock_text(t)}</b>"]
        for g in v.gpus():

            def at(metric: str, g: int = g) -> float | None:
                x = live.value_at(host, g, metric, t)
                if x is None and history is not None:
                    # Before the live window (6 h / 24 h ranges): what the store answered.
                    x = history.value_at(host, g, metric, t)
                return x

            lines.append(f"{swatch(g)} {gpu_label(g)} {line(g, at)}")
        return "<br>".join(lines)

    # -- helpers for subclasses ------------------------------------------------------------

    def draw_metric(
        self,
        plot: TimePlot,
        view: View,
        metric: str,
        scale: float = 1.0,
        key_prefix: str = "",
        name_suffix: str = "",
        style: Qt.PenStyle | None = None,
        legend: bool = True,
        secondary: bool = False,
        steps: bool = False,
        mean_over: float | None = None,
    ) -> tuple[list[int], list[Series]]:
        """One curve per GPU of the selected host; returns which GPUs had any value.
        ``mean_over``: the series has a value only every that many seconds, each the mean
        since the one before (drawn as steps over their periods, see period_steps)."""
        gpus = view.gpus()
        series = view.series_many(metric, gpus, plot.max_points())
        reported = []
        for g, s in zip(gpus, series, strict=True):
            v = s.v * scale if scale != 1.0 else s.v
            pen = gpu_pen_secondary(g, self.theme.dark) if secondary else gpu_pen(g, 1.0, style)
            t_draw = s.t
            if steps:
                t_draw, v = step_points(t_draw, v)
            elif mean_over is not None:
                t_draw, v = period_steps(t_draw, v, mean_over)
            plot.set_curve((key_prefix, g), gpu_label(g) + name_suffix, pen, t_draw, v, legend)
            if len(v) and np.isfinite(v).any():
                reported.append(g)
        return reported, series

    def note_unreported(
        self, plot: TimePlot, view: View, metric: str, reported: Sequence[int], what: str
    ) -> None:
        gpus = view.gpus()
        plot.fit_y()
        if not gpus:
            plot.set_note(translate("Tab", "waiting for data…"))
        elif not reported:
            reasons = {view.unsupported(g, metric) for g in gpus} - {None}
            shown = sorted({unsupported_text(r) for r in reasons if r})
            why = f" ({', '.join(shown)})" if shown else ""
            plot.set_note(f"{what}: {translate('Tab', NOT_REPORTED)}{why}")
        else:
            plot.set_note("")


def step_points(t: F64, v: F64) -> tuple[F64, F64]:
    """A slowly changing value (a limit) kept only where it changes, so that a dashed pen
    strokes a handful of segments, not a thousand."""
    if len(v) <= 2:
        return t, v
    keep = np.ones(len(v), dtype=bool)
    keep[1:-1] = ~((v[1:-1] == v[:-2]) & (v[1:-1] == v[2:]))
    return t[keep], v[keep]


def period_steps(t: F64, v: F64, period: float) -> tuple[F64, F64]:
    """A value sent once every ``period`` s, the mean since the previous one, drawn as what
    it is: level over the span it averages (from the previous value's time to its own),
    nothing made up in between; a span longer than 2.5 periods is a gap in the data and
    stays one."""
    keep = np.isfinite(v)
    tf, vf = t[keep], v[keep]
    if len(tf) < 2:
        return tf, vf
    x = np.empty(2 * (len(tf) - 1))
    y = np.empty_like(x)
    x[0::2], x[1::2] = tf[:-1], tf[1:]
    y[0::2] = y[1::2] = vf[1:]
    gap = np.diff(tf) > 2.5 * period
    y[0::2][gap] = np.nan
    y[1::2][gap] = np.nan
    return x, y


def gpu_label(g: int) -> str:
    """ "GPU 3" ("GPU 0·2" for MIG slice 2 of GPU 0), in the installed language."""
    return QCoreApplication.translate("Tab", "GPU {n}").format(n=short_index(g))


def fmt(v: float | None, unit: str = "", digits: int = 0) -> str:
    """A value with its unit, or an em dash when not reported."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    s = f"{v:,.{digits}f}".replace(",", " ")
    return f"{s} {unit}".rstrip() if unit else s
