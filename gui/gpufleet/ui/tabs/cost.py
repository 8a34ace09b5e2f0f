"""Cost: what each host has cost over the shown time range, with the idle part marked, and
the totals since billing started (from the core's CostTracker) with the 24 h projection.

"Idle" is the definition used everywhere (``core.cost.idle``), counted as the cost tracker counts it
(``gpufleet.core.cost.rental.idle_mask`` and ``accumulate``: every GPU under 5 %
utilization and under 10 % memory used, a lost GPU idle, an unreported utilization not idle;
each interval takes the state of its first sample, a gap is billed but not idle), and a GPU
the ``idle_held`` rule holds (memory held, no work) idle from when it went quiet until the
alert resolves (``core.cost.held_idle.host_idle``, over the tracker's hold periods), so the
range's figures and the
tracker's since-billing-start ones beside them agree. The rental bills wall-clock time, also
while the link is down.

Totals are per currency, never added across currencies; with the user's exchange rates
(``set_exchange_rates``) one converted total is added, labelled as such. Each host's billing
state (running, stopped paying storage, ended) is its last column, with what its watchdog does
and, while a call found its provider's API changed, that it is no longer synced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QPoint, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QWidget

from gpufleet.core.cost.held_idle import Period, host_idle
from gpufleet.core.cost.rental import accumulate, idle_mask
from gpufleet.core.cost.totals import fleet_totals
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.providers.watchdog import current_state
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.text.provider_drift import drift_word
from gpufleet.ui.tabs.base import PlotTab
from gpufleet.ui.viewmodel.summary import money
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.fast_table import FastTableView
from gpufleet.ui.widgets.plots import clock_text, set_axis_label
from gpufleet.ui.widgets.table_model import Cell, RowsModel, sorted_proxy
from gpufleet.ui.widgets.theme import Theme, gpu_colour

MAX_CURVES = 12
PER_REDRAW = 2  # hosts whose accumulated cost is recomputed per redraw
TOTAL_HEADERS = (
    QT_TRANSLATE_NOOP("CostTab", "Host"),
    QT_TRANSLATE_NOOP("CostTab", "Price"),
    QT_TRANSLATE_NOOP("CostTab", "In range"),
    QT_TRANSLATE_NOOP("CostTab", "of which idle"),
    QT_TRANSLATE_NOOP("CostTab", "Since billing start"),
    QT_TRANSLATE_NOOP("CostTab", "of which idle"),  # CostTracker's idle since billing start
    QT_TRANSLATE_NOOP("CostTab", "Busy share"),
    QT_TRANSLATE_NOOP("CostTab", "Next 24 h"),
    QT_TRANSLATE_NOOP("CostTab", "Budget"),
    QT_TRANSLATE_NOOP("CostTab", "Billing"),
)
BILLING_WORDS = {
    "running": QT_TRANSLATE_NOOP("CostTab", "running"),
    "storage": QT_TRANSLATE_NOOP("CostTab", "stopped: storage only"),
    "ended": QT_TRANSLATE_NOOP("CostTab", "ended"),
}


def two_lines(header: str) -> str:
    """A header of several words on two lines, broken at the space nearest its middle: the
    figures under "Since billing start" are half its width, and ten one-line headers left
    the Billing column no room in a 1366-pixel-wide window. One word (and Chinese, written
    without spaces) stays as it is."""
    spaces = [i for i, ch in enumerate(header) if ch == " "]
    if not spaces:
        return header
    cut = min(spaces, key=lambda i: abs(2 * i - len(header)))
    return header[:cut] + "\n" + header[cut + 1 :]


def accumulated(
    live: LiveBuffers,
    host: str,
    price: float,
    t0: float,
    t1: float,
    held: Sequence[Period] = (),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times, accumulated cost and accumulated idle cost over [t0, t1] for one host;
    ``held``: the tracker's hold periods (``CostSummary.held``), idle as it counts them."""
    gpus = live.gpus(host)
    hello = live.hello(host)
    # One snapshot: read one by one, a sample arriving in between made them differ in length.
    util, mem, lost = live.series_multi(
        host, gpus, ("util_gpu_pct", "mem_used_bytes", "lost"), t0, t1
    )
    if not util or not len(util[0]):
        return np.empty(0), np.empty(0), np.empty(0)
    t = util[0].t
    interval = (hello.interval_s if hello else None) or 1.0
    plain = []
    marker = np.ones(len(t), dtype=bool)
    for g, u, m, lo in zip(gpus, util, mem, lost, strict=True):
        g_info = hello.gpu(g) if hello else None
        total = g_info.nominal_value("mem_total_bytes") if g_info else None
        plain.append(idle_mask(u.v, m.v, float(total) if total else None, lo.v))
        marker &= np.isnan(u.v) & np.isnan(lo.v)
    idle = host_idle(t, gpus, plain, [u.v for u in util], held)
    # The NaN points the live buffers insert to draw a gap are not samples: dropped, the gap
    # is one long interval again, unknown time as the tracker counts it.
    marker[0] = False
    marker[1:] &= np.isclose(np.diff(t), interval)
    keep = ~marker
    t, idle = t[keep], idle[keep]
    cost, idle_cost = accumulate(t, idle, price, interval)
    return t, cost, idle_cost


class CostTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Cost")
    # The user set a host's billing state by hand (right click on its row): host, state.
    billing_requested = Signal(str, str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.plot = self.add_plot(self.tr("cost in this range (currency)"))
        self.finish()
        self.model = RowsModel(
            tuple(two_lines(QCoreApplication.translate("CostTab", h)) for h in TOTAL_HEADERS)
        )
        self.proxy = sorted_proxy(self.model)
        self.table = FastTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        hh = self.table.horizontalHeader()
        # Widths are set by _fit_columns: Qt's ResizeToContents gives every header room for
        # a sort arrow (~44 px over its text), and ten such columns pushed Billing (with the
        # watchdog's state) past the right edge of a laptop-wide window, cut to "runi".
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        hh.sortIndicatorChanged.connect(lambda *_: self._fit_columns())
        self._fitted: tuple[object, ...] = ()
        self.table.setMaximumHeight(190)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._billing_menu)
        self._row_hosts: list[str] = []
        self.box.insertWidget(1, self.table)
        self.fills: dict[str, pg.FillBetweenItem] = {}
        self._cache: dict[str, tuple[float, Any]] = {}
        self._drawn: dict[str, tuple[float, Any]] = {}
        self._idle_drawn: str | None = None
        self._currency = ""
        self._complete = False
        self._exchange: tuple[str, dict[str, float]] | None = None

    def set_exchange_rates(self, base: str, rates: Mapping[str, float]) -> None:
        """The user's rates (one unit of each currency in ``base``) for a converted total."""
        self._exchange = (base, dict(rates)) if rates else None

    def change_key(self, view: View) -> object:
        # Every host's data count here, and the cost tracker's latest summaries.
        if not self._complete:
            return object()  # round-robin recomputation still under way
        return (
            view.host,
            view.t0,
            view.t1,
            view.live.samples_total,
            id(view.cost),
            id(view.hosts),
            tuple(sorted(view.provider_notes.items())),
            self.width(),
            self.height(),
        )

    def refresh(self, view: View) -> None:
        self.last_view = view
        hosts = [h for h in view.hosts.values() if h.price_per_hour]
        hosts.sort(key=lambda h: -(h.price_per_hour or 0))
        shown = hosts[:MAX_CURVES]
        keys: list[object] = []
        rows, row_keys = [], []
        sum_range: dict[str, float] = {}
        sum_idle: dict[str, float] = {}
        currencies = {h.currency for h in hosts}
        self._currency = currencies.pop() if len(currencies) == 1 else ""
        # Recompute one host's accumulation per redraw (round robin, each at most every 5 s):
        # it needs full-resolution utilization, and cost moves slowly; 128 hosts at once
        # would stall the GUI thread.
        stale = [
            h
            for h in hosts
            if (ce := self._cache.get(h.name)) is None
            or abs(ce[0] - view.t1) > 5
            or abs(ce[1][3] - view.t0) > 5
        ]
        # Until every host's accumulation is current, keep redrawing on each timer tick.
        self._complete = len(stale) <= PER_REDRAW
        for h in stale[:PER_REDRAW]:
            held = getattr(view.cost.get(h.name), "held", ())
            t, c, ic = accumulated(
                view.live, h.name, h.price_per_hour or 0.0, view.t0, view.t1, held
            )
            self._cache[h.name] = (view.t1, (t, c, ic, view.t0))
        for i, h in enumerate(hosts):
            cached = self._cache.get(h.name)
            if cached is None:
                continue
            t, c, ic, _ = cached[1]
            in_range = float(c[-1]) if len(c) else 0.0
            idle_range = float(ic[-1]) if len(ic) else 0.0
            sum_range[h.currency] = sum_range.get(h.currency, 0.0) + in_range
            sum_idle[h.currency] = sum_idle.get(h.currency, 0.0) + idle_range
            if h in shown and len(t):
                colour = gpu_colour(i)
                total = self.plot.curve(("c", h.name), h.name, pg.mkPen(colour, width=1))
                keys += [("c", h.name)]
                fresh = self._drawn.get(h.name) is not cached
                if fresh:
                    step = max(1, len(t) // self.plot.pixel_width())
                    total.setData(t[::step], c[::step])
                self.plot._grow(c)
                if h.name == view.host:
                    # The selected host's idle part: a dotted line, shaded down to zero.
                    dotted = pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine)
                    idle = self.plot.curve(("i", h.name), "", dotted, legend=False)
                    zero = self.plot.curve(("z", h.name), "", pg.mkPen(None), legend=False)
                    keys += [("i", h.name), ("z", h.name)]
                    if h.name not in self.fills:
                        fill = pg.FillBetweenItem(idle, zero, brush=pg.mkBrush(colour + "50"))
                        self.plot.plot.addItem(fill)
                        self.fills[h.name] = fill
                    if fresh or self._idle_drawn != h.name:
                        step = max(1, len(t) // self.plot.pixel_width())
                        idle.setData(t[::step], ic[::step])
                        zero.setData(t[::step], np.zeros(len(t[::step])))
                        self._idle_drawn = h.name
                self._drawn[h.name] = cached
            s = view.cost.get(h.name)
            wd = current_state(view.live.hello(h.name), view.live.events(h.name))
            drift = view.provider_notes.get(h.name, "")
            rows.append(
                self._row(h.name, h.price_per_hour, h.currency, in_range, idle_range, s, wd, drift)
            )
            row_keys.append(h.name)
        for name in [n for n in self.fills if ("i", n) not in keys]:
            self.plot.plot.removeItem(self.fills.pop(name))
            if self._idle_drawn == name:
                self._idle_drawn = None
        self.plot.retain(keys)
        self.model.set_rows(rows, row_keys)
        self._fit_columns()
        self._row_hosts = list(row_keys)
        self.plot.fit_y()
        self.plot.set_note(
            "" if hosts else self.tr("No host has a price per hour: set one in Hosts → Edit.")
        )
        self.set_range(view.t0, view.t1)
        cur = self._currency or self.tr("mixed")
        set_axis_label(
            self.plot.plot.getAxis("left"),
            self.tr("cost in this range ({currency})").format(currency=cur),
        )
        base, rates = self._exchange or ("USD", {})
        totals = fleet_totals(
            [view.cost[h.name] for h in hosts if h.name in view.cost], rates, base
        )
        more = (
            self.tr(" Only the {n} priciest hosts are drawn.").format(n=MAX_CURVES)
            if len(hosts) > MAX_CURVES
            else ""
        )
        if hosts:
            # One figure per currency: never a sum of dollars and euros.
            spent = ", ".join(
                self.tr("{money} ({pct} % idle)").format(
                    money=money(v, cur),
                    pct=f"{100 * sum_idle.get(cur, 0.0) / v if v else 0.0:.0f}",
                )
                for cur, v in sorted(sum_range.items())
            )
            ahead = ", ".join(
                money(ct.projection_24h, cur)
                for cur, ct in totals.by_currency.items()
                if ct.projection_24h
            )
            conv = totals.converted
            self.set_sentence(
                self.tr(
                    "In this range the fleet cost {money} (the selected host's idle part is "
                    "shaded). "
                ).format(money=spent or money(0.0, self._currency or "USD"))
                + (
                    self.tr("At the current rates the next 24 h cost {money}.").format(money=ahead)
                    if ahead
                    else ""
                )
                + (
                    " "
                    + self.tr("Together about {money} by 24 h from now, {label}.").format(
                        money=money(conv.projection_24h, conv.currency),
                        label=self.tr("converted at your rates ({rates})").format(
                            rates=", ".join(
                                f"1 {c} = {r:g} {conv.currency}"
                                for c, r in sorted(conv.rates.items())
                            )
                        ),
                    )
                    + (
                        " "
                        + self.tr("Without a rate, not included: {c}.").format(
                            c=", ".join(conv.missing)
                        )
                        if conv.missing
                        else ""
                    )
                    if conv is not None
                    else ""
                )
                + more
            )
        self.populated = bool(hosts) and any(len(c[1][0]) for c in self._cache.values())

    def _row(
        self,
        host: str,
        price: float | None,
        currency: str,
        in_range: float,
        idle: float,
        s: Any,
        watchdog: Mapping[str, Any] | None = None,
        drift: str = "",
    ) -> tuple[Cell, ...]:
        def m(x: float | None) -> Cell:
            return Cell(money(x, currency), x if x is not None else -1, align_right=True)

        total = getattr(s, "total", None)
        eff = getattr(s, "effective_ratio", None)
        budget = getattr(s, "budget_used_frac", None)
        return (
            Cell(host),
            Cell(money(price, currency) + "/h", price or 0, align_right=True),
            m(in_range),
            m(idle),
            m(total),
            m(getattr(s, "idle", None)),
            Cell(
                "—" if eff is None else f"{eff * 100:.0f} %",
                eff or -1,
                align_right=True,
                tooltip=self.tr("share of the paid time the GPUs were doing work"),
            ),
            m(getattr(s, "projection_24h", None)),
            Cell(
                "—" if budget is None else f"{budget * 100:.0f} %", budget or -1, align_right=True
            ),
            self._billing_cell(
                getattr(s, "billing", None), getattr(s, "storage", None), currency, watchdog, drift
            ),
        )

    def _fit_columns(self) -> None:
        """Each figure's column at its contents' width (the sort arrow's room only where it
        is drawn), Billing over the rest of the table's width. Only when the contents, the
        width or the sort changed: a column the user resized keeps its width until then."""
        t = self.table
        hh = t.horizontalHeader()
        arrow = hh.sortIndicatorSection()
        least = hh.minimumSectionSize()
        last = len(TOTAL_HEADERS) - 1
        widths = [max(t.content_width(c, sort_arrow=c == arrow), least) for c in range(last)]
        key = (*widths, t.viewport().width(), arrow)
        if key == self._fitted:
            return
        self._fitted = key
        for c, w in enumerate(widths):
            t.setColumnWidth(c, w)
        floor = max(t.header_width(last, arrow == last), least)
        t.setColumnWidth(last, max(floor, t.viewport().width() - sum(widths)))

    def billing_menu(self, host: str) -> QMenu:
        """Set by hand where no provider says it: running, stopped paying storage, ended."""
        menu = QMenu(self)
        for state, label in (
            ("running", self.tr("Billing: running")),
            ("storage", self.tr("Billing: stopped, paying for storage")),
            ("ended", self.tr("Billing: ended (returned)")),
        ):
            act = menu.addAction(label)
            act.triggered.connect(lambda _=False, s=state: self.billing_requested.emit(host, s))
        return menu

    def _billing_menu(self, pos: QPoint) -> None:
        index = self.proxy.mapToSource(self.table.indexAt(pos))
        if not index.isValid() or index.row() >= len(self._row_hosts):
            return
        self.billing_menu(self._row_hosts[index.row()]).popup(
            self.table.viewport().mapToGlobal(pos)
        )

    def _billing_cell(
        self,
        state: str | None,
        storage: float | None,
        currency: str,
        watchdog: Mapping[str, Any] | None = None,
        drift: str = "",
    ) -> Cell:
        """The billing state, the watchdog's phase, and a provider API that changed (its
        sentence first in the tooltip: the state shown is no longer synced)."""
        if state is None and not drift:
            return Cell("—")
        word = (
            QCoreApplication.translate("CostTab", BILLING_WORDS.get(state, state))
            if state is not None
            else "—"
        )
        tips = [drift] if drift else []
        if drift:
            word += " · " + drift_word()
        if storage:
            tips.append(
                self.tr("stopped time so far cost {money} in storage").format(
                    money=money(storage, currency)
                )
            )
        wd = self._watchdog_words(watchdog)
        if wd:
            word += " · " + wd
            if watchdog and watchdog.get("message"):
                tips.append(str(watchdog["message"]))
            tips += self._readiness_tip(watchdog)
        # The whole text first: on a narrow window the column shows only its start.
        return Cell(word, tooltip="\n".join([word, *tips]) if tips or wd else None)

    def _watchdog_words(self, st: Mapping[str, Any] | None) -> str:
        """The instance's own watchdog, as the stream last said (hello, then its events)."""
        if not st or not st.get("armed", True):
            return ""
        phase = st.get("phase")
        if phase == "pending" and st.get("deadline_t"):
            return self.tr("watchdog acts at {time} unless cancelled").format(
                time=clock_text(float(st["deadline_t"]))
            )
        acted = st.get("acted")
        if phase == "done" and isinstance(acted, Mapping):
            return (
                self.tr("watchdog acted: {outcome}")
                if acted.get("ok")
                else self.tr("watchdog failed: {outcome}")
            ).format(outcome=acted.get("outcome") or "")
        if phase == "cancelled":
            return self.tr("watchdog: cancelled")
        ready = st.get("ready")
        if isinstance(ready, Mapping) and ready.get("ok") is False:
            return self.tr("watchdog armed but cannot act")
        return self.tr("watchdog armed")

    def _readiness_tip(self, st: Mapping[str, Any] | None) -> list[str]:
        """Whether the watchdog's action can run, as its last check said (for the tooltip)."""
        ready = (st or {}).get("ready")
        if not isinstance(ready, Mapping) or not ready.get("reason"):
            return []
        text = (
            self.tr("Watchdog ready: {reason}")
            if ready.get("ok")
            else self.tr("Watchdog cannot act now: {reason}")
        )
        return [text.format(reason=ready["reason"])]

    def readout(self, t: float) -> str:
        v = self.last_view
        if v is None:
            return ""
        lines = [f"<b>{clock_text(t)}</b>"]
        for name, (_, (tt, c, ic, _t0)) in list(self._cache.items())[:MAX_CURVES]:
            if not len(tt):
                continue
            i = min(len(tt) - 1, int(np.searchsorted(tt, t)))
            cur = v.hosts[name].currency if name in v.hosts else "USD"
            lines.append(
                f"{name} {money(float(c[i]), cur)} "
                + self.tr("(idle {money})").format(money=money(float(ic[i]), cur))
            )
        return "<br>".join(lines)


_ = Mapping
