"""Clocks && throttling: SM and memory clocks of the selected host's GPUs against their max
(dashed), and the throttle reasons as coloured bands per GPU on the same time axis."""

from __future__ import annotations

from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import QLabel, QWidget

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, reason_name
from gpufleet.ui.tabs.base import PlotTab, ValueAt, fmt
from gpufleet.ui.tabs.sentences import clocks_sentence
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.theme import REASON_BANDS, Theme


class ClocksTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Clocks && throttling")
    # "Export evidence…" under the sentence: the bundle of this host over the range shown.
    export_requested = Signal()

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.sm = self.add_plot(self.tr("SM clock (MHz)"))
        self.mem = self.add_plot(self.tr("memory clock (MHz)"), legend=False)
        self.bands = self.add_bands()
        self.glw.ci.layout.setRowStretchFactor(0, 5)
        self.glw.ci.layout.setRowStretchFactor(1, 2)
        self.glw.ci.layout.setRowStretchFactor(2, 2)
        legend = "  ".join(
            f'<span style="color:{c}">■</span> {QCoreApplication.translate("Reasons", label)}'
            for label, c, _ in REASON_BANDS
        )
        self.bands.plot.setTitle(f'<span style="font-size:8pt">{legend}</span>')
        export = self.tr("Export evidence…")  # (not inside the f-string: lupdate skips those)
        self.export_link = QLabel(f'<a href="export">{export}</a>')
        self.export_link.setTextFormat(Qt.TextFormat.RichText)
        self.export_link.setToolTip(
            self.tr("Save a zip of this host's data over the range shown: metrics, plots, alerts")
        )
        self.export_link.linkActivated.connect(lambda _href: self.export_requested.emit())
        self.box.addWidget(self.export_link)
        self.finish()

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        reported, sm = self.draw_metric(self.sm, view, "sm_clock_mhz")
        self.sm.retain([("", g) for g in gpus] + ["max"])
        maxes = {g: view.nominal(g, "sm_clock_max_mhz") for g in gpus}
        top = max((m for m in maxes.values() if m), default=None)
        self.sm.set_nominal(
            "max", top, self.tr("max {value}").format(value=fmt(top, "MHz")), view.t0, view.t1
        )
        self.note_unreported(self.sm, view, "sm_clock_mhz", reported, self.tr("SM clock"))
        reported_m, _ = self.draw_metric(self.mem, view, "mem_clock_mhz")
        self.mem.retain([("", g) for g in gpus] + ["max"])
        mmax = max((view.nominal(g, "mem_clock_max_mhz") or 0 for g in gpus), default=0) or None
        self.mem.set_nominal(
            "max", mmax, self.tr("max {value}").format(value=fmt(mmax, "MHz")), view.t0, view.t1
        )
        self.note_unreported(self.mem, view, "mem_clock_mhz", reported_m, self.tr("memory clock"))
        if view.host is None:
            return
        # Reason bits must not be min/max-averaged: take them at full resolution and OR them
        # per pixel column inside ReasonBands.
        reasons = view.live.series_many(view.host, gpus, "clock_reasons", view.t0, view.t1)
        self.bands.update(gpus, [(s.t, s.v) for s in reasons], view.t0, view.t1)
        self.set_range(view.t0, view.t1)
        self.populated = bool(reported) and any(len(s) for s in sm)
        if not self.sentence_due(view):
            return
        temps = view.live.series_many(view.host, gpus, "temp_gpu_c", view.t0, view.t1)
        clocks_full = view.live.series_many(view.host, gpus, "sm_clock_mhz", view.t0, view.t1)
        hello = view.hello()
        self.set_sentence(
            clocks_sentence(
                gpus,
                {g: s.v for g, s in zip(gpus, clocks_full, strict=True)},
                {g: s.v for g, s in zip(gpus, reasons, strict=True)},
                {g: s.v for g, s in zip(gpus, temps, strict=True)},
                maxes,
                hello.interval_s if hello else 1.0,
            )
        )

    def readout(self, t: float) -> str:
        return self.gpu_readout(t, _readout_line)


# The clock event reasons in words for the read-out (the protocol's dcgm-style labels,
# "hw_slowdown, sw_thermal", are ids to search for, not something to read at a glance).
READOUT_REASONS = {
    "gpu_idle": QT_TRANSLATE_NOOP("Readout", "idle"),
    "clocks_setting": QT_TRANSLATE_NOOP("Readout", "clock setting"),
    "power_cap": QT_TRANSLATE_NOOP("Readout", "power cap"),
    "hw_slowdown": QT_TRANSLATE_NOOP("Readout", "HW slowdown"),
    "sync_boost": QT_TRANSLATE_NOOP("Readout", "sync boost"),
    "sw_thermal": QT_TRANSLATE_NOOP("Readout", "SW thermal"),
    "hw_thermal": QT_TRANSLATE_NOOP("Readout", "HW thermal"),
    "hw_power_brake": QT_TRANSLATE_NOOP("Readout", "power brake"),
    "display_clocks": QT_TRANSLATE_NOOP("Readout", "display clocks"),
}


def readout_reason(label: str) -> str:
    text = READOUT_REASONS.get(label)
    return QCoreApplication.translate("Readout", text) if text else reason_name(label)


def _readout_line(g: int, at: ValueAt) -> str:
    ps = at("pstate")
    mask = at("clock_reasons")
    why = ", ".join(map(readout_reason, protocol.reason_labels(int(mask)))) if mask else ""
    return (
        f"{fmt(at('sm_clock_mhz'), 'MHz')} · {fmt(at('temp_gpu_c'), '°C')}"
        f"{f' · P{ps:.0f}' if ps is not None else ''}{f' · {why}' if why else ''}"
    )
