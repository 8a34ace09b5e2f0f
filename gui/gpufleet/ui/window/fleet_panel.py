"""The left side of the main window: the fleet at a glance, the selected host's GPUs as cards,
and the active alerts written as sentences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.ui.i18n import state_name
from gpufleet.ui.viewmodel.summary import GpuSummary, HostSummary, money
from gpufleet.ui.widgets.fast_table import FastTableView
from gpufleet.ui.widgets.table_model import KEY_ROLE, Cell, RowsModel, sorted_proxy
from gpufleet.ui.widgets.theme import CRIT, OK, SYMBOL, WARN, Theme, gpu_colour

HOST_HEADERS = (
    QT_TRANSLATE_NOOP("FleetPanel", "Host"),
    QT_TRANSLATE_NOOP("FleetPanel", "GPUs"),
    QT_TRANSLATE_NOOP("FleetPanel", "Util"),
    QT_TRANSLATE_NOOP("FleetPanel", "Hot"),
    QT_TRANSLATE_NOOP("FleetPanel", "/h"),
    QT_TRANSLATE_NOOP("FleetPanel", "Reason"),
)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f}%"


class GpuCard(QFrame):
    clicked = Signal(int)

    def __init__(self, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.gpu = -1
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("gpucard")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 5, 8, 5)
        lay.setSpacing(1)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.label)
        self._text = ""
        self._state = ""

    def show_gpu(self, g: GpuSummary) -> None:
        self.gpu = g.gpu
        t = self.theme
        hot = g.temp is not None and g.temp_slowdown is not None and g.temp >= g.temp_slowdown - 5
        temp = "—" if g.temp is None else f"{g.temp:.0f} °C"
        if hot or g.state != OK:
            warn = t.state_hex(WARN if g.state != CRIT else CRIT)
            temp = f'<span style="color:{warn}">{temp}</span>'
        sm = "—" if g.sm is None else f"{g.sm:,.0f}".replace(",", " ") + " MHz"
        pw = "—" if g.power is None else f"{g.power:.0f} W"
        ps = "" if g.pstate is None else f" · P{g.pstate:.0f}"
        note = (
            f'<br><span style="color:{t.state_hex(g.state)}">{SYMBOL[g.state]} {g.note}</span>'
            if g.note
            else ""
        )
        m = t.muted
        gpu = self.tr("GPU {n}").format(n=g.gpu)
        if g.mig is not None:  # a MIG slice: its parent and its profile
            gpu = self.tr("GPU {n} · MIG {profile}").format(
                n=g.mig.parent, profile=g.mig.profile or g.mig.slot
            )
        util, mem, act = self.tr("util"), self.tr("mem"), self.tr("SM act")
        text = (
            f'<span style="color:{gpu_colour(g.gpu)}">■</span> <b>{gpu}</b>{ps}<br>'
            f'<span style="color:{m}">{util}</span> {_pct(g.util)} '
            + (
                f'<span style="color:{m}">{act}</span> {_pct(g.sm_active)} '
                if g.sm_active is not None
                else ""
            )
            + f'<span style="color:{m}">{mem}</span> {_pct(g.mem_pct)}<br>'
            f'<span style="color:{m}">SM</span> {sm} {temp} '
            f'<span style="color:{m}">·</span> {pw}{note}'
        )
        if g.mig is not None:
            # A slice has its own memory and SMs; clocks, power and temperature are the card's.
            sms = (
                self.tr("{n} SMs ({share} of the card)").format(
                    n=g.mig.sm_count,
                    share=_pct(None if g.mig.sm_share is None else 100.0 * g.mig.sm_share),
                )
                if g.mig.sm_count is not None
                else ""
            )
            text = (
                f'<span style="color:{gpu_colour(g.gpu)}">■</span> <b>{gpu}</b><br>'
                f'<span style="color:{m}">{mem}</span> {_pct(g.mem_pct)} '
                f'<span style="color:{m}">·</span> {sms}{note}'
            )
        if text != self._text:
            self._text = text
            self.label.setText(text)
        if g.state != self._state:
            self._state = g.state
            border = t.state_hex(g.state) if g.state != OK else t.muted + "60"
            self.setStyleSheet(
                f"QFrame#gpucard {{ border: 1px solid {border}; border-radius: 4px; }}"
            )

    def mousePressEvent(self, event: Any) -> None:
        self.clicked.emit(self.gpu)
        super().mousePressEvent(event)


class FleetPanel(QWidget):
    host_selected = Signal(str)
    alert_activated = Signal(object)  # the Alert
    gpu_clicked = Signal(int)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        split = QSplitter(Qt.Orientation.Vertical)
        lay.addWidget(split)
        # -- the fleet list
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>" + self.tr("Fleet") + "</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        tl.addWidget(self.title)
        self.model = RowsModel(
            tuple(QCoreApplication.translate("FleetPanel", h) for h in HOST_HEADERS)
        )
        self.proxy = sorted_proxy(self.model)
        self.table = FastTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        tl.addWidget(self.table)
        split.addWidget(top)
        # -- GPU cards of the selected host
        mid = QWidget()
        ml = QVBoxLayout(mid)
        ml.setContentsMargins(0, 0, 0, 0)
        self.cards_title = QLabel("")
        self.cards_title.setTextFormat(Qt.TextFormat.RichText)
        ml.addWidget(self.cards_title)
        self.cards_box = QGridLayout()
        self.cards_box.setSpacing(6)
        ml.addLayout(self.cards_box)
        ml.addStretch(1)
        self.cards: list[GpuCard] = []
        split.addWidget(mid)
        # -- alerts
        bot = QWidget()
        bl = QVBoxLayout(bot)
        bl.setContentsMargins(0, 0, 0, 0)
        self.alerts_title = QLabel("<b>" + self.tr("Alerts") + "</b>")
        bl.addWidget(self.alerts_title)
        self.alerts = QListWidget()
        self.alerts.setWordWrap(True)
        self.alerts.setAlternatingRowColors(False)
        self.alerts.itemActivated.connect(self._alert_item)
        self.alerts.itemClicked.connect(self._alert_item)
        bl.addWidget(self.alerts)
        split.addWidget(bot)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        self.selected: str | None = None
        self._alert_keys: list[str] = []
        # A note after an alert's sentence (acknowledged, snoozed, an action pending), set
        # by gpufleet.ui.controllers.alert_wiring.
        self.alert_marks: Callable[[Any], str] | None = None
        self.summaries: dict[str, HostSummary] = {}

    # -- host list -------------------------------------------------------------------------

    def set_hosts(self, summaries: Sequence[HostSummary], header: str) -> None:
        self.summaries = {s.host: s for s in summaries}
        t = self.theme
        rows, keys = [], []
        for s in summaries:
            colour = t.state_hex(s.state)
            price = money(s.price, s.currency) if s.price is not None else "—"
            reason = f"{SYMBOL[s.state]} {s.reason}" if s.reason else ""
            rows.append(
                (
                    Cell(
                        f"{SYMBOL[s.state]} {s.host}",
                        (-s.rank, s.host),
                        colour,
                        state_name(s.state),
                    ),
                    Cell(s.model, len(s.gpus)),
                    Cell(_pct(s.util), s.util if s.util is not None else -1, align_right=True),
                    Cell(
                        "—" if s.hottest is None else f"{s.hottest:.0f}°C",
                        s.hottest if s.hottest is not None else -1,
                        align_right=True,
                    ),
                    Cell(price, s.price or 0.0, align_right=True),
                    Cell(
                        reason, (-s.rank, s.reason), colour if s.state != OK else t.muted, s.reason
                    ),
                )
            )
            keys.append(s.host)
        self.model.set_rows(rows, keys)
        if self.proxy.sortColumn() < 0:
            self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # worst first
        self.title.setText(header)
        if self.selected is None and keys:
            self.select_host(self.proxy.data(self.proxy.index(0, 0), KEY_ROLE))
        self._show_cards()

    def select_host(self, host: str) -> None:
        for r in range(self.proxy.rowCount()):
            if self.proxy.data(self.proxy.index(r, 0), KEY_ROLE) == host:
                self.table.selectionModel().setCurrentIndex(
                    self.proxy.index(r, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
                return

    def _row_changed(self, current: Any, _previous: Any) -> None:
        host = self.proxy.data(current, KEY_ROLE) if current.isValid() else None
        if host and host != self.selected:
            self.selected = host
            self._show_cards()
            self.host_selected.emit(host)

    def host_colour(self, host: str) -> str | None:
        """The colour of the host's light in the list (tests read it)."""
        row = self.model.row_of(host)
        return self.model.cell(row, 0).colour if row is not None else None

    def host_symbol(self, host: str) -> str | None:
        row = self.model.row_of(host)
        return self.model.cell(row, 0).text.split(" ")[0] if row is not None else None

    # -- cards -----------------------------------------------------------------------------

    def _show_cards(self) -> None:
        s = self.summaries.get(self.selected or "")
        gpus = s.gpus if s else ()
        while len(self.cards) < len(gpus):
            card = GpuCard(self.theme)
            card.clicked.connect(self.gpu_clicked)
            n = len(self.cards)
            self.cards_box.addWidget(card, n // 2, n % 2)
            self.cards.append(card)
        for i, card in enumerate(self.cards):
            card.setVisible(i < len(gpus))
            if i < len(gpus):
                card.show_gpu(gpus[i])
        if s is not None:
            self.cards_title.setText(
                f'<b>{s.host}</b> <span style="color:{self.theme.muted}">{s.model} · '
                + self.tr("now")
                + "</span>"
            )

    # -- alerts ----------------------------------------------------------------------------

    def set_alerts(self, items: Sequence[tuple[Any, str, str]]) -> None:
        """``items``: (alert, state for colour/symbol, sentence), worst first."""
        marks = [self.alert_marks(a) if self.alert_marks else "" for a, _, _ in items]
        keys = [
            f"{a.id}:{a.state}:{text}:{m}" for (a, _, text), m in zip(items, marks, strict=True)
        ]
        if keys == self._alert_keys:
            return
        self._alert_keys = keys
        self.alerts.clear()
        for (a, state, text), mark in zip(items, marks, strict=True):
            item = QListWidgetItem(
                f"{SYMBOL.get(state, '•')} {text}" + (f" [{mark}]" if mark else "")
            )
            item.setForeground(self.theme.state_colour(state))
            item.setData(Qt.ItemDataRole.UserRole, a)
            item.setToolTip(self.tr("Click to open this host at the moment it started"))
            self.alerts.addItem(item)
        n = len(items)
        alerts = self.tr("Alerts")
        self.alerts_title.setText(
            f"<b>{alerts}</b> ({n})" if n else f"<b>{alerts}</b> " + self.tr("— none active")
        )

    def _alert_item(self, item: QListWidgetItem) -> None:
        a = item.data(Qt.ItemDataRole.UserRole)
        if a is not None:
            self.alert_activated.emit(a)


__all__ = ["CRIT", "FleetPanel", "GpuCard"]
