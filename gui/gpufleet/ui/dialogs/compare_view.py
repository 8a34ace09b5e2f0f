"""The Compare view: B (the run in question) against A (the reference) on one screen.

On top, what the user came for: the verdict, how much slower B ran by the hardware data and
each cause in a sentence with A's and B's values (``core/text/compare``). Below, A and B
overlaid on six plots against the minutes from each window's start, for one GPU (the one
the top cause concerns, or picked): SM clock, power with its limit, temperature, utilization
and SM activity, the job's share of the GPU, PCIe and NVLink traffic; a table beside them
gives the two windows' means side by side. Everything fits 1366x768 without scrolling.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.text import compare as words
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated
from gpufleet.core.text.compare import CTX
from gpufleet.core.verdicts.compare import Comparison
from gpufleet.core.verdicts.compare.report import SAME_ROWS, figure, says_of
from gpufleet.core.verdicts.compare.series import series_of
from gpufleet.core.verdicts.compare_bundle import write_compare_bundle
from gpufleet.core.verdicts.window import RunWindow

A_PEN = pg.mkPen("#8a93a3", width=1)
B_PEN = pg.mkPen("#f2a93b", width=1)
A_DASH = pg.mkPen("#8a93a3", width=1, style=Qt.PenStyle.DashLine)
B_DASH = pg.mkPen("#f2a93b", width=1, style=Qt.PenStyle.DashLine)
REF_COLOUR = "#c0c6d0"
REF_PEN = pg.mkPen(REF_COLOUR, width=1, style=Qt.PenStyle.DotLine)
VERDICT_COLOURS = {"platform": "#e5534b", "job": "#57ab5a", "unclear": "#c69026"}
# (title, unit, [(metric, dashed)], scale) of each plot.
_T = "CompareView"  # spelled out in each QT_TRANSLATE_NOOP: lupdate reads only literals
PLOTS: tuple[tuple[str, str, tuple[tuple[str, bool], ...], float], ...] = (
    (QT_TRANSLATE_NOOP("CompareView", "SM clock"), "MHz", (("sm_clock_mhz", False),), 1.0),
    (
        QT_TRANSLATE_NOOP("CompareView", "Power (dashed: limit)"),
        "W",
        (("power_w", False), ("power_limit_w", True)),
        1.0,
    ),
    (QT_TRANSLATE_NOOP("CompareView", "GPU temperature"), "°C", (("temp_gpu_c", False),), 1.0),
    (
        QT_TRANSLATE_NOOP("CompareView", "Utilization (dashed: SM activity)"),
        "%",
        (("util_gpu_pct", False), ("sm_active_pct", True)),
        1.0,
    ),
    (
        QT_TRANSLATE_NOOP("CompareView", "Your share of the GPU"),
        "%",
        (("own_share", False),),
        100.0,
    ),
    (
        QT_TRANSLATE_NOOP("CompareView", "PCIe in (dashed: NVLink)"),
        "GB/s",
        (("pcie_rx_bps", False), ("nvlink_rx_bps", True)),
        1e-9,
    ),
)


def reference_lines(window: RunWindow, gpu: int) -> dict[str, tuple[float, str]]:
    """The card's own reference beside its live curves, from the window's hello, by the
    metric it belongs with: the max SM clock and the slowdown temperature, worded as the
    Clocks and Thermal tabs word them (their translations). A "thermal slowdown" verdict
    at 86 °C means little without the 87 °C it is held under."""
    info = window.hello.gpu(gpu)
    out: dict[str, tuple[float, str]] = {}
    if info is None:
        return out
    top = info.nominal_value("sm_clock_max_mhz")
    if isinstance(top, int | float) and top > 0:
        value = f"{top:,.0f}".replace(",", " ") + " MHz"
        text = QCoreApplication.translate("ClocksTab", "max {value}").format(value=value)
        out["sm_clock_mhz"] = (float(top), text)
    slow = info.nominal_value("temp_slowdown_c")
    if isinstance(slow, int | float) and slow > 0:
        value = f"{slow:.0f} °C"
        text = QCoreApplication.translate("ThermalTab", "slowdown {value}").format(value=value)
        out["temp_gpu_c"] = (float(slow), text)
    return out


def _add_reference(w: pg.PlotWidget, ref: tuple[float, str], drawn: list[np.ndarray]) -> None:
    """A dotted line at the reference with its label above it, at the left; the y range
    takes it in with room for the label (a max clock is the top of the data, and its label
    was drawn above the plot, cut off)."""
    value, text = ref
    line = pg.InfiniteLine(
        pos=value, angle=0, movable=False, pen=REF_PEN, label=text,
        labelOpts={"position": 0.02, "color": REF_COLOUR, "anchors": [(0, 1), (0, 1)]},
    )  # fmt: skip
    w.addItem(line)
    finite = [v[np.isfinite(v)] for v in drawn]
    values = np.concatenate([*finite, np.array([value])])
    lo, hi = float(values.min()), float(values.max())
    span = max(hi - lo, abs(value) * 0.05, 1.0)
    w.setYRange(lo - 0.05 * span, max(hi, value + 0.2 * span), padding=0)


def _broken(x: np.ndarray, y: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """The curve with a gap (NaN) where samples are missing: work only, pauses left out."""
    if len(x) < 2:
        return x, y
    gaps = np.flatnonzero(np.diff(x) > 3 * step) + 1
    return np.insert(x, gaps, np.nan), np.insert(y, gaps, np.nan)


class CompareView(QDialog):
    """Shows one comparison; "Save evidence…" writes its bundle (with these plots)."""

    def __init__(
        self, a: RunWindow, b: RunWindow, result: Comparison, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.a, self.b, self.cmp = a, b, result
        self.setWindowTitle(self.tr("Compare: {b} against {a}").format(a=a.host, b=b.host))
        self.series = (series_of(a, result.gpus), series_of(b, result.gpus))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 8, 8, 8)
        self.head = self._head()
        lay.addWidget(self.head)
        body = QHBoxLayout()
        self.grid = QGridLayout()
        self.plots: list[pg.PlotWidget] = []
        for i, (title, unit, _curves, _scale) in enumerate(PLOTS):
            w = pg.PlotWidget()
            w.setMinimumHeight(120)
            w.setTitle(QCoreApplication.translate(_T, title), size="9pt")
            w.setLabel("left", unit)
            w.setLabel("bottom", self.tr("minutes from the window's start"))
            w.showGrid(x=True, y=True, alpha=0.2)
            if unit == "%":
                w.setYRange(0, 105, padding=0)
                w.getViewBox().setMouseEnabled(y=False)
            if unit == "GB/s":  # PCIe's GB/s and NVLink's hundreds on one readable axis
                w.setLogMode(y=True)
            self.grid.addWidget(w, i // 2, i % 2)
            self.plots.append(w)
        body.addLayout(self.grid, 3)
        body.addLayout(self._side(), 1)
        lay.addLayout(body, 1)
        self._draw()

    # -- the top: verdict, estimate, causes ----------------------------------------------

    def _head(self) -> QLabel:
        r = self.cmp
        colour = VERDICT_COLOURS.get(r.verdict, "#c69026")
        verdict = words.verdict_says(r.verdict, r.reason, r.a.gpu_name, r.b.gpu_name)
        lines = [
            f"<b style='color:{colour}; font-size:13pt'>{words.verdict_name(r.verdict)}</b>"
            f" &nbsp; {verdict}",
            words.slower_says(r.slower_by_pct, r.slower_range),
        ]
        for c, says in zip(r.causes[:3], says_of(r), strict=False):
            lines.append(f"<b>{c.share_pct:.0f} % · {words.cause_name(c.cause)}</b> — {says}")
        label = QLabel("<br>".join(lines))
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # -- the side: windows, GPU, means, buttons ------------------------------------------

    def _side(self) -> QVBoxLayout:
        r = self.cmp
        side = QVBoxLayout()
        legend = QLabel(
            f"<span style='color:#8a93a3'>━ A</span> {r.a.host}, "
            f"{format_utc(r.a.t0, 'minutes')} – {format_utc(r.a.t1, 'minutes')}<br>"
            f"<span style='color:#f2a93b'>━ B</span> {r.b.host}, "
            f"{format_utc(r.b.t0, 'minutes')} – {format_utc(r.b.t1, 'minutes')}"
        )
        legend.setWordWrap(True)
        side.addWidget(legend)
        self.gpu_box = QComboBox()
        for g in r.gpus:
            self.gpu_box.addItem(words.gpu_list([g]), g)
        first = r.causes[0].gpus[0] if r.causes else (r.gpus[0] if r.gpus else None)
        if first is not None and first in r.gpus:
            self.gpu_box.setCurrentIndex(list(r.gpus).index(first))
        self.gpu_box.currentIndexChanged.connect(lambda _i: self._draw())
        side.addWidget(self.gpu_box)
        side.addWidget(QLabel(self.tr("Means over the GPUs compared:")))
        side.addWidget(self._means())
        save = QPushButton(self.tr("Save evidence…"))
        save.setToolTip(self.tr("A zip for the provider's support: both windows, causes, verdict"))
        save.clicked.connect(self._save)
        side.addWidget(save)
        close = QPushButton(self.tr("Close"))
        close.clicked.connect(self.accept)
        side.addWidget(close)
        return side

    def _means(self) -> QTableWidget:
        rows = [
            (k, f"{translated(CTX, label)} ({unit})" if unit else translated(CTX, label))
            for k, label, unit in SAME_ROWS
        ]
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["A", "B"])
        table.setVerticalHeaderLabels([label for _k, label in rows])
        for i, (key, _label) in enumerate(rows):
            a, b = self.cmp.same.get(key, (None, None))
            for j, v in enumerate((a, b)):
                item = QTableWidgetItem(figure(key, v))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                table.setItem(i, j, item)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.resizeColumnsToContents()
        return table

    # -- the plots ---------------------------------------------------------------------

    def current_gpu(self) -> int | None:
        g = self.gpu_box.currentData()
        return int(g) if g is not None else None

    def _curve(self, side: int, metric: str, gpu: int) -> tuple[np.ndarray, np.ndarray]:
        s = self.series[side]
        window = (self.a, self.b)[side]
        if metric == "own_share":
            run = (self.cmp.runs_a, self.cmp.runs_b)[side].get(gpu)
            if run is None or not len(run.t):
                return np.zeros(0), np.zeros(0)
            return _broken((run.t - window.t0) / 60.0, run.own_series, s.interval_s / 60.0)
        return (s.t - window.t0) / 60.0, s.col(metric, gpu)

    def _draw(self) -> None:
        gpu = self.current_gpu()
        # B's card is the one in question; A's reference where B's hello has none.
        refs = {} if gpu is None else reference_lines(self.a, gpu) | reference_lines(self.b, gpu)
        for w, (_title, _unit, curves, scale) in zip(self.plots, PLOTS, strict=True):
            w.clear()
            if gpu is None:
                continue
            drawn: list[np.ndarray] = []
            for metric, dashed in curves:
                for side, pen in (
                    (0, A_DASH if dashed else A_PEN),
                    (1, B_DASH if dashed else B_PEN),
                ):
                    x, y = self._curve(side, metric, gpu)
                    if len(x):
                        item = w.plot(x, y * scale, pen=pen, connect="finite")
                        item.setDownsampling(auto=True, method="peak")
                        item.setClipToView(True)
                        drawn.append(y * scale)
            ref = refs.get(curves[0][0])
            if ref is not None:
                _add_reference(w, ref, drawn)

    def render_plots(self) -> dict[str, bytes]:
        """The plots as PNG files for the bundle (the GUI thread's own widgets)."""
        from PySide6.QtCore import QBuffer, QIODevice

        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        self.grab().save(buf, "PNG")
        return {f"compare-gpu{self.current_gpu()}.png": bytes(buf.data().data())}

    def _save(self) -> None:
        name = f"gpufleet-compare-{self.cmp.b.host}-{int(self.cmp.b.t0)}.zip"
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save evidence"), name, "Zip (*.zip)")
        if path:
            save_bundle(Path(path), self.a, self.b, self.cmp, self.render_plots)


def save_bundle(
    path: Path, a: RunWindow, b: RunWindow, result: Comparison, plots: Callable[[], Any]
) -> Path:
    return write_compare_bundle(path, a, b, result, plots)
