"""Interconnect: PCIe TX/RX per GPU with the link generation and width (current vs max), and
NVLink TX/RX per GPU against its nominal bandwidth."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from gpufleet.core.catalogue import QT_TRANSLATE_NOOP
from gpufleet.ui.plots import set_label_text, swatch
from gpufleet.ui.sentences import pcie_sentence
from gpufleet.ui.tab_base import PlotTab, ValueAt, fmt, gpu_label
from gpufleet.ui.theme import REASON_BANDS, Theme
from gpufleet.ui.view import View

GB = 1e9


class InterconnectTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Interconnect")

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.links = QLabel("")
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setWordWrap(True)
        self.box.insertWidget(0, self.links)
        self.pcie = self.add_plot(self.tr("PCIe TX bright, RX dark (GB/s)"))
        self.nvl = self.add_plot(self.tr("NVLink TX bright, RX dark (GB/s)"))
        self.finish()

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        rep_tx, _ = self.draw_metric(self.pcie, view, "pcie_tx_bps", scale=1 / GB)
        rep_rx, _ = self.draw_metric(
            self.pcie,
            view,
            "pcie_rx_bps",
            scale=1 / GB,
            key_prefix="rx",
            name_suffix=" RX",
            secondary=True,
            legend=False,
        )
        self.pcie.retain([("", g) for g in gpus] + [("rx", g) for g in gpus])
        self.note_unreported(
            self.pcie, view, "pcie_tx_bps", rep_tx + rep_rx, self.tr("PCIe throughput")
        )
        rep_ntx, _ = self.draw_metric(self.nvl, view, "nvlink_tx_bps", scale=1 / GB)
        rep_nrx, _ = self.draw_metric(
            self.nvl,
            view,
            "nvlink_rx_bps",
            scale=1 / GB,
            key_prefix="rx",
            name_suffix=" RX",
            secondary=True,
            legend=False,
        )
        nominal = None
        for g in gpus:
            per, n = view.nominal(g, "nvlink_link_bps"), view.nominal(g, "nvlink_links")
            if per and n:
                nominal = max(nominal or 0.0, per * n / GB)
        self.nvl.set_nominal(
            "nominal",
            nominal,
            self.tr("nominal {value} per GPU per direction").format(value=fmt(nominal, "GB/s")),
            view.t0,
            view.t1,
        )
        self.nvl.retain([("", g) for g in gpus] + [("rx", g) for g in gpus] + ["nominal"])
        if not (rep_ntx or rep_nrx) and not nominal:
            self.nvl.fit_y()
            self.nvl.set_note(self.tr("NVLink: not present on this machine (PCIe only)"))
        else:
            self.note_unreported(self.nvl, view, "nvlink_tx_bps", rep_ntx + rep_nrx, "NVLink")
        self.set_range(view.t0, view.t1)
        gen: dict[int, float | None] = {}
        width: dict[int, float | None] = {}
        mgen: dict[int, float | None] = {}
        mwidth: dict[int, float | None] = {}
        cells = []
        same: set[tuple[str, str]] = set()
        for g in gpus:
            s = view.live.latest(view.host) if view.host else None
            gen[g] = _num(s.value(g, "pcie_gen")) if s else None
            width[g] = w = _num(s.value(g, "pcie_width")) if s else None
            mgen[g] = view.nominal(g, "pcie_max_gen")
            mwidth[g] = mw = view.nominal(g, "pcie_max_width")
            degraded = bool(w is not None and mw is not None and w < mw)
            colour = REASON_BANDS[2][1] if degraded else self.theme.fg
            mark = " ▲" if degraded else ""
            now_txt = f"Gen{fmt(gen[g])} x{fmt(width[g])}"
            max_txt = f"Gen{fmt(mgen[g])} x{fmt(mwidth[g])}"
            same.add((now_txt, max_txt))
            cells.append(
                f"{swatch(g)} {gpu_label(g)} "
                + self.tr("{now} of {max}").format(
                    now=f'<span style="color:{colour}">{now_txt}</span>', max=max_txt
                )
                + mark
            )
        if len(same) == 1 and len(gpus) > 1:
            now_txt, max_txt = same.pop()
            text = self.tr("PCIe link of all {n} GPUs: {now} (max {max})").format(
                n=len(gpus), now=now_txt, max=max_txt
            )
        else:
            text = self.tr("PCIe link (now of max): ") + " &nbsp; ".join(cells) if cells else ""
        set_label_text(self.links, text)
        self.set_sentence(pcie_sentence(gpus, gen, width, mgen, mwidth))
        self.populated = bool(rep_tx or rep_rx)

    def readout(self, t: float) -> str:
        return self.gpu_readout(t, _readout_line)


def _readout_line(g: int, at: ValueAt) -> str:
    line = f"PCIe {_gb(at('pcie_tx_bps'))} / {_gb(at('pcie_rx_bps'))}"
    ntx = at("nvlink_tx_bps")
    if ntx is not None:
        line += f" · NVLink {_gb(ntx)} / {_gb(at('nvlink_rx_bps'))}"
    return line


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, (int, float)) else None


def _gb(x: float | None) -> str:
    return fmt(x / GB if x is not None else None, "GB/s", 2)
