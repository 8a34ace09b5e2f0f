"""Compute: how much of the GPU works, beside GPU-Util's "a kernel was running".

GPU-Util counts the time any kernel ran, however few SMs it kept busy; GPM (Hopper and newer)
says how much of the chip worked: SM active and SM occupancy, tensor-pipe and DRAM activity.
On a GPU without GPM (Ampere, Ada, GeForce) the tab says so in one line and plots what stands
in: the power draw as a share of the enforced limit, beside GPU-Util.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from PySide6.QtWidgets import QLabel, QWidget

from gpufleet.core.live.buffers import Series
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.verdicts import utilization
from gpufleet.core.wire.gpu_kind import short_index
from gpufleet.ui.i18n import unsupported_text
from gpufleet.ui.tabs.base import F64, PlotTab, ValueAt, fmt, gpu_label
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.plots import TimePlot
from gpufleet.ui.widgets.theme import Theme, gpu_pen, gpu_pen_secondary

_FULL = 100.0


class ComputeTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Compute")

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.act = self.add_plot(self.tr("SM active · util (%)"))
        self.pipes = self.add_plot(self.tr("tensor · occ. (%)"), legend=False)
        self.dram = self.add_plot(self.tr("DRAM (%)"), legend=False)
        self.fp = self.add_plot(self.tr("FP32 · FP16 (%)"), legend=False)
        # Which curve is which: each GPU's colour, bright for the first name, dark for the
        # second (solid pens: dotted ones cost several times as much to stroke).
        self._key_html = (
            f'<span style="font-size:8pt;color:{theme.muted}">'
            + self.tr("bright: SM active, tensor, DRAM, FP32 · dark: GPU-Util, SM occupancy, FP16")
            + "</span>"
        )
        self._key_html_smi = (
            f'<span style="font-size:8pt;color:{theme.muted}">'
            + self.tr("bright: power draw as a share of the limit · dark: GPU-Util")
            + "</span>"
        )
        for p in self.plots:
            if isinstance(p, TimePlot):
                p.y_span_frac = 1.0
        self.glw.ci.layout.setRowStretchFactor(0, 4)
        self.glw.ci.layout.setRowStretchFactor(1, 3)
        self.glw.ci.layout.setRowStretchFactor(2, 2)
        self.glw.ci.layout.setRowStretchFactor(3, 2)
        # The line a GPU without GPM gets instead of empty plots, above the plots (a label
        # wraps; a plot title would be cut off at the plot's width).
        self.gpm_note = QLabel("")
        self.gpm_note.setWordWrap(True)
        self.gpm_note.setObjectName("gpmNote")
        self.gpm_note.setStyleSheet(f"color: {theme.muted};")
        self.gpm_note.setVisible(False)
        self.box.insertWidget(0, self.gpm_note)
        self._gpm_shown: bool | None = None
        self._no_gpm: list[int] = []
        self.finish()

    def _show_gpm_plots(self, show: bool) -> None:
        """Without GPM on any GPU the two GPM-only plots go away (no empty plots): the first
        plot then carries the stand-in and the line saying why."""
        if show == self._gpm_shown:
            return
        self._gpm_shown = show
        lay = self.glw.ci.layout
        for row, p in ((1, self.pipes), (2, self.dram), (3, self.fp)):
            p.plot.setVisible(show)
            p.plot.setMaximumHeight(16777215 if show else 0)
            lay.setRowStretchFactor(row, (3 if row == 1 else 2) if show else 0)
        left = self.act.plot.getAxis("left")
        left.setLabel(self.tr("SM active · util (%)") if show else self.tr("power · util (%)"))
        self.act.set_title(self._key_html if show else self._key_html_smi)
        # The bottom visible plot carries the time labels.
        self.act.plot.getAxis("bottom").setStyle(showValues=not show)
        self.fp.plot.getAxis("bottom").setStyle(showValues=show)

    def _lacks_gpm(self, view: View, g: int) -> bool:
        return view.unsupported(g, "sm_active_pct") is not None

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        no_gpm = [g for g in gpus if self._lacks_gpm(view, g)]
        with_gpm = [g for g in gpus if g not in no_gpm]
        self._no_gpm = no_gpm
        self._show_gpm_plots(bool(with_gpm) or not gpus)
        n = self.act.max_points()
        util = view.series_many("util_gpu_pct", gpus, n)
        sm = view.series_many("sm_active_pct", gpus, n)
        power = view.series_many("power_w", gpus, n)
        limit = view.series_many("power_limit_w", gpus, n)
        keys: list[object] = []
        reported: list[int] = []
        for g, su, ss, sp, sl in zip(gpus, util, sm, power, limit, strict=True):
            self.act.set_curve(
                ("util", g),
                gpu_label(g) + self.tr(" util"),
                gpu_pen_secondary(g, self.theme.dark),
                su.t,
                su.v,
                legend=False,
            )
            keys.append(("util", g))
            if g in no_gpm:
                t, v = _power_pct(sp, sl, view.nominal(g, "power_enforced_w"))
                name = gpu_label(g) + self.tr(" power")
            else:
                t, v = ss.t, ss.v
                name = gpu_label(g)
            self.act.set_curve(("main", g), name, gpu_pen(g), t, v)
            keys.append(("main", g))
            if (len(v) and np.isfinite(v).any()) or (len(su.v) and np.isfinite(su.v).any()):
                reported.append(g)
        self.act.set_nominal("full", _FULL, "100 %", view.t0, view.t1, below=True)
        self.act.retain([*keys, "full"])
        self.note_unreported(self.act, view, "util_gpu_pct", reported, self.tr("GPU-Util"))
        line = self._gpm_line(view, no_gpm, gpus)
        if line != self.gpm_note.text():
            self.gpm_note.setText(line)
        self.gpm_note.setVisible(bool(line))
        if with_gpm:
            self._draw_pair(self.pipes, view, with_gpm, "tensor_active_pct", "sm_occupancy_pct")
            self._draw_pair(self.dram, view, with_gpm, "dram_active_pct", None)
            self._draw_pair(self.fp, view, with_gpm, "fp32_active_pct", "fp16_active_pct")
        self.set_range(view.t0, view.t1)
        self.populated = bool(reported)
        if view.host is not None and self.sentence_due(view):
            self.set_sentence(self._sentence(view, gpus, no_gpm))

    def _draw_pair(
        self, plot: TimePlot, view: View, gpus: list[int], bright: str, dark: str | None
    ) -> None:
        n = plot.max_points()
        keys: list[object] = []
        main = view.series_many(bright, gpus, n)
        second = view.series_many(dark, gpus, n) if dark else [None] * len(gpus)
        reported = []
        for g, s, s2 in zip(gpus, main, second, strict=True):
            if s2 is not None:
                plot.set_curve(
                    ("dark", g), "", gpu_pen_secondary(g, self.theme.dark), s2.t, s2.v, False
                )
                keys.append(("dark", g))
            plot.set_curve(("main", g), gpu_label(g), gpu_pen(g), s.t, s.v, False)
            keys.append(("main", g))
            if len(s.v) and np.isfinite(s.v).any():
                reported.append(g)
        plot.set_nominal("full", _FULL, "100 %", view.t0, view.t1, below=True)
        plot.retain([*keys, "full"])
        what = {
            "tensor_active_pct": self.tr("tensor activity"),
            "dram_active_pct": self.tr("DRAM activity"),
        }.get(bright) or self.tr("FP32 pipe activity")
        self.note_unreported(plot, view, bright, reported, what)

    def _gpm_line(self, view: View, no_gpm: list[int], gpus: list[int]) -> str:
        """The one line a GPU without GPM gets instead of empty plots."""
        if not no_gpm:
            return ""
        reasons = sorted(
            {unsupported_text(view.unsupported(g, "sm_active_pct") or "") for g in no_gpm} - {""}
        )
        which = (
            self.tr("this GPU")
            if len(no_gpm) == len(gpus)
            else self.tr("GPU {list}").format(list=", ".join(map(short_index, no_gpm)))
        )
        because = f" ({'; '.join(reasons)})" if reasons else ""
        text = self.tr(
            "SM activity, occupancy, tensor and DRAM activity: not available on {which}{because}. "
            "Power draw against the limit stands in: a GPU at work draws near its limit."
        ).format(which=which, because=because)
        return text

    def _sentence(self, view: View, gpus: list[int], no_gpm: list[int]) -> str:
        assert view.host is not None
        metrics = ["util_gpu_pct", *utilization.GPM_METRICS, "power_w", "power_limit_w"]
        full = view.live.series_multi(view.host, gpus, metrics, view.t0, view.t1)
        pics = {}
        for i, g in enumerate(gpus):
            s = {m: full[k][i].v for k, m in enumerate(metrics)}
            pics[g] = utilization.picture(
                s["util_gpu_pct"],
                {m: s[m] for m in utilization.GPM_METRICS},
                s["power_w"],
                s["power_limit_w"],
            )
        why = self.tr(
            "GPU-Util counts the time any kernel ran, however few SMs it kept busy: 99 % "
            "utilization can be a quarter of the GPU working."
        )
        busy = [p for p in pics.values() if p.busy_samples]
        if not busy:
            return self.tr("No GPU was busy (80 % utilization or more) in this range.") + " " + why
        gpm = [p for g, p in pics.items() if p.busy_samples and g not in no_gpm and p.has_gpm]
        parts = []
        if gpm:
            parts.append(
                self.tr(
                    "While busy, the GPUs averaged {util} utilization, but {sm} SM active, "
                    "{tensor} tensor and {dram} DRAM activity."
                ).format(
                    util=fmt(_avg(p.util for p in gpm), "%"),
                    sm=fmt(_avg(p.sm_active for p in gpm), "%"),
                    tensor=fmt(_avg(p.tensor for p in gpm), "%"),
                    dram=fmt(_avg(p.dram for p in gpm), "%"),
                )
            )
            low = min(
                ((g, p) for g, p in pics.items() if p in gpm and p.sm_active is not None),
                key=lambda gp: gp[1].sm_active or 0.0,
                default=None,
            )
            fp32 = _avg(p.fp32 for p in gpm)
            if fp32 is not None:
                parts.append(
                    self.tr("The FP32 pipes were busy {fp32}, the FP16 pipes {fp16}.").format(
                        fp32=fmt(fp32, "%"), fp16=fmt(_avg(p.fp16 for p in gpm), "%")
                    )
                )
            if low is not None and (low[1].sm_active or 0.0) < utilization.SM_LOW_PCT:
                parts.append(
                    self.tr("{gpu}'s SMs worked only {sm} of the time.").format(
                        gpu=gpu_label(low[0]), sm=fmt(low[1].sm_active, "%")
                    )
                )
        plain = [p for g, p in pics.items() if p.busy_samples and g in no_gpm]
        if plain:
            parts.append(
                self.tr(
                    "Without GPM, while busy the GPUs averaged {util} utilization at {power} "
                    "of their power limit."
                ).format(
                    util=fmt(_avg(p.util for p in plain), "%"),
                    power=fmt(_avg((p.power_frac or 0.0) * 100 for p in plain), "%"),
                )
            )
        parts.append(why)
        return " ".join(parts)

    def readout(self, t: float) -> str:
        return self.gpu_readout(t, self._readout_line)

    def _readout_line(self, g: int, at: ValueAt) -> str:
        util = fmt(at("util_gpu_pct"), "%")
        if g in self._no_gpm:
            p, lim = at("power_w"), at("power_limit_w")
            share = 100.0 * p / lim if p is not None and lim else None
            return self.tr("util {util} · power {share} of limit").format(
                util=util, share=fmt(share, "%")
            )
        line = self.tr("util {util} · SM {sm} · occ {occ} · tensor {tensor} · DRAM {dram}").format(
            util=util,
            sm=fmt(at("sm_active_pct"), "%"),
            occ=fmt(at("sm_occupancy_pct"), "%"),
            tensor=fmt(at("tensor_active_pct"), "%"),
            dram=fmt(at("dram_active_pct"), "%"),
        )
        fp = [at(m) for m in ("fp64_active_pct", "fp32_active_pct", "fp16_active_pct")]
        if any(v is not None for v in fp):
            line += " · FP64/32/16 " + "/".join(fmt(v) for v in fp) + " %"
        return line


def _avg(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def _power_pct(power: Series, limit: Series, enforced: float | None) -> tuple[F64, F64]:
    """Power draw as a share of the limit in force at each sample (the nominal enforced limit
    where the series do not line up, e.g. across the live window's edge)."""
    if len(power.t) == len(limit.t) and len(power.t):
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(limit.v > 0, 100.0 * power.v / limit.v, np.nan)
        return power.t, v
    if enforced:
        return power.t, 100.0 * power.v / enforced
    return power.t, np.full(len(power.t), np.nan)
