"""The live cost breakdown (the rule engine's tracker, which the Cost tab shows) counts as idle
the time the idle_held rule found paid for nothing: busy while the job worked, the quiet
minutes moved to idle when the alert fires, idle while it holds, busy again once the job works;
and the one judgment of the same stream gives the same figures."""

from __future__ import annotations

from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.verdicts.judgment import judge
from gpufleet.core.verdicts.window import from_messages
from gpufleet.core.wire.messages import Message

from tests.support.rules_support import GIB, Stream

DT = 10.0
HOST = "h1"  # the name _rules_support's hello gives
PRICE = 3.6  # 0.001 an hour-second: seconds read as money
QUIET: dict[str, Any] = {"util_gpu_pct": 1, "pstate": 8, "sm_clock_mhz": 210, "power_w": 60.0,
                         "clock_reasons": 0x1, "pcie_tx_bps": 1e5, "pcie_rx_bps": 1e5,
                         "mem_used_bytes": 52 * GIB}  # fmt: skip


def _stream() -> list[tuple[float, Message]]:
    """20 min of work, 30 min hung with 52 GiB held, 20 min of work again; procs every 30 s."""
    s = Stream(interval=DT)
    out: list[tuple[float, Message]] = [(0.0, s.hello)]
    t = 0.0
    while t < 4200:
        quiet = 1200 <= t < 3000
        out.append((t, s.sample(t, **(QUIET if quiet else {"mem_used_bytes": 52 * GIB}))))
        if int(t / DT) % 3 == 0:
            job = {"pid": 100, "name": "python", "cmd": "python train.py", "mem_bytes": 52 * GIB}
            out.append((t, s.procs(t, [job])))
        t += DT
    return out


def test_the_live_tracker_moves_held_idle_time_to_idle_and_back() -> None:
    cfg = HostConfig(name=HOST, price_per_hour=PRICE)
    engine = RuleEngine(load_rules(include_user=False), [cfg])
    seen: dict[float, tuple[float, float]] = {}
    fired_at = None
    for t, m in _stream():
        for a in engine.feed(HOST, m):
            if a.rule_id == "idle_held" and a.state == "firing":
                fired_at = t
        c = engine.cost.summary(HOST)
        seen[t] = (c.busy_s, c.idle_s)
    # Fired 5 min after the GPU went quiet (it had been working).
    assert fired_at == pytest.approx(1200 + 300, abs=DT)
    assert seen[1490.0] == pytest.approx((1490.0, 0.0))  # before: all of it busy
    assert seen[1500.0] == pytest.approx((1200.0, 300.0))  # the quiet 5 min moved to idle
    assert seen[2990.0] == pytest.approx((1200.0, 1790.0))  # idle while it holds
    end = engine.cost.summary(HOST)
    assert (end.busy_s, end.idle_s) == pytest.approx((1200.0 + 1190.0, 1800.0))
    assert end.idle == pytest.approx(1.8)  # 1800 s at 3.6/h
    # The one judgment of the same stream: the same breakdown.
    j = judge(from_messages(HOST, [m for _t, m in _stream()]), cfg, load_rules(include_user=False))
    assert j.cost is not None
    assert (j.cost.busy_s, j.cost.idle_s) == pytest.approx((end.busy_s, end.idle_s))
