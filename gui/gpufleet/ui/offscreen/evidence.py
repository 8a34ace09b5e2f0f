"""Offscreen PNG plots for the evidence bundle (``core.bundle`` assembles the zip).

One PNG per plot, each with units on its axes, a legend per GPU and the nominal values drawn
beside the measured ones, so that a reader without gpufleet sees what was wrong:
clocks vs the max clock (bands where thermal or power limits held them down), temperatures vs
the slowdown threshold, power vs its limit, memory used vs capacity, PCIe and NVLink traffic.
Works without a display (Qt's offscreen platform) and without a running app.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gpufleet.core.alerts.throttle import reason_bits
from gpufleet.core.history.store import Window
from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.verdicts.bundle import THROTTLE_MASK, PlotData

WIDTH, HEIGHT = 1400, 560
# Okabe–Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = (
    (0, 114, 178),
    (230, 159, 0),
    (0, 158, 115),
    (204, 121, 167),
    (86, 180, 233),
    (213, 94, 0),
    (240, 228, 66),
    (0, 0, 0),
)
MAX_BANDS = 200


def _app() -> Any:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        # Nothing is shown: render offscreen even where a display exists.
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QApplication([])
    return app


def _bands(t: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> list[tuple[float, float]]:
    held = (reason_bits(mask) & THROTTLE_MASK) != 0
    if not held.any():
        return []
    edges = np.flatnonzero(np.diff(np.r_[0, held.astype(np.int8), 0]))
    out = [
        (float(t[a]), float(t[min(b, t.size - 1)]))
        for a, b in zip(edges[::2], edges[1::2], strict=True)
    ]
    return out[:MAX_BANDS]


class _Plot:
    def __init__(self, data: PlotData, title: str, label: str, unit: str) -> None:
        import pyqtgraph as pg

        self.pg = pg
        self.data = data
        self.widget = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem(orientation="bottom")})
        self.widget.setBackground("w")
        self.widget.resize(WIDTH, HEIGHT)
        item = self.widget.getPlotItem()
        window = f"{format_utc(data.t0, 'seconds')} – {format_utc(data.t1, 'seconds')} UTC"
        item.setTitle(
            f"{data.host}: {title}<br><span style='font-size:9pt'>{window}</span>", color="k"
        )
        item.showGrid(x=True, y=True, alpha=0.25)
        left = item.getAxis("left")
        left.setLabel(label, units=unit)
        left.enableAutoSIPrefix(False)
        bottom = item.getAxis("bottom")
        bottom.setLabel("time (local)")
        for ax in (left, bottom):
            ax.setTextPen("k")
            ax.setPen("k")
        self.legend = item.addLegend(
            offset=(10, 10), labelTextColor="k", brush=(255, 255, 255, 220), pen="k"
        )
        item.setXRange(data.t0, data.t1, padding=0.01)

    def curve(
        self,
        gpu: int,
        w: Window,
        scale: float = 1.0,
        name: str | None = None,
        dashed: bool = False,
    ) -> None:
        if w.t.size == 0:
            return
        color = PALETTE[gpu % len(PALETTE)]
        from PySide6.QtCore import Qt

        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        pen = self.pg.mkPen(color=color, width=2, style=style)
        self.widget.plot(w.t, w.mean * scale, pen=pen, name=name or f"GPU {gpu}", connect="finite")
        if not w.raw:  # the min/max envelope, so spikes show although the line is a mean
            lo = self.pg.PlotDataItem(w.t, w.vmin * scale, pen=None)
            hi = self.pg.PlotDataItem(w.t, w.vmax * scale, pen=None)
            fill = self.pg.FillBetweenItem(lo, hi, brush=(*color, 50))
            self.widget.addItem(fill)

    def hline(self, y: float | None, text: str, style: Any = None) -> None:
        if y is None or not np.isfinite(y):
            return
        from PySide6.QtCore import Qt

        pen = self.pg.mkPen(color=(90, 90, 90), width=2, style=style or Qt.PenStyle.DashLine)
        line = self.pg.InfiniteLine(
            pos=y,
            angle=0,
            pen=pen,
            label=text,
            labelOpts={"position": 0.98, "color": (40, 40, 40), "anchors": [(1, 1), (1, 1)]},
        )
        self.widget.addItem(line)

    def band(self, a: float, b: float, color: tuple[int, int, int, int]) -> None:
        region = self.pg.LinearRegionItem(values=(a, b), movable=False, brush=color)
        region.setZValue(-10)
        for ln in region.lines:
            ln.setPen(self.pg.mkPen(None))
        self.widget.addItem(region)

    def png(self) -> bytes:
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        _app().processEvents()
        pix = self.widget.grab()
        ba = QByteArray()
        buf = QBuffer(ba)
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        pix.save(buf, "PNG")
        buf.close()
        self.widget.close()
        self.widget.deleteLater()
        return bytes(ba.data())


def _nominal(data: PlotData, key: str) -> float | None:
    if data.hello is None or not data.hello.gpus:
        return None
    vals = [g.nominal.get(key) for g in data.hello.gpus]
    nums = [float(v) for v in vals if isinstance(v, int | float)]
    return max(nums) if nums else None


def _gpus(data: PlotData) -> list[int]:
    return sorted({g for g, _ in data.series})


def _clocks(data: PlotData) -> bytes:
    p = _Plot(
        data, "SM clock vs max (shaded: held down by thermal/power limits)", "SM clock", "MHz"
    )
    for gpu in _gpus(data):
        reasons = data.series[(gpu, "clock_reasons")]
        if reasons.t.size:
            for a, b in _bands(reasons.t, reasons.vmax):
                p.band(a, b, (213, 94, 0, 40))
        p.curve(gpu, data.series[(gpu, "sm_clock_mhz")])
    p.hline(_nominal(data, "sm_clock_max_mhz"), "max clock")
    return p.png()


def _temps(data: PlotData) -> bytes:
    from PySide6.QtCore import Qt

    p = _Plot(data, "temperatures vs slowdown threshold", "temperature", "°C")
    for gpu in _gpus(data):
        p.curve(gpu, data.series[(gpu, "temp_gpu_c")], name=f"GPU {gpu} core")
    for gpu in _gpus(data):
        w = data.series[(gpu, "temp_mem_c")]
        if w.t.size and np.isfinite(w.mean).any():
            p.curve(gpu, w, name=f"GPU {gpu} memory (dashed)", dashed=True)
    p.hline(_nominal(data, "temp_slowdown_c"), "slowdown")
    p.hline(_nominal(data, "temp_shutdown_c"), "shutdown", Qt.PenStyle.DotLine)
    return p.png()


def _power(data: PlotData) -> bytes:
    from PySide6.QtCore import Qt

    p = _Plot(data, "power draw vs enforced limit", "power", "W")
    for gpu in _gpus(data):
        p.curve(gpu, data.series[(gpu, "power_w")])
    limits = [data.series[(g, "power_limit_w")].mean for g in _gpus(data)]
    finite = np.concatenate(limits) if limits else np.empty(0)
    finite = finite[np.isfinite(finite)]
    enforced = float(finite.min()) if finite.size else None
    default = _nominal(data, "power_default_w")
    if enforced is not None and default is not None and abs(enforced - default) < 0.5:
        p.hline(enforced, "enforced limit = default")
    else:
        p.hline(enforced, "enforced limit")
        p.hline(default, "default limit", Qt.PenStyle.DotLine)
    return p.png()


def _memory(data: PlotData) -> bytes:
    p = _Plot(data, "memory used vs capacity", "memory used", "GiB")
    for gpu in _gpus(data):
        p.curve(gpu, data.series[(gpu, "mem_used_bytes")], scale=2.0**-30)
    total = _nominal(data, "mem_total_bytes")
    p.hline(total * 2.0**-30 if total else None, "capacity")
    return p.png()


def _link(kind: str, title: str, scale: float, unit: str) -> Callable[[PlotData], bytes]:
    def draw(data: PlotData) -> bytes:
        p = _Plot(data, title, f"{kind} traffic (tx + rx)", unit)
        for gpu in _gpus(data):
            tx = data.series[(gpu, f"{kind}_tx_bps")]
            rx = data.series[(gpu, f"{kind}_rx_bps")]
            if tx.t.size and tx.t.size == rx.t.size:
                both = Window(tx.t, tx.mean + rx.mean, tx.vmin + rx.vmin, tx.vmax + rx.vmax, tx.raw)
                p.curve(gpu, both, scale=scale)
        if kind == "nvlink":
            links = _nominal(data, "nvlink_links")
            per = _nominal(data, "nvlink_link_bps")
            if links and per:
                p.hline(2 * links * per * scale, "nominal (all links, both ways)")
        return p.png()

    return draw


PLOTS: Mapping[str, Callable[[PlotData], bytes]] = {
    "clocks.png": _clocks,
    "temperatures.png": _temps,
    "power.png": _power,
    "memory.png": _memory,
    "pcie.png": _link("pcie", "PCIe traffic", 1e-6, "MB/s"),
    "nvlink.png": _link("nvlink", "NVLink traffic", 1e-9, "GB/s"),
}


def render_plots(data: PlotData) -> dict[str, bytes]:
    """Every evidence plot as PNG bytes, keyed by file name; a plot without data is skipped
    (a PCIe-only board has no NVLink plot)."""
    _app()
    out: dict[str, bytes] = {}
    for name, draw in PLOTS.items():
        metric = {"pcie.png": "pcie_tx_bps", "nvlink.png": "nvlink_tx_bps"}.get(name)
        if metric is not None and not any(
            np.isfinite(w.mean).any() for (g, m), w in data.series.items() if m == metric
        ):
            continue
        out[name] = draw(data)
    return out
