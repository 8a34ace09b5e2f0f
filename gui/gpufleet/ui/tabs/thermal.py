"""Thermal && power: GPU and memory temperature against the slowdown and shutdown points
(and the memory's own limit where it reports one); power draw against the enforced cap
(dashed, per GPU, as sampled) and the default limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from gpufleet.core.live.buffers import Series
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.ui.i18n import unsupported_text
from gpufleet.ui.tabs.base import PlotTab, ValueAt, fmt, step_points
from gpufleet.ui.tabs.sentences import thermal_sentence
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.theme import REASON_BANDS, Theme, gpu_pen_secondary

_HOT = REASON_BANDS[0][1]


class ThermalTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Thermal && power")

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.temp = self.add_plot(self.tr("GPU bright, memory dark (°C)"))
        self.power = self.add_plot(self.tr("power (W)"))
        self._cap_pen = pg.mkPen(theme.nominal, width=1, style=Qt.PenStyle.DashLine)
        self.finish()

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        rep, temps = self.draw_metric(self.temp, view, "temp_gpu_c")
        # Memory (HBM) temperature, dotted, only where the GPU reports it: GDDR6X boards have
        # no sensor, and a flat 0 would read as "cold".
        mem = view.series_many("temp_mem_c", gpus, self.temp.max_points())
        rep_m = []
        for g, sm in zip(gpus, mem, strict=True):
            if len(sm.v) and np.isfinite(sm.v).any():
                rep_m.append(g)
                pen = gpu_pen_secondary(g, self.theme.dark)
                # Not in the legend (the axis says "memory dark", in the GPU's colour): on an
                # 8-GPU HBM host its 16 entries took four rows over the top of the plot, where
                # the hottest curves run, at the memory limit.
                name = self.tr("GPU {n} mem").format(n=g)
                self.temp.set_curve(("mem", g), name, pen, sm.t, sm.v, legend=False)
        keys: list[Any] = [("", g) for g in gpus] + [("mem", g) for g in rep_m]
        missing = [g for g in gpus if g not in rep_m]
        if missing and rep:
            why = sorted(
                {unsupported_text(view.unsupported(g, "temp_mem_c") or "") for g in missing} - {""}
            )
            which = (
                self.tr("these GPUs")
                if len(missing) == len(gpus)
                else self.tr("GPU {list}").format(list=", ".join(map(str, missing)))
            )
            because = f" ({', '.join(why)})" if why else ""
            self.temp.set_title(
                f'<span style="font-size:8pt;color:{self.theme.muted}">'
                + self.tr("memory temperature: not reported by {which}").format(which=which)
                + f"{because}</span>"
            )
        else:
            self.temp.set_title(None)
        slow = {g: view.nominal(g, "temp_slowdown_c") for g in gpus}
        shut = {g: view.nominal(g, "temp_shutdown_c") for g in gpus}
        sd = min((s for s in slow.values() if s), default=None)
        sh = min((s for s in shut.values() if s), default=None)
        self.temp.set_nominal(
            "slow",
            sd,
            self.tr("slowdown {value}").format(value=fmt(sd, "°C")),
            view.t0,
            view.t1,
            _HOT,
            # Under its line: the shutdown point is a few degrees above, and its label sat
            # on this one in a laptop-sized plot (89 and 92 °C are ~15 px apart at 1366×768).
            below=True,
        )
        self.temp.set_nominal(
            "shut",
            sh,
            self.tr("shutdown {value}").format(value=fmt(sh, "°C")),
            view.t0,
            view.t1,
            _HOT,
            Qt.PenStyle.DotLine,
        )
        # The memory's own limit (NVML's MEM_MAX), where memory temperature is reported: the
        # dark curves' ceiling, lower than the GPU's shutdown on HBM cards.
        mem_max = min((m for g in rep_m if (m := view.nominal(g, "temp_mem_max_c"))), default=None)
        self.temp.set_nominal(
            "mem_max",
            mem_max,
            self.tr("memory limit {value}").format(value=fmt(mem_max, "°C")),
            view.t0,
            view.t1,
            _HOT,
            Qt.PenStyle.DashDotLine,
        )
        self.temp.retain([*keys, "slow", "shut", "mem_max"])
        self.note_unreported(self.temp, view, "temp_gpu_c", rep, self.tr("GPU temperature"))
        rep_p, power = self.draw_metric(self.power, view, "power_w")
        limits = view.series_many("power_limit_w", gpus, self.power.max_points())
        cap_keys: list[Any]
        if len(gpus) > 1 and _all_same(limits):
            # One cap for every GPU (the usual case): one dashed line, not eight on top of
            # one another (each a dashed stroke across the plot).
            t, v = step_points(limits[0].t, limits[0].v)
            self.power.set_curve(("cap", "all"), self.tr("cap (all GPUs)"), self._cap_pen, t, v)
            cap_keys = [("cap", "all")]
        else:
            _, limits = self.draw_metric(
                self.power,
                view,
                "power_limit_w",
                key_prefix="cap",
                name_suffix=self.tr(" cap"),
                style=Qt.PenStyle.DashLine,
                steps=True,
            )
            cap_keys = [("cap", g) for g in gpus]
        dflt = {g: view.nominal(g, "power_default_w") for g in gpus}
        d = max((x for x in dflt.values() if x), default=None)
        self.power.set_nominal(
            "default",
            d,
            self.tr("default limit {value}").format(value=fmt(d, "W")),
            view.t0,
            view.t1,
            style=Qt.PenStyle.DotLine,
        )
        self.power.retain([("", g) for g in gpus] + cap_keys + ["default"])
        self.note_unreported(self.power, view, "power_w", rep_p, self.tr("power draw"))
        self.set_range(view.t0, view.t1)
        self.set_sentence(
            thermal_sentence(
                gpus,
                {g: s.v for g, s in zip(gpus, temps, strict=True)},
                slow,
                {g: s.v for g, s in zip(gpus, power, strict=True)},
                {g: s.v for g, s in zip(gpus, limits, strict=True)},
                dflt,
                {g: sm.v for g, sm in zip(gpus, mem, strict=True) if g in rep_m},
                {g: view.nominal(g, "temp_mem_max_c") for g in rep_m},
            )
        )
        self.populated = bool(rep) and bool(rep_p)

    def readout(self, t: float) -> str:
        return self.gpu_readout(t, self._readout_line)

    def _readout_line(self, g: int, at: ValueAt) -> str:
        return f"{fmt(at('temp_gpu_c'), '°C')} " + self.tr(
            "(mem {temp}) · {power} of {cap}"
        ).format(
            temp=fmt(at("temp_mem_c"), "°C"),
            power=fmt(at("power_w"), "W"),
            cap=fmt(at("power_limit_w"), "W"),
        )


def _all_same(series: Sequence[Series]) -> bool:
    """Every GPU's series holds the same values (NaN equal to NaN)."""
    first = series[0]
    return all(
        len(s.v) == len(first.v) and np.array_equal(s.v, first.v, equal_nan=True)
        for s in series[1:]
    )
