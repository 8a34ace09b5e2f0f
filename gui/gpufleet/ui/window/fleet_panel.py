"""The left side of the main window: the fleet at a glance, the selected host's GPUs as cards,
and the active alerts, one scannable line each ("host · what · for how long"), the whole
sentence of the one selected underneath.

Nothing here sets the window's width from its text: the fleet list's columns are sized to
their values (numbers and prices never cut) except the host name, which is elided past
``HOST_CHARS`` with the full name as a tooltip, and the reason, which takes what is left;
titles wrap, card notes are elided. A long status on one host cannot widen the window.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QCoreApplication, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.text import catalogue
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.text.evidence import evidence_lines
from gpufleet.ui.i18n import state_name
from gpufleet.ui.viewmodel.summary import (
    CURRENCY_SYMBOL,
    GpuSummary,
    HostSummary,
    money,
    state_advice,
    without_host_suffix,
)
from gpufleet.ui.widgets.elided import ElidedLabel, Part
from gpufleet.ui.widgets.fast_table import PAD, FastTableView
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
PRICE_COL, REASON_COL = 4, 5
# Host names longer than this many average characters are elided in the list (the whole
# name is the cell's tooltip): provider names such as "h100-sxm5-eu-west-spot-7" would
# otherwise take the reason's room.
HOST_CHARS = 14
# More alerts than this, over more than one host, are grouped under a line per host.
GROUP_ALERTS_OVER = 6
# The role of an alert row's Alert (group header rows have none).
ALERT_ROLE = Qt.ItemDataRole.UserRole


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
        # The card's width comes from the panel, not from its text (a long note used to
        # widen the window): the label may be narrower than its text and clips it.
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setMinimumWidth(0)
        lay.addWidget(self.label)
        self.note = ElidedLabel(min_chars=4)
        self.note.hide()
        lay.addWidget(self.note)
        self._text = ""
        self._state = ""

    def show_gpu(self, g: GpuSummary) -> None:
        self.gpu = g.gpu
        t = self.theme
        hot = g.temp is not None and g.temp_slowdown is not None and g.temp >= g.temp_slowdown - 5
        temp = "—" if g.temp is None else f"{g.temp:.0f} °C"
        # Only heat colours the temperature: a GPU critical for a down NVLink link or a
        # miner showed its 34 °C in red, as if it were overheating.
        if hot:
            warn = t.state_hex(CRIT if g.state == CRIT else WARN)
            temp = f'<span style="color:{warn}">{temp}</span>'
        sm = "—" if g.sm is None else f"{g.sm:,.0f}".replace(",", " ") + " MHz"
        pw = "—" if g.power is None else f"{g.power:.0f} W"
        ps = "" if g.pstate is None else f" · P{g.pstate:.0f}"
        if g.note:
            self.note.set_text(f"{SYMBOL[g.state]} {g.note}", t.state_hex(g.state))
        self.note.setVisible(bool(g.note))
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
            f'<span style="color:{m}">·</span> {pw}'
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
                f'<span style="color:{m}">·</span> {sms}'
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


def alert_line(alert: Any, title: str, now: float) -> str:
    """One line an eye can scan: "a100-ecc · NVLink link down on GPU 1 · 12 min". The title
    names the GPU when the alert is about one; the host comes first unless the title starts
    with it ("a100-eval idle while billed")."""
    # (Case-blind: the catalogue keeps host names as they are, but a title from elsewhere,
    # an Alertmanager summary, may spell the host in another case.)
    host = str(alert.host)
    starts = title.lower().startswith(host.lower())
    if not starts:
        # The host goes first, so the title's own "… on GPU 2 of a100-ecc" loses its end.
        title = without_host_suffix(title, host)
    parts = [] if starts else [host]
    if alert.gpu is not None and f"GPU {alert.gpu}" not in title:
        parts.append(f"GPU {alert.gpu}")
    parts.append(title)
    # Whole minutes: the line (and the list) changes once a minute, not every second.
    age = max(0.0, now - float(alert.started_t))
    minutes = max(1, round(age / 60.0))
    parts.append(
        catalogue.translated("Units", "{n} min").format(n=minutes)
        if minutes < 90
        else catalogue.duration(age)
    )
    return " · ".join(parts)


def evidence_text(alert: Any) -> str:
    """The alert's evidence as "what: value" lines in words and units, for the tooltip."""
    return "\n".join(evidence_lines(dict(alert.evidence)))


class FleetPanel(QWidget):
    host_selected = Signal(str)
    alert_activated = Signal(object)  # the Alert
    alert_current = Signal(object)  # the Alert shown underneath, or None
    gpu_clicked = Signal(int)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = theme
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        lay.addWidget(split)
        # -- the fleet list
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>" + self.tr("Fleet") + "</b>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        tl.addWidget(self.title)
        self.model = RowsModel(
            tuple(QCoreApplication.translate("FleetPanel", h) for h in HOST_HEADERS)
        )
        self.proxy = sorted_proxy(self.model)
        self.table = FastTableView()
        self.table.setModel(self.proxy)
        hh = self.table.horizontalHeader()
        # Worst first (critical, warning, unreachable, healthy, then by name) until the user
        # sorts otherwise: the indicator is set before sorting is enabled, which sorts by it
        # (Qt's default indicator is descending, which listed the healthy hosts first).
        hh.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        hh.setSectionResizeMode(REASON_COL, QHeaderView.ResizeMode.Stretch)
        hh.setMinimumSectionSize(24)
        self._widths: tuple[int, ...] = ()
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        tl.addWidget(self.table)
        split.addWidget(top)
        # -- GPU cards of the selected host
        mid = QWidget()
        ml = QVBoxLayout(mid)
        ml.setContentsMargins(0, 0, 0, 0)
        self.cards_title = ElidedLabel(min_chars=6)
        ml.addWidget(self.cards_title)
        # What to do about a host that answers but has nothing to monitor (no GPU, NVML).
        self.cards_note = QLabel("")
        self.cards_note.setWordWrap(True)
        self.cards_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.cards_note.hide()
        ml.addWidget(self.cards_note)
        self.cards_box = QGridLayout()
        self.cards_box.setSpacing(6)
        ml.addLayout(self.cards_box)
        # The host's latest arrival benchmark (is it the card paid for?), under its cards.
        self.cards_bench = QLabel("")
        self.cards_bench.setWordWrap(True)
        self.cards_bench.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.cards_bench.setStyleSheet(f"color: {theme.muted}")
        self.cards_bench.hide()
        ml.addWidget(self.cards_bench)
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
        self.alerts.setWordWrap(False)
        self.alerts.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.alerts.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.alerts.setUniformItemSizes(True)
        self.alerts.setAlternatingRowColors(False)
        self.alerts.itemActivated.connect(self._alert_item)
        self.alerts.itemDoubleClicked.connect(self._alert_item)
        self.alerts.currentItemChanged.connect(self._alert_current)
        bl.addWidget(self.alerts, 1)
        # The selected alert's whole sentence, and what to do with it.
        self.alert_detail = QLabel("")
        self.alert_detail.setWordWrap(True)
        self.alert_detail.setTextFormat(Qt.TextFormat.RichText)
        self.alert_detail.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.alert_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bl.addWidget(self.alert_detail)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        self.open_alert_btn = QPushButton(self.tr("Open"))
        self.open_alert_btn.setToolTip(
            self.tr("Show this host, on the tab that explains the alert, at the moment it started")
        )
        self.open_alert_btn.clicked.connect(self._open_current)
        buttons.addWidget(self.open_alert_btn)
        self.alert_buttons = buttons  # the main window adds "Export evidence…" here
        buttons.addStretch(1)
        bl.addLayout(buttons)
        self._items: list[tuple[Any, str, str, str]] = []
        self._current_alert: Any = None
        self._show_detail(None)
        split.addWidget(bot)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        self.selected: str | None = None
        self._wanted: str | None = None
        self._alert_keys: list[str] = []
        # A note after an alert's line (acknowledged, snoozed, an action pending), set by
        # gpufleet.ui.controllers.alert_wiring.
        self.alert_marks: Callable[[Any], str] | None = None
        self.summaries: dict[str, HostSummary] = {}
        self.setMinimumWidth(260)

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
                        (-s.order, s.host),
                        colour,
                        f"{s.host} — {state_name(s.state)}"
                        + (f"\n{s.sampler_cost}" if s.sampler_cost else "")
                        + (f"\n{s.bench}" if s.bench else "")
                        + (f"\n{s.sensors}" if s.sensors else "")
                        + (f"\n{s.provider}" if s.provider else ""),
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
                        reason,
                        (-s.order, s.reason),
                        colour if s.state != OK else t.muted,
                        s.reason or None,
                    ),
                )
            )
            keys.append(s.host)
        self.model.set_rows(rows, keys)
        self._price_header(summaries)
        self._fit_columns(rows)
        self.title.setText(header)
        if self._wanted in keys:
            self.select_host(self._wanted)
        elif self.selected is None and keys:
            self.select_host(self.proxy.data(self.proxy.index(0, 0), KEY_ROLE))
        self._show_cards()

    def _price_header(self, summaries: Sequence[HostSummary]) -> None:
        """ "$/h" when every priced host bills in one currency (the sign, else the code);
        "/h" for a mixed fleet, whose cells carry their own signs."""
        currencies = {s.currency for s in summaries if s.price is not None}
        text = QCoreApplication.translate("FleetPanel", HOST_HEADERS[PRICE_COL])
        if len(currencies) == 1:
            cur = currencies.pop()
            text = CURRENCY_SYMBOL.get(cur, cur + " ") + text
        if self.model.headerData(PRICE_COL, Qt.Orientation.Horizontal) != text:
            self.model.setHeaderData(PRICE_COL, Qt.Orientation.Horizontal, text)

    def _fit_columns(self, rows: Sequence[tuple[Cell, ...]]) -> None:
        """Every column but the reason as wide as its widest value (and its header with the
        sort arrow), the host name capped at HOST_CHARS; set only when a width changes."""
        fm = QFontMetrics(self.table.font())
        hfont = QFont(self.table.horizontalHeader().font())
        hfm = QFontMetrics(hfont)
        arrow = 18  # the header's sort indicator and margins
        widths = []
        for c in range(REASON_COL):
            head = str(self.model.headerData(c, Qt.Orientation.Horizontal) or "")
            w = max(
                [hfm.horizontalAdvance(head) + arrow]
                + [fm.horizontalAdvance(r[c].text) + 2 * PAD + 2 for r in rows]
            )
            if c == 0:
                w = min(w, fm.averageCharWidth() * (HOST_CHARS + 2) + 2 * PAD)
            widths.append(w)
        if tuple(widths) == self._widths:
            return
        self._widths = tuple(widths)
        for c, w in enumerate(widths):
            self.table.setColumnWidth(c, w)

    def select_host(self, host: str) -> None:
        """Select the host's row; asked before the host is listed (the first summaries
        come a moment after the window), the host is selected as soon as it is."""
        self._wanted = host
        for r in range(self.proxy.rowCount()):
            if self.proxy.data(self.proxy.index(r, 0), KEY_ROLE) == host:
                self.table.selectionModel().setCurrentIndex(
                    self.proxy.index(r, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect
                    | QItemSelectionModel.SelectionFlag.Rows,
                )
                self._wanted = None
                return

    def host_order(self) -> list[str]:
        """The hosts as the list shows them, top to bottom."""
        return [
            str(self.proxy.data(self.proxy.index(r, 0), KEY_ROLE))
            for r in range(self.proxy.rowCount())
        ]

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
        advice = state_advice(s.session_state) if s is not None else ""
        if advice and s is not None:
            colour = self.theme.state_hex(s.state)
            self.cards_note.setText(
                f'<span style="color:{colour}">{SYMBOL[s.state]} {html.escape(s.reason)}</span>'
                f"<br>{html.escape(advice)}"
            )
        self.cards_note.setVisible(bool(advice))
        if s is not None:
            self.cards_title.set_parts(
                [
                    Part(s.host, bold=True),
                    Part(f" {s.model} · " + self.tr("now"), colour=self.theme.muted),
                ]
            )
            self.cards_title.setToolTip(s.bench)
            self.cards_bench.setText(s.bench)
            self.cards_bench.setVisible(bool(s.bench))

    # -- alerts ----------------------------------------------------------------------------

    def set_alerts(self, items: Sequence[tuple[Any, str, str, str]], now: float) -> None:
        """``items``: (alert, state for colour/symbol, title, sentence), worst first. Each
        alert is one line; grouped under a line per host when there are many."""
        marks = [self.alert_marks(a) if self.alert_marks else "" for a, *_ in items]
        lines = [
            alert_line(a, title, now) + (f" [{m}]" if m else "")
            for (a, _, title, _), m in zip(items, marks, strict=True)
        ]
        hosts = {a.host for a, *_ in items}
        grouped = len(items) > GROUP_ALERTS_OVER and len(hosts) > 1
        keys = [f"{grouped}"] + [
            f"{a.id}:{a.state}:{line}:{text}"
            for (a, _, _, text), line in zip(items, lines, strict=True)
        ]
        n = len(items)
        alerts = self.tr("Alerts")
        self.alerts_title.setText(
            f"<b>{alerts}</b> ({n})" if n else f"<b>{alerts}</b> " + self.tr("— none active")
        )
        if keys == self._alert_keys:
            return
        self._alert_keys = keys
        self._items = list(items)
        keep = getattr(self._current_alert, "id", None)
        self.alerts.blockSignals(True)
        try:
            self.alerts.clear()
            rows = list(zip(items, lines, strict=True))
            if grouped:
                order: dict[str, int] = {}
                for (a, *_), _line in rows:
                    order.setdefault(a.host, len(order))  # worst first: the first alert's
                rows.sort(key=lambda r: order[r[0][0].host])
            host = None
            current = None
            for (a, state, _title, text), line in rows:
                if grouped and a.host != host:
                    host = a.host
                    count = sum(1 for (b, *_), _ in rows if b.host == host)
                    head = QListWidgetItem(
                        (
                            self.tr("{host}: {n} alert")
                            if count == 1
                            else self.tr("{host}: {n} alerts")
                        ).format(host=host, n=count)
                    )
                    f = QFont(self.alerts.font())
                    f.setBold(True)
                    head.setFont(f)
                    head.setFlags(Qt.ItemFlag.NoItemFlags)
                    self.alerts.addItem(head)
                item = QListWidgetItem(f"{SYMBOL.get(state, '•')} {line}")
                item.setForeground(self.theme.state_colour(state))
                item.setData(ALERT_ROLE, a)
                tip = html.escape(text)
                ev = evidence_text(a)
                if ev:
                    tip += "<br><br><small>" + html.escape(ev).replace("\n", "<br>") + "</small>"
                item.setToolTip(f"<p>{tip}</p>")
                self.alerts.addItem(item)
                if a.id == keep:
                    current = item
            if current is not None:
                self.alerts.setCurrentItem(current)
        finally:
            self.alerts.blockSignals(False)
        self._show_detail(current.data(ALERT_ROLE) if current is not None else None)

    def alert_rows(self) -> list[tuple[Any, str]]:
        """(alert, line) of every alert row, top to bottom (group headers left out)."""
        out = []
        for i in range(self.alerts.count()):
            item = self.alerts.item(i)
            a = item.data(ALERT_ROLE)
            if a is not None:
                out.append((a, item.text()))
        return out

    def _sentence(self, alert: Any) -> str:
        return next((text for a, _, _, text in self._items if a.id == alert.id), "")

    def _show_detail(self, alert: Any) -> None:
        self._current_alert = alert
        self.alert_detail.setVisible(alert is not None)
        self.open_alert_btn.setEnabled(alert is not None)
        if alert is None:
            self.alert_detail.setText("")
        else:
            self.alert_detail.setText(html.escape(self._sentence(alert)))
        self.alert_current.emit(alert)

    def _alert_current(self, item: QListWidgetItem | None, _prev: Any) -> None:
        self._show_detail(item.data(ALERT_ROLE) if item is not None else None)

    def current_alert(self) -> Any:
        return self._current_alert

    def _open_current(self) -> None:
        if self._current_alert is not None:
            self.alert_activated.emit(self._current_alert)

    def _alert_item(self, item: QListWidgetItem) -> None:
        a = item.data(ALERT_ROLE)
        if a is not None:
            self.alert_activated.emit(a)


__all__ = ["CRIT", "FleetPanel", "GpuCard"]
