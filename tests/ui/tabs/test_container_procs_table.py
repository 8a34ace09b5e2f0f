"""The process table of a host whose sampler runs in a container: each process's PID there,
NVML's host PID, how they were matched; an NVML entry of a process that is not in the
container is listed with its memory but cannot be killed, and the tab says why (Qt
offscreen, a procs message as the sampler writes it from a container)."""

from __future__ import annotations

import dataclasses
import time

from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import Procs, parse_object
from gpufleet.ui.dialogs.kill import KillDialog
from gpufleet.ui.tabs.memory import MemoryTab
from gpufleet.ui.viewmodel.view import View
from gpufleet.ui.widgets.table_model import KEY_ROLE
from gpufleet.ui.widgets.theme import make_theme
from gpufleet_sampler import protocol
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tests.support.synth import make_hello

GIB = 1 << 30
HOST = "vast-1"


def entry(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "gpu": 0,
        "pid": 0,
        "start_ticks": 5000,
        "user": "root",
        "name": "python3",
        "cmd": "python3 train.py",
        "mem_bytes": None,
        "sm_pct": None,
        "type": "C",
        "host_pid": None,
        "mapping": protocol.MAP_EXACT,
        "holds_device": True,
        "orphan": False,
    }
    base.update(kw)
    return base


def container_procs() -> Procs:
    obj = {
        "kind": protocol.KIND_PROCS,
        "seq": 3,
        "t": time.time(),
        "procs": [
            entry(pid=7, host_pid=412345, mem_bytes=20 * GIB, mapping=protocol.MAP_PROBABLE),
            # Another tenant's process whose host PID is 31, the number of a process here.
            entry(
                gpu=1,
                pid=31,
                host_pid=31,
                start_ticks=None,
                user=None,
                name=None,
                cmd=None,
                mem_bytes=5 * GIB,
                mapping=protocol.MAP_NOT_HERE,
                holds_device=False,
            ),
            entry(gpu=1, pid=31, name="bash", cmd="bash", mapping=protocol.MAP_NO_MEMORY),
            entry(
                gpu=1, pid=12, name="pt_data_worker", mapping=protocol.MAP_NO_MEMORY, orphan=True
            ),
        ],
    }
    msg = parse_object(obj)
    assert isinstance(msg, Procs)
    return msg


def fill(qtbot: QtBot) -> MemoryTab:
    live = LiveBuffers()
    hello = make_hello(HOST, gpus=2)
    live.feed(HOST, dataclasses.replace(hello, host={**hello.host, "where": "container"}))
    live.feed(HOST, container_procs())
    tab = MemoryTab(make_theme(False))
    qtbot.addWidget(tab)
    now = time.time()
    tab.refresh(View(live, HOST, {}, now - 60, now, make_theme(False)))
    return tab


def select(tab: MemoryTab, pid: int, gpu: int, mapping: str) -> None:
    for r in range(tab.proxy.rowCount()):
        key = tab.proxy.data(tab.proxy.index(r, 0), KEY_ROLE)
        p = tab._procs[key]
        if (p.pid, p.gpu, p.mapping) == (pid, gpu, mapping):
            tab.table.selectRow(r)
            return
    raise AssertionError(f"no row {pid}/{gpu}/{mapping}")


def cells(tab: MemoryTab, pid: int, gpu: int, mapping: str) -> list[str]:
    for r in range(tab.proxy.rowCount()):
        key = tab.proxy.data(tab.proxy.index(r, 0), KEY_ROLE)
        p = tab._procs[key]
        if (p.pid, p.gpu, p.mapping) == (pid, gpu, mapping):
            return [tab.proxy.index(r, c).data() for c in range(tab.proxy.columnCount())]
    raise AssertionError(f"no row {pid}/{gpu}/{mapping}")


def test_the_table_shows_the_mapping_and_refuses_rows_that_are_not_here(qtbot: QtBot) -> None:
    tab = fill(qtbot)
    assert tab.model.rowCount() == 4  # the tenant's entry and the bash with its number
    assert "in a container" in tab.procs_label.text()
    probable = cells(tab, 7, 0, protocol.MAP_PROBABLE)
    assert probable[2:5] == ["7", "412345", "probable"]
    tenant = cells(tab, 31, 1, protocol.MAP_NOT_HERE)
    assert tenant[2:5] == ["—", "31", "not in this container"]
    assert "5.00" in tenant[8]
    assert cells(tab, 31, 1, protocol.MAP_NO_MEMORY)[2:5] == ["31", "—", "no memory NVML can see"]
    assert cells(tab, 12, 1, protocol.MAP_NO_MEMORY)[4] == "no memory NVML can see · orphan"

    select(tab, 31, 1, protocol.MAP_NOT_HERE)
    assert not tab.kill_button.isEnabled() and not tab.kill_tree_button.isEnabled()
    assert "Not in this container" in tab.kill_why.text() and "31" in tab.kill_why.text()
    # The process here that has the tenant's number is a different row, and killable.
    select(tab, 31, 1, protocol.MAP_NO_MEMORY)
    assert tab.kill_button.isEnabled() and tab.kill_why.text() == ""
    select(tab, 12, 1, protocol.MAP_NO_MEMORY)
    assert tab.kill_tree_button.isEnabled()
    with qtbot.waitSignal(tab.kill_tree_requested) as sig:
        tab.kill_tree_button.click()
    assert sig.args[0] == HOST and sig.args[1].pid == 12 and sig.args[1].orphan


def test_the_kill_dialog_names_the_host_pid_and_the_match(qtbot: QtBot) -> None:
    procs = container_procs().procs
    dlg = KillDialog(None, HOST, procs[0], tree=True)
    qtbot.addWidget(dlg)
    text = dlg.findChildren(QLabel)[0].text()
    assert "412345" in text and "probable" in text
    assert "process group" in text
    assert "tree" in dlg.windowTitle()
