"""Memory && processes: memory used per GPU over time against the total and the usable part
(total minus the driver's reservation), and the process table with Kill buttons.

Inside a container NVML reports the host's PIDs; the table shows each process's PID in the
container, NVML's host PID where known, and how the two were matched. An NVML entry whose
process is not in the container (another tenant or the host) is listed with its memory but
cannot be killed, and the table says why."""

from __future__ import annotations

from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QWidget,
)

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.wire.gpu_kind import short_index
from gpufleet.core.wire.messages import Proc
from gpufleet.ui.tabs.base import PlotTab, ValueAt, fmt
from gpufleet.ui.tabs.sentences import memory_sentence
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.fast_table import FastTableView
from gpufleet.ui.widgets.plots import clock_text, set_label_text
from gpufleet.ui.widgets.table_model import KEY_ROLE, Cell, RowsModel, sorted_proxy
from gpufleet.ui.widgets.theme import Theme, gpu_colour

GIB = float(2**30)
PROC_HEADERS = (
    QT_TRANSLATE_NOOP("MemoryTab", "Host"),
    QT_TRANSLATE_NOOP("MemoryTab", "GPU"),
    QT_TRANSLATE_NOOP("MemoryTab", "PID"),
    QT_TRANSLATE_NOOP("MemoryTab", "Host PID"),
    QT_TRANSLATE_NOOP("MemoryTab", "Match"),
    QT_TRANSLATE_NOOP("MemoryTab", "User"),
    QT_TRANSLATE_NOOP("MemoryTab", "Name"),
    QT_TRANSLATE_NOOP("MemoryTab", "Command"),
    QT_TRANSLATE_NOOP("MemoryTab", "GPU memory"),
    QT_TRANSLATE_NOOP("MemoryTab", "SM %"),
)
COL_CMD, COL_MEM = 7, 8
MATCH_TEXT = {
    protocol.MAP_EXACT: QT_TRANSLATE_NOOP("MemoryTab", "exact"),
    protocol.MAP_PROBABLE: QT_TRANSLATE_NOOP("MemoryTab", "probable"),
    protocol.MAP_NOT_HERE: QT_TRANSLATE_NOOP("MemoryTab", "not in this container"),
    protocol.MAP_NO_MEMORY: QT_TRANSLATE_NOOP("MemoryTab", "no memory NVML can see"),
}
MATCH_TIP = {
    protocol.MAP_EXACT: QT_TRANSLATE_NOOP(
        "MemoryTab", "NVML's entry is this process: the only one here that holds this GPU"
    ),
    protocol.MAP_PROBABLE: QT_TRANSLATE_NOOP(
        "MemoryTab",
        "Matched to NVML's entry by creation order (host PIDs and start times both grow); "
        "the process itself is certain, its memory figure is a best guess",
    ),
    protocol.MAP_NOT_HERE: QT_TRANSLATE_NOOP(
        "MemoryTab",
        "NVML reports this memory, but no process in this container holds the GPU for it: "
        "another tenant or the host. It cannot be seen or killed from here",
    ),
    protocol.MAP_NO_MEMORY: QT_TRANSLATE_NOOP(
        "MemoryTab",
        "Holds the GPU's device file but NVML lists no memory for it: often a dataloader "
        "worker or a process keeping a context",
    ),
}


class MemoryTab(PlotTab):
    title = QT_TRANSLATE_NOOP("Tabs", "Memory && processes")
    kill_requested = Signal(str, object)  # host, Proc
    kill_tree_requested = Signal(str, object)  # host, Proc: with its children and group

    def __init__(self, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(theme, parent)
        self.mem = self.add_plot(self.tr("memory used (GiB)"))
        self.mem.y_span_frac = 1.0  # from zero: how full the GPU is reads off the height
        self.finish()
        # The plot and the process table share the tab's height through a splitter.
        self.box.removeWidget(self.glw)
        self.box.removeWidget(self.sentence)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.glw)
        bottom = QWidget()
        from PySide6.QtWidgets import QVBoxLayout

        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.sentence)
        bar = QHBoxLayout()
        self.procs_label = QLabel(self.tr("Processes"))
        self.kill_button = QPushButton(self.tr("Kill…"))
        self.kill_button.setEnabled(False)
        self.kill_button.setToolTip(
            self.tr("Send TERM to the selected process (after a confirmation)")
        )
        self.kill_button.clicked.connect(self._kill_clicked)
        self.kill_tree_button = QPushButton(self.tr("Kill tree…"))
        self.kill_tree_button.setEnabled(False)
        self.kill_tree_button.setToolTip(
            self.tr(
                "Send TERM to the selected process, its children and its orphaned process "
                "group (dataloader workers keep GPU memory after their parent dies)"
            )
        )
        self.kill_tree_button.clicked.connect(self._kill_tree_clicked)
        # Why the selected row cannot be killed, when it cannot.
        self.kill_why = QLabel("")
        self.kill_why.setWordWrap(True)
        bar.addWidget(self.procs_label)
        bar.addStretch(1)
        bar.addWidget(self.kill_why, 2)
        bar.addWidget(self.kill_button)
        bar.addWidget(self.kill_tree_button)
        bl.addLayout(bar)
        self.model = RowsModel(
            tuple(QCoreApplication.translate("MemoryTab", h) for h in PROC_HEADERS)
        )
        self.proxy = sorted_proxy(self.model)
        self.table = FastTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_MEM, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(COL_CMD, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().selectionChanged.connect(self._selection)
        self.table.doubleClicked.connect(lambda *_: self._kill_clicked())
        bl.addWidget(self.table, 1)
        split.addWidget(bottom)
        # Half and half: on a 768-px laptop screen the process table (what a kill starts from)
        # showed four rows at 3:2, and the demo's miner was below them.
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        self.box.addWidget(split, 1)
        self._procs: dict[tuple[str, int, int, int], Proc] = {}

    def refresh(self, view: View) -> None:
        self.last_view = view
        gpus = view.gpus()
        rep, used = self.draw_metric(self.mem, view, "mem_used_bytes", scale=1 / GIB)
        totals = {g: view.nominal(g, "mem_total_bytes") for g in gpus}
        tot = max((t for t in totals.values() if t), default=None)
        res = max((view.nominal(g, "mem_reserved_bytes") or 0 for g in gpus), default=0)
        self.mem.set_nominal(
            "total",
            tot / GIB if tot else None,
            self.tr("total {value}").format(value=fmt(tot / GIB if tot else None, "GiB", 1)),
            view.t0,
            view.t1,
        )
        usable = (tot - res) / GIB if tot and res else None
        self.mem.set_nominal(
            "usable",
            usable,
            self.tr("usable (total − reserved) {value}").format(value=fmt(usable, "GiB", 1)),
            view.t0,
            view.t1,
            style=Qt.PenStyle.DotLine,
            below=True,
        )
        self.mem.retain([("", g) for g in gpus] + ["total", "usable"])
        self.note_unreported(self.mem, view, "mem_used_bytes", rep, self.tr("memory used"))
        self.set_range(view.t0, view.t1)
        self.set_sentence(
            memory_sentence(gpus, {g: s.v for g, s in zip(gpus, used, strict=True)}, totals)
        )
        self._fill_procs(view)
        self.populated = bool(rep)

    def _fill_procs(self, view: View) -> None:
        rows, keys = [], []
        self._procs.clear()
        snap = view.live.procs(view.host) if view.host else None
        for p in snap.procs if snap else ():
            # An NVML entry not here may carry the number of a process here: keep both.
            key = (
                view.host or "",
                p.pid,
                p.gpu,
                -1 if p.here or p.host_pid is None else p.host_pid,
            )
            self._procs[key] = p
            keys.append(key)
            pid_cell = (
                Cell(str(p.pid), p.pid, align_right=True)
                if p.here
                else Cell("—", -1, align_right=True, tooltip=_tr(MATCH_TIP[protocol.MAP_NOT_HERE]))
            )
            # No mapping: the sampler shares NVML's PID namespace, the PIDs are the same.
            hp = p.host_pid if p.mapping is not None else p.pid
            rows.append(
                (
                    Cell(view.host or ""),
                    Cell(short_index(p.gpu), p.gpu, _gpu_colour(p.gpu)),
                    pid_cell,
                    Cell(str(hp) if hp is not None else "—", hp or -1, align_right=True),
                    _match_cell(p),
                    Cell(p.user or "?"),
                    Cell(p.name or "?"),
                    Cell(p.cmd or "", tooltip=p.cmd),
                    Cell(
                        fmt(p.mem_bytes / GIB if p.mem_bytes is not None else None, "GiB", 2),
                        p.mem_bytes or -1,
                        align_right=True,
                    ),
                    Cell(
                        fmt(p.sm_pct, "%"),
                        p.sm_pct if p.sm_pct is not None else -1,
                        align_right=True,
                    ),
                )
            )
        self.model.set_rows(rows, keys)
        n = len(rows)
        when = self.tr(" · snapshot {time}").format(time=clock_text(snap.t)) if snap else ""
        hello = view.hello()
        inside = hello is not None and hello.host.get("where") == protocol.WHERE_CONTAINER
        where = (
            self.tr(" · in a container: PID is the container's, Host PID NVML's") if inside else ""
        )
        set_label_text(
            self.procs_label,
            self.tr("Processes on {host}: {n}").format(host=view.host or "—", n=n) + where + when,
        )
        self._selection()

    def selected_proc(self) -> tuple[str, Proc] | None:
        idx = self.table.selectionModel().selectedRows()
        if not idx:
            return None
        key = self.proxy.data(idx[0], KEY_ROLE)
        p = self._procs.get(key)
        return (key[0], p) if p is not None else None

    def select_pid(self, pid: int) -> bool:
        for r in range(self.proxy.rowCount()):
            key = self.proxy.data(self.proxy.index(r, 0), KEY_ROLE)
            if key and key[1] == pid:
                self.table.selectRow(r)
                return True
        return False

    def _selection(self, *_: object) -> None:
        sel = self.selected_proc()
        why = kill_blocked_reason(sel[1]) if sel is not None else None
        ok = sel is not None and why is None
        self.kill_button.setEnabled(ok)
        self.kill_tree_button.setEnabled(ok)
        set_label_text(self.kill_why, why or "")

    def _kill_clicked(self) -> None:
        sel = self.selected_proc()
        if sel is not None and kill_blocked_reason(sel[1]) is None:
            self.kill_requested.emit(sel[0], sel[1])

    def _kill_tree_clicked(self) -> None:
        sel = self.selected_proc()
        if sel is not None and kill_blocked_reason(sel[1]) is None:
            self.kill_tree_requested.emit(sel[0], sel[1])

    def readout(self, t: float) -> str:
        return self.gpu_readout(t, _readout_line)


def _tr(text: str) -> str:
    return QCoreApplication.translate("MemoryTab", text)


def kill_blocked_reason(p: Proc) -> str | None:
    """Why this row cannot be killed, or None when it can."""
    if not p.here:
        return QCoreApplication.translate(
            "MemoryTab",
            "Not in this container: NVML's host PID {pid} belongs to another tenant or the "
            "host, so it cannot be killed from here",
        ).format(pid=p.host_pid if p.host_pid is not None else p.pid)
    if p.start_ticks is None:
        return QCoreApplication.translate(
            "MemoryTab", "Its start time is unknown (it may have ended): not killed blind"
        )
    return None


def _match_cell(p: Proc) -> Cell:
    mapping = p.mapping or protocol.MAP_EXACT
    text = _tr(MATCH_TEXT.get(mapping, mapping))
    tip = _tr(MATCH_TIP.get(mapping, ""))
    if p.mapping is None:
        tip = QCoreApplication.translate(
            "MemoryTab", "The sampler shares the PID namespace NVML reports: the PID is the process"
        )
    if p.orphan:
        text += " · " + QCoreApplication.translate("MemoryTab", "orphan")
        tip += "\n" + QCoreApplication.translate(
            "MemoryTab",
            "Its job is gone (its process group's leader has ended) but it still holds the GPU: "
            "Kill tree… ends it and its group",
        )
    return Cell(text, text, tooltip=tip)


def _gpu_colour(g: int) -> str:
    return gpu_colour(g)


def _readout_line(g: int, at: ValueAt) -> str:
    used = at("mem_used_bytes")
    return fmt(used / GIB if used is not None else None, "GiB", 1)
