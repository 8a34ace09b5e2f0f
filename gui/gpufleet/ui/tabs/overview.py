"""Overview: one row per host and GPU of the whole fleet, worst first, sortable by any column.

The fleet is shown as summaries (latest values only), never as curves: it stays cheap at
128 hosts × 8 GPUs (the budgets in docs/benchmarks.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QWidget

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, reason_name
from gpufleet.core.wire.gpu_kind import order_key, short_index
from gpufleet.ui.i18n import state_name
from gpufleet.ui.tabs.base import Tab, fmt
from gpufleet.ui.viewmodel.summary import GpuSummary, HostSummary, money, short_name
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.fast_table import FastTableView
from gpufleet.ui.widgets.table_model import KEY_ROLE, Cell, RowsModel, sorted_proxy
from gpufleet.ui.widgets.theme import DOWN, LIST_RANK, OK, SEVERITY_RANK, SYMBOL, WAIT, Theme

HEADERS = (
    QT_TRANSLATE_NOOP("OverviewTab", "State"),
    QT_TRANSLATE_NOOP("OverviewTab", "Host"),
    QT_TRANSLATE_NOOP("OverviewTab", "GPU"),
    QT_TRANSLATE_NOOP("OverviewTab", "Model"),
    QT_TRANSLATE_NOOP("OverviewTab", "Util"),
    QT_TRANSLATE_NOOP("OverviewTab", "SM active"),
    QT_TRANSLATE_NOOP("OverviewTab", "SM clock"),
    QT_TRANSLATE_NOOP("OverviewTab", "Temp"),
    QT_TRANSLATE_NOOP("OverviewTab", "Power"),
    QT_TRANSLATE_NOOP("OverviewTab", "Memory"),
    QT_TRANSLATE_NOOP("OverviewTab", "P"),
    # Throttle reasons, or the alert that marks the GPU: why the row has its state.
    QT_TRANSLATE_NOOP("OverviewTab", "Why"),
    QT_TRANSLATE_NOOP("OverviewTab", "Price"),
)


# Off-screen rows refreshed per update, besides the visible ones and those whose state
# changed: they matter only for the order when sorted by a value column; all 256 rows of 32
# hosts x 8 GPUs are current within 16 s.
ROUND_ROBIN_ROWS = 16


# Columns whose long values are elided past this many characters (the cell's tooltip, the
# header and the host's cards say it whole), so the values that are numbers keep their room.
COLUMN_CAP = {1: 14, 3: 12}
MODEL = HEADERS.index("Model")
WHY = HEADERS.index("Why")
# Why says what is wrong: it stretches over the room the others leave, and where that is
# under this share of the table (a laptop screen) Model gives up its room, down to the
# short names the fleet list uses ("A100…", "RTX 4090"; the cell's tooltip and the host's
# header line say the whole model). Nothing else is narrowed for it: the numbers, the host
# names (up to their cap above) and the headers stay whole.
WHY_SHARE = 0.25
# However narrow the table, Why keeps this many characters (or all its text, if shorter);
# past that the table scrolls sideways rather than squeeze it to nothing.
WHY_MIN_CHARS = 14


def _row_state(s: HostSummary, g: GpuSummary | None) -> str:
    """A GPU row shows its own state, unless the whole host is down or waiting."""
    if g is None:
        return s.state
    state = s.state if s.state in (DOWN, WAIT) else g.state
    if s.host_reason and s.state not in (DOWN, WAIT):
        state = g.state if SEVERITY_RANK[g.state] >= SEVERITY_RANK[s.state] else s.state
    return state


def _signature(s: HostSummary, g: GpuSummary | None) -> tuple[object, ...]:
    """What decides a row's state and reason text: a change is shown at once, on screen
    or not (it moves the row in the default, worst-first order)."""
    if g is None:
        return (s.state, s.reason, s.model, s.price)
    return (s.state, s.host_reason, g.state, g.note, g.reasons)


class OverviewTab(Tab):
    title = QT_TRANSLATE_NOOP("Tabs", "Overview")
    host_activated = Signal(str)

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.model = RowsModel(tuple(QCoreApplication.translate("OverviewTab", h) for h in HEADERS))
        self.proxy = sorted_proxy(self.model)
        self.table = FastTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        # Why stretches over the room the others leave, as a Stretch section would, but with
        # a floor (_share_room sets its width): on a narrow table Qt squeezes a Stretch
        # section down to the header's minimum section size.
        # A newly sorted column needs room for the arrow; the one before it no longer does.
        hh.sortIndicatorChanged.connect(lambda *_: self._fit_columns(refit=True))
        # A column the user widens or narrows takes its room from Why, or gives it to Why.
        hh.sectionResized.connect(self._section_resized)
        self._sharing = False
        self.table.viewport().installEventFilter(self)
        self.table.doubleClicked.connect(self._activated)
        self.box.addWidget(self.table, 1)
        self.box.addWidget(self.sentence)
        self.summaries: Sequence[HostSummary] = ()
        self._longest: list[int] = []
        # Each column's width from its contents, and the width last set (a column whose
        # width differs from it was resized by the user, and keeps that width).
        self._natural: dict[int, int] = {}
        self._set: dict[int, int] = {}
        self._shown: Sequence[HostSummary] | None = None
        self._generation = 0
        self._signs: list[tuple[object, ...]] = []
        self._entries: list[tuple[tuple[str, int], HostSummary, GpuSummary | None]] = []
        self._cursor = 0
        self.table.verticalScrollBar().valueChanged.connect(self._scrolled)

    def set_summaries(self, summaries: Sequence[HostSummary]) -> None:
        self.summaries = summaries
        self._generation += 1

    def change_key(self, view: View) -> object:
        # The table shows the fleet summaries only (not the selected host or the range).
        return self._generation

    def refresh(self, view: View) -> None:
        # The rows change when the summaries do (once a second), not on every redraw tick.
        if self.summaries is self._shown:
            return
        self._shown = self.summaries
        # The model keeps one stable order (host, GPU); the proxy sorts. Rows are rebuilt
        # only where they can be seen or where a state changed, plus a round-robin share
        # of the rest: at 128 hosts × 8 GPUs, formatting and applying 1,024 rows once a
        # second would hold the GUI thread ~100 ms (the budgets in docs/benchmarks.md).
        entries: list[tuple[tuple[str, int], HostSummary, GpuSummary | None]] = []
        for s in sorted(self.summaries, key=lambda s: s.host):
            if not s.gpus:
                entries.append(((s.host, -1), s, None))
            # A MIG slice is listed right under its parent GPU.
            slices = {g.gpu: g.mig for g in s.gpus if g.mig is not None}
            for g in sorted(s.gpus, key=lambda g: order_key(g.gpu, slices)):
                entries.append(((s.host, g.gpu), s, g))
        keys = [e[0] for e in entries]
        signs = [_signature(s, g) for _, s, g in entries]
        if keys != self.model.keys:
            self.model.set_rows([self._row(s, g) for _, s, g in entries], keys)
            self._signs = signs
            self._cursor = 0
        else:
            want = self._visible_rows()
            old = self._signs
            want.update(r for r, (a, b) in enumerate(zip(signs, old, strict=True)) if a != b)
            n = len(entries)
            # Sorted by a value (util, temperature...), off-screen rows decide the order:
            # refresh them four times as fast.
            share = ROUND_ROBIN_ROWS * (1 if self.proxy.sortColumn() in (0, 1, 2) else 4)
            for i in range(min(n, share)):
                want.add((self._cursor + i) % n)
            self._cursor = (self._cursor + share) % max(1, n)
            self.model.update_rows({r: self._row(*entries[r][1:]) for r in want if r < n})
            self._signs = signs
        self._entries = entries
        self._fit_columns()
        # Slices, not cards: a GPU split into MIG slices counts as its slices.
        split = {(s.host, g.mig.parent) for _, s, g in entries if g is not None and g.mig}
        n_gpu = sum(
            1
            for _, s, g in entries
            if g is not None and (g.mig is not None or (s.host, g.gpu) not in split)
        )
        n_slices = sum(1 for _, _, g in entries if g is not None and g.mig is not None)
        bad = sum(1 for _, s, g in entries if _row_state(s, g) != OK)
        hosts = len(self.summaries)
        self.set_sentence(
            (
                self.tr("{hosts} host, {gpus} GPUs; ")
                if hosts == 1
                else self.tr("{hosts} hosts, {gpus} GPUs; ")
            ).format(hosts=hosts, gpus=n_gpu)
            + (self.tr("{n} of them MIG slices; ").format(n=n_slices) if n_slices else "")
            + (
                (
                    self.tr("{n} row needs attention, listed first. ")
                    if bad == 1
                    else self.tr("{n} rows need attention, listed first. ")
                ).format(n=bad)
                if bad
                else self.tr("all healthy. ")
            )
            + self.tr("Double-click a row to open that host; click a header to sort.")
        )
        self.populated = n_gpu > 0

    def _fit_columns(self, refit: bool = False) -> None:
        """Widen a column to its contents when its longest text grew (the first rows show
        "—" while hosts connect; sized once then, values and nominals were cut later).
        Only growth resizes, and only that column; ``refit`` (the sort column changed)
        measures every column not resized by the user again. Then Why gets its share."""
        rows = self.model.rows
        if not rows:
            return
        sort_col = self.table.horizontalHeader().sortIndicatorSection()
        longest = [max(len(r[c].text) for r in rows) for c in range(len(rows[0]))]
        changed = refit
        for c, n in enumerate(longest):
            grew = c >= len(self._longest) or n > self._longest[c]
            changed = changed or grew
            if c == WHY:
                continue
            if grew or (refit and not self._user_sized(c)):
                self._natural[c] = self.table.content_width(
                    c, COLUMN_CAP.get(c), sort_arrow=c == sort_col
                )
                self._set.pop(c, None)  # grown: its contents decide again
        self._longest = [
            max(n, self._longest[c] if c < len(self._longest) else 0) for c, n in enumerate(longest)
        ]
        if changed:
            self._share_room()

    def _user_sized(self, c: int) -> bool:
        return c in self._set and self.table.columnWidth(c) != self._set[c]

    def _share_room(self) -> None:
        """Every column at its contents' width (or the user's), Why over the rest; where
        that leaves Why less than its share (and less than it needs) Model is narrowed."""
        if not self._natural:
            return
        table = self.table
        least = table.horizontalHeader().minimumSectionSize()  # Qt widens anything narrower
        widths = {
            c: table.columnWidth(c) if self._user_sized(c) else max(w, least)
            for c, w in self._natural.items()
        }
        room = table.viewport().width()
        why_needs = table.content_width(WHY)
        short = min(WHY_SHARE * room, why_needs) - (room - sum(widths.values()))
        if short > 0 and MODEL in widths and not self._user_sized(MODEL):
            cut = min(math.ceil(short), widths[MODEL] - self._short_model_width())
            if cut > 0:
                widths[MODEL] -= cut
        if not self._user_sized(WHY):
            chars = table.fontMetrics().averageCharWidth() * WHY_MIN_CHARS
            sorted_by = table.horizontalHeader().sortIndicatorSection() == WHY
            header = table.header_width(WHY, sorted_by)
            floor = max(min(why_needs, table.text_width(chars)), header)
            left = room - sum(widths.values())
            # Where its floor would push Price past the right edge (Chinese: the CJK font's
            # average character is twice as wide), Why gives way down to its header; a cut
            # Why is whole in its tooltip, a cut price nowhere.
            widths[WHY] = max(floor, left) if left >= floor else max(header, left)
        self._sharing = True
        try:
            for c, w in widths.items():
                if self._user_sized(c):
                    continue
                if table.columnWidth(c) != w:
                    table.setColumnWidth(c, w)
                self._set[c] = w
        finally:
            self._sharing = False

    def _section_resized(self, column: int, _old: int, _new: int) -> None:
        if not self._sharing and column != WHY:
            self._share_room()

    def _short_model_width(self) -> int:
        """The narrowest Model column that still shows each GPU's short name, elided after
        it ("A100…") or whole ("RTX 4090"), and the column's header."""
        fm = QFontMetrics(self.table.font())
        widest = 0
        for text in {r[MODEL].text for r in self.model.rows}:
            short = short_name(text)
            widest = max(widest, fm.horizontalAdvance(text if short == text else short + "…"))
        sorted_by = self.table.horizontalHeader().sortIndicatorSection() == MODEL
        return max(self.table.text_width(widest), self.table.header_width(MODEL, sorted_by))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A wider or narrower table (the window, the splitter) shares its room anew.
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._share_room()
        return super().eventFilter(watched, event)

    def _visible_rows(self) -> set[int]:
        """Model rows on screen now (the view shows the proxy's order)."""
        v = self.table
        n = self.proxy.rowCount()
        if n == 0:
            return set()
        top = max(0, v.rowAt(0))
        bottom = v.rowAt(max(0, v.viewport().height() - 1))
        bottom = n - 1 if bottom < 0 else bottom
        return {
            self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(top, bottom + 1)
        }

    def _scrolled(self, *_: object) -> None:
        # Rows scrolled into view get their current values at once.
        rows = [r for r in self._visible_rows() if r < len(self._entries)]
        if rows:
            self.model.update_rows({r: self._row(*self._entries[r][1:]) for r in rows})

    def _row(self, s: HostSummary, g: GpuSummary | None) -> tuple[Cell, ...]:
        t = self.theme
        price = money(s.price, s.currency) + "/h" if s.price is not None else "—"
        if g is None:
            colour = t.state_hex(s.state)
            return (
                Cell(f"{SYMBOL[s.state]} {state_name(s.state)}", (-s.order, s.host), colour),
                Cell(s.host),
                Cell("—", -1),
                Cell(s.model),
                Cell("—", -1),
                Cell("—", -1),
                Cell("—", -1),
                Cell("—", -1),
                Cell("—", -1),
                Cell("—", -1),
                Cell("—", -1),
                Cell(s.reason, s.reason, colour, tooltip=s.reason or None),
                Cell(price, s.price or 0),
            )
        state = _row_state(s, g)
        colour = t.state_hex(state)
        rank = LIST_RANK[state]
        idle = state_name("idle")
        reasons = ", ".join(reason_name(r) for r in g.reasons if r != "gpu_idle") or (
            idle if "gpu_idle" in g.reasons else ""
        )
        if g.note:
            reasons = g.note + (f" ({reasons})" if reasons and reasons != idle else "")
        elif s.host_reason and state != OK:
            reasons = s.host_reason
        # Value and nominal in one compact form ("1 410/1 980 MHz"): the nominal is what
        # tells a slow clock from a normal one, and a separate " / 1980" got cut first.
        sm = f"{fmt(g.sm)}/{fmt(g.sm_max)} MHz" if g.sm_max else fmt(g.sm, "MHz")
        mem = (
            f"{g.mem_used / 2**30:.1f}/{g.mem_total / 2**30:.0f} GiB"
            if g.mem_used is not None and g.mem_total
            else "—"
        )
        pw = f"{fmt(g.power)}/{fmt(g.power_cap)} W" if g.power_cap else fmt(g.power, "W")
        hot = g.temp is not None and g.temp_slowdown and g.temp >= g.temp_slowdown - 5
        # A MIG slice sorts right under its parent GPU.
        order = g.mig.parent * 1000 + g.mig.slot + 1 if g.mig is not None else g.gpu * 1000
        return (
            Cell(f"{SYMBOL[state]} {state_name(state)}", (-rank, s.host, order), colour),
            Cell(s.host, (s.host, order), tooltip=s.host + (f"\n{s.bench}" if s.bench else "")),
            Cell(short_index(g.gpu), order, align_right=True),
            Cell(g.name.replace("NVIDIA ", "").replace("GeForce ", ""), tooltip=g.name),
            Cell(fmt(g.util, "%"), g.util if g.util is not None else -1, align_right=True),
            # GPM's SM activity: how much of the GPU the "util" above kept working.
            Cell(
                fmt(g.sm_active, "%"),
                g.sm_active if g.sm_active is not None else -1,
                align_right=True,
            ),
            Cell(sm, g.sm if g.sm is not None else -1, align_right=True),
            Cell(
                fmt(g.temp, "°C"),
                g.temp if g.temp is not None else -1,
                t.state_hex("warning") if hot else None,
                align_right=True,
            ),
            Cell(pw, g.power if g.power is not None else -1, align_right=True),
            Cell(mem, g.mem_used if g.mem_used is not None else -1, align_right=True),
            Cell("—" if g.pstate is None else f"P{g.pstate:.0f}", g.pstate or 0),
            Cell(reasons, reasons, colour if state != OK else None, tooltip=reasons or None),
            Cell(price, s.price or 0, align_right=True),
        )

    def _activated(self, index: object) -> None:
        key = self.proxy.data(index, KEY_ROLE)  # type: ignore[arg-type]
        if key:
            self.host_activated.emit(key[0])
