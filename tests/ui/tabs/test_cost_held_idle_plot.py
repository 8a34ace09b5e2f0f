"""The Cost tab's range plot shades idle time by the same judgment as the totals: a job that
hangs for 30 minutes keeping its 52 GiB (the idle_held alert: memory held, no work) is idle in
the plot's shaded part as in the cost tracker's "of which idle", both while the alert fires
and after it resolved; the plain idle test (memory under 10 %) would shade none of it. Streams
written from the protocol (``_rules_support.Stream``), not the simulator."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.ui.offscreen.screenshots import build_window
from gpufleet.ui.tabs.cost import accumulated
from gpufleet.ui.viewmodel.summary import money
from pytestqt.qtbot import QtBot

from tests.support.rules_support import GIB, T0, Stream

DT = 10.0
HOST = "h1"  # the name _rules_support's hello gives
PRICE = 3.6  # 0.001 an hour-second: seconds read as money
HELD = 52 * GIB
# Hung in NCCL: P8 at 210 MHz, idle power, no traffic, the memory kept.
P8: dict[str, Any] = {"util_gpu_pct": 1, "pstate": 8, "sm_clock_mhz": 210, "power_w": 60.0,
                      "clock_reasons": 0x1, "pcie_tx_bps": 1e5, "pcie_rx_bps": 1e5,
                      "mem_used_bytes": HELD}  # fmt: skip
# A dead dataloader that leaves the GPU in P0 at full clocks: only the draw says idle.
NO_P8: dict[str, Any] = {**P8, "util_gpu_pct": 0, "pstate": 0, "sm_clock_mhz": 1410,
                         "power_w": 95.0}  # fmt: skip


def _feed(quiet: tuple[float, float], end: float, p8: bool = True) -> tuple[LiveBuffers, Any]:
    """Work, then hung in ``quiet`` (P8 at 210 MHz, or without P8: the same clocks as at
    work, only no utilization), then work again until ``end``; the job's process holds its
    memory throughout (procs every 30 s)."""
    s = Stream(interval=DT)
    live = LiveBuffers(window_s=3600)
    engine = RuleEngine(
        load_rules(include_user=False), [HostConfig(name=HOST, price_per_hour=PRICE)]
    )
    hung = P8 if p8 else NO_P8
    msgs = [s.hello]
    t = 0.0
    while t < end:
        msgs.append(s.sample(t, **(hung if quiet[0] <= t < quiet[1] else {"mem_used_bytes": HELD})))
        if int(t / DT) % 3 == 0:
            job = {"pid": 100, "name": "python", "cmd": "python train.py", "mem_bytes": HELD}
            msgs.append(s.procs(t, [job]))
        t += DT
    for m in msgs:
        live.feed(HOST, m)
        engine.feed(HOST, m)
    return live, engine


def _idle_curve(qtbot: QtBot, live: LiveBuffers, engine: Any, now: float) -> tuple[Any, Any]:
    cfg = HostConfig(name=HOST, price_per_hour=PRICE)
    w = build_window([cfg], live, engine, (1400, 900), now)
    qtbot.addWidget(w)
    w.set_range(3600.0)
    w.select_tab("cost")
    tab = w.current_tab()
    qtbot.waitUntil(lambda: (w.redraw(), tab.model.rowCount() == 1)[1], timeout=10_000)
    x, y = tab.plot.curves[("i", HOST)].getData()
    return tab, (np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("p8", [True, False], ids=["P8", "no-P8"])
def test_the_plots_idle_part_is_the_held_idle_time_after_the_alert(qtbot: QtBot, p8: bool) -> None:
    end = 3000.0
    live, engine = _feed((600.0, 2400.0), end, p8)
    s = engine.cost.summary(HOST)
    (period,) = s.held  # fired, then resolved when the job worked again
    assert period[0] == 0 and period[1] == pytest.approx(T0 + 600.0) and period[2] is not None
    assert s.idle_s == pytest.approx(1800.0)  # the 30 min hung, all of it
    # The plain test sees 52 GiB held and shades nothing; the tab's shading, the tracker's.
    _t, _c, ic = accumulated(live, HOST, PRICE, -math.inf, math.inf, s.held)
    assert ic[-1] == pytest.approx(s.idle) and s.idle == pytest.approx(1.8)
    _t, _c, plain = accumulated(live, HOST, PRICE, -math.inf, math.inf)
    assert plain[-1] == 0.0
    tab, (x, y) = _idle_curve(qtbot, live, engine, T0 + end)
    row = [tab.model.cell(0, i) for i in range(tab.model.columnCount())]
    assert row[3].text == money(s.idle, "USD") == row[5].text  # in range = since billing start
    # The shaded part rises only while the job hung.
    at = {m: float(np.interp(T0 + m * 60, x, y)) for m in (9, 20, 39, 45)}
    assert at[9] == pytest.approx(0.0, abs=1e-9)
    assert at[20] == pytest.approx(0.6, abs=0.02)  # 10 min in: 600 s at 3.6/h
    assert at[39] == pytest.approx(1.74, abs=0.02) and at[45] == pytest.approx(1.8)


def test_while_the_alert_fires_the_quiet_minutes_before_it_are_shaded_too(qtbot: QtBot) -> None:
    end = 1800.0  # hung since 600 s, the alert fired 5 min later and still fires
    live, engine = _feed((600.0, 4000.0), end)
    s = engine.cost.summary(HOST)
    assert s.held == ((0, pytest.approx(T0 + 600.0), None),)
    assert s.idle_s == pytest.approx(1190.0)  # 600 s to the last sample, at 1790 s
    tab, (x, y) = _idle_curve(qtbot, live, engine, T0 + end)
    assert float(y[-1]) == pytest.approx(s.idle)
    # The 5 min before the alert fired (at 900 s) are shaded: the tracker moved them too.
    assert float(np.interp(T0 + 660.0, x, y)) == pytest.approx(0.06)
    assert float(np.interp(T0 + 590.0, x, y)) == pytest.approx(0.0)
    row = [tab.model.cell(0, i) for i in range(tab.model.columnCount())]
    assert row[3].text == row[5].text == money(s.idle, "USD")
