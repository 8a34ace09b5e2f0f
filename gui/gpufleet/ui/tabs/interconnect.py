"""Interconnect: PCIe TX/RX per GPU with the link generation and width (current vs max), and
NVLink TX/RX per GPU against its nominal bandwidth; "per link" on demand: a GPU × link grid of
the per-link NVLink traffic against each link's nominal, with the down and slow links named in
a sentence that says what to do. The grid shows the moment under the crosshair while it is
shown (its title says which), the latest values otherwise."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from gpufleet.core.live.links import LinkIssue, LinkSnapshot, link_issues
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.text.throughput import throughput_note, throughput_period
from gpufleet.core.wire.messages import Hello
from gpufleet.ui.tabs.base import PlotTab, ValueAt, fmt, gpu_label
from gpufleet.ui.tabs.link_grid import LinkGrid
from gpufleet.ui.tabs.sentences import pcie_sentence
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.plots import set_label_text, swatch
from gpufleet.ui.widgets.theme import REASON_BANDS, Theme

GB = 1e9


class InterconnectTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Interconnect")
    # The host whose per-link grid is on screen, on each refresh that shows it: its sampler
    # is asked to read the per-link values at their full rate meanwhile.
    links_watched = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.links = QLabel("")
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setWordWrap(True)
        self.box.insertWidget(0, self.links)
        # Two lines: on a 768 px screen with the per-link grid open a plot is ~210 px high,
        # shorter than the label on one line (it ran into the next plot's).
        bright = self.tr("TX bright, RX dark")
        self.pcie = self.add_plot(self.tr("PCIe (GB/s)") + "<br>" + bright)
        self.nvl = self.add_plot(self.tr("NVLink (GB/s)") + "<br>" + bright)
        self.finish()
        # Per link, on demand: hidden until the user asks; disabled on hosts without NVLink.
        self.per_link = QCheckBox(self.tr("NVLink per link"))
        self.per_link.setEnabled(False)
        self.per_link.toggled.connect(self._toggled)
        self.box.insertWidget(0, self.per_link)
        self.link_panel = QWidget()
        lay = QVBoxLayout(self.link_panel)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.link_key = QLabel("")
        self.link_key.setObjectName("muted")
        self.grid = LinkGrid(theme)
        self.grid.down_text = self.tr("down")
        self.link_text = QLabel("")
        self.link_text.setWordWrap(True)
        self.link_text.setTextFormat(Qt.TextFormat.RichText)
        self.link_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.link_key)
        lay.addWidget(self.grid)
        lay.addWidget(self.link_text)
        self.link_panel.setVisible(False)
        self.box.insertWidget(self.box.indexOf(self.sentence), self.link_panel)
        self._links_drawn: object = None
        self.links_populated = False  # True once the grid drew a links message (tests)

    def refresh_if_changed(self, view: View) -> bool:
        if super().refresh_if_changed(view):
            return True
        # No new samples (a still picture, a host that went quiet): the grid still follows
        # the crosshair hiding; _refresh_links returns at once when its moment is unchanged.
        if self.link_panel.isVisible():
            self._refresh_links(view)
        return False

    def _moment(self) -> float | None:
        """The crosshair's time while it is shown, else None (the latest values)."""
        ch = self.crosshair
        return ch.t if ch is not None else None

    def _toggled(self, _on: bool) -> None:
        self._links_drawn = None
        self.invalidate()
        if self.last_view is not None:
            self._refresh_links(self.last_view)

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        hello = view.hello()
        # Where the sampler reads the byte counters less often than it samples.
        every = throughput_period(hello.raw, hello.interval_s) if hello is not None else None
        rep_tx, _ = self.draw_metric(self.pcie, view, "pcie_tx_bps", scale=1 / GB, mean_over=every)
        rep_rx, _ = self.draw_metric(
            self.pcie,
            view,
            "pcie_rx_bps",
            scale=1 / GB,
            key_prefix="rx",
            name_suffix=" RX",
            secondary=True,
            legend=False,
            mean_over=every,
        )
        self.pcie.retain([("", g) for g in gpus] + [("rx", g) for g in gpus])
        self.note_unreported(
            self.pcie, view, "pcie_tx_bps", rep_tx + rep_rx, self.tr("PCIe throughput")
        )
        if every is not None and (rep_tx or rep_rx):
            self.pcie.set_note(throughput_note("PCIe", every))
        rep_ntx, _ = self.draw_metric(
            self.nvl, view, "nvlink_tx_bps", scale=1 / GB, mean_over=every
        )
        rep_nrx, _ = self.draw_metric(
            self.nvl,
            view,
            "nvlink_rx_bps",
            scale=1 / GB,
            key_prefix="rx",
            name_suffix=" RX",
            secondary=True,
            legend=False,
            mean_over=every,
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
            if every is not None and (rep_ntx or rep_nrx):
                self.nvl.set_note(throughput_note("NVLink", every))
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
        self._refresh_links(view)

    # -- per link ------------------------------------------------------------------------------

    def _refresh_links(self, view: View) -> None:
        """The toggle's state and, while it is on, the grid: redrawn only when a new links
        message arrived (its version) or the host changed."""
        has, why = nvlink_presence(view.hello())
        self.per_link.setEnabled(has)
        self.per_link.setToolTip(
            self.tr("Per-link NVLink traffic and state, every 5 s")
            if has
            else self.tr("No NVLink on this host: {why}").format(
                why=why or self.tr("no NVLink links")
            )
        )
        show = has and self.per_link.isChecked()
        if self.link_panel.isVisible() != show:
            self.link_panel.setVisible(show)
        if not show:
            return
        self.links_watched.emit(view.host)
        links = view.live.links
        moment = self._moment()
        snap = links.at(view.host, moment) if moment is not None else None
        if snap is None:
            # No crosshair, or one before the live window (per-link values are live only):
            # the latest values, and the title's time says which moment they are.
            snap = links.latest(view.host)
        key = (view.host, links.version(view.host), snap.t if snap is not None else None)
        if key == self._links_drawn:
            return
        self._links_drawn = key
        self.grid.set_snapshot(snap)
        if snap is None:
            hello = view.hello()
            interval = hello.raw.get("links_interval_s") if hello is not None else None
            set_label_text(self.link_key, "")
            set_label_text(
                self.link_text,
                self.tr("Waiting for the first per-link values (sent every {s} s).").format(
                    s=fmt(interval if isinstance(interval, (int, float)) else 5.0)
                ),
            )
            return
        nominal = [float(x) for x in snap.speed.flat if x == x]
        nom = max(nominal) if nominal else None
        set_label_text(
            self.link_key,
            self.tr(
                "TX+RX per link (GB/s) at {time}; colour: share of the link's nominal "
                "{nominal} each way, dark 0 % to yellow 100 %"
            ).format(
                time=time.strftime("%H:%M:%S", time.localtime(snap.t)),
                nominal=fmt(nom / GB if nom else None, "GB/s"),
            ),
        )
        set_label_text(self.link_text, self.link_sentence(snap, link_issues(snap)))
        self.links_populated = True

    def link_sentence(self, snap: LinkSnapshot, issues: list[LinkIssue]) -> str:
        """Names the down and slow links and says what to do."""
        n_links = int((snap.up == snap.up).sum())  # known links
        down = [i for i in issues if i.kind == "down"]
        slow = [i for i in issues if i.kind == "slow"]
        if not down and not slow:
            frac = snap.fraction()
            busiest = float(frac[frac == frac].max()) if (frac == frac).any() else None
            return self.tr(
                "All {links} NVLink links of {gpus} GPUs are up; the busiest carries {pct} of "
                "its nominal bandwidth."
            ).format(
                links=n_links,
                gpus=len(snap.gpus),
                pct=fmt(busiest * 100 if busiest is not None else None, "%"),
            )
        parts: list[str] = []
        if down:
            names = ", ".join(
                self.tr("GPU {gpu} link {link}").format(gpu=i.gpu, link=i.link) for i in down
            )
            worst = down[0].gpu
            gi = snap.gpus.index(worst)
            up = int((snap.up[gi] == 1).sum())
            total = int((snap.up[gi] == snap.up[gi]).sum())
            parts.append(
                self.tr(
                    "<b>NVLink down: {names}.</b> GPU {gpu} runs on {up} of {total} links: "
                    "its all-reduce traffic is squeezed onto the others, its total stays below "
                    "nominal and every GPU waiting for it slows down."
                ).format(names=names, gpu=worst, up=up, total=total)
            )
        if slow:
            names = ", ".join(
                self.tr("GPU {gpu} link {link} ({value} vs {reference})").format(
                    gpu=i.gpu,
                    link=i.link,
                    value=fmt((i.value or 0) / GB, "GB/s", 1),
                    reference=fmt((i.reference or 0) / GB, "GB/s", 1),
                )
                for i in slow
            )
            parts.append(self.tr("Slower than its sibling links: {names}.").format(names=names))
        parts.append(
            self.tr(
                "Check on the instance with <code>nvidia-smi nvlink -s</code> (and "
                "<code>nvidia-smi nvlink -e</code> for errors); if a link stays down or slow, "
                "ask the provider to move you to another node."
            )
        )
        return " ".join(parts)

    def readout(self, t: float) -> str:
        # Called by the crosshair as it moves (its t already set): the grid follows it.
        if self.last_view is not None and self.link_panel.isVisible():
            self._refresh_links(self.last_view)
        return self.gpu_readout(t, _readout_line)


def _readout_line(g: int, at: ValueAt) -> str:
    line = f"PCIe {_gb(at('pcie_tx_bps'))} / {_gb(at('pcie_rx_bps'))}"
    ntx = at("nvlink_tx_bps")
    if ntx is not None:
        line += f" · NVLink {_gb(ntx)} / {_gb(at('nvlink_rx_bps'))}"
    return line


def nvlink_presence(hello: Hello | None) -> tuple[bool, str | None]:
    """Whether the host has NVLink GPUs that send per-link values, else why not (the first
    GPU's ``links_unsupported`` reason from hello)."""
    if hello is None:
        return False, None
    why: str | None = None
    for g in hello.gpus:
        links = g.nominal_value("nvlink_links")
        reason = g.extra.get("links_unsupported")
        if isinstance(links, (int, float)) and links > 0 and reason is None:
            return True, None
        if why is None and isinstance(reason, str):
            why = reason
    return False, why


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, (int, float)) else None


def _gb(x: float | None) -> str:
    return fmt(x / GB if x is not None else None, "GB/s", 2)
