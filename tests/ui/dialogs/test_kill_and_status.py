"""The kill button ends a real sim process after the confirmation; a host whose sampler stops
answering turns red in the fleet list and green again when it is back."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_state_dir
from gpufleet.ui.app import App
from gpufleet.ui.widgets.theme import DOWN, OK, SYMBOL
from gpufleet_sampler.state_dir import read_state
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo, replace_host, wait_streaming


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_kill_button_ends_the_sim_process_after_confirmation(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    app = start_app(demo("a100-train"))
    w = app.window
    wait_streaming(qtbot, app)
    w.select_host("a100-train")
    w.select_tab("memory")
    qtbot.waitUntil(lambda: w.memory.model.rowCount() > 0, timeout=30_000)
    proc = w.memory._procs[w.memory.model.keys[0]]
    assert _alive(proc.pid)
    w.memory.table.selectRow(0)
    assert w.memory.kill_button.isEnabled()
    w.memory.kill_button.click()
    dlg = app.actions.kill_dialog
    assert dlg is not None and dlg.isVisible()
    text = dlg.findChildren(type(w.memory.procs_label))[0].text()
    for shown in ("a100-train", str(proc.pid), proc.user or "", "train.py", "GiB"):
        assert shown in text, shown
    with qtbot.waitSignal(app.actions.kill_finished, timeout=60_000) as sig:
        dlg.accept()
    res = sig.args[0]
    assert getattr(res, "result", res) == "exited", res
    qtbot.waitUntil(lambda: not _alive(proc.pid), timeout=10_000)
    assert "exited" in w.outcome_label.text()


def test_cancelled_kill_sends_nothing(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    app = start_app(demo("a100-train"))
    w = app.window
    wait_streaming(qtbot, app)
    w.select_tab("memory")
    qtbot.waitUntil(lambda: w.memory.model.rowCount() > 0, timeout=30_000)
    proc = w.memory._procs[w.memory.model.keys[0]]
    dlg = app.actions.request_kill("a100-train", proc)
    dlg.reject()
    qtbot.wait(0)  # let a (wrongly) queued kill start, if any
    assert _alive(proc.pid)
    assert w.outcome_label.text() == ""


@pytest.mark.slow
def test_host_that_goes_down_turns_red_and_back_green(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    # Two healthy hosts (green while streaming): the demo's and a second one like it.
    train = demo("a100-train")[0]
    app = start_app([train, replace_host(train, name="a100-b", seed=9)])
    w = app.window
    wait_streaming(qtbot, app)
    host = next(h for h in app.fleet.hosts() if h.name == "a100-b")
    st = read_state(host.backend, host.scenario, host.seed, str(demo_state_dir()))
    assert st is not None
    pid = int(st["pid"])
    green, red = w.theme.state_hex(OK), w.theme.state_hex(DOWN)

    def colour() -> str | None:
        w.update_summaries()
        return w.panel.host_colour("a100-b")

    qtbot.waitUntil(lambda: colour() == green, timeout=30_000)
    # A frozen sampler: the link stays up but nothing arrives (the worst kind of outage).
    os.kill(pid, signal.SIGSTOP)
    try:
        qtbot.waitUntil(lambda: colour() == red, timeout=30_000)
        assert w.panel.host_symbol("a100-b") == SYMBOL[DOWN]
        assert w.panel.host_colour("a100-train") == green  # the others keep streaming
    finally:
        os.kill(pid, signal.SIGCONT)
    qtbot.waitUntil(lambda: colour() == green, timeout=60_000)
    assert w.panel.host_symbol("a100-b") == SYMBOL[OK]
