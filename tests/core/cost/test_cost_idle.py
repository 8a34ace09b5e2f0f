"""One definition of idle (core.cost.idle) in the idle rule, the cost tracker and the
array form the GUI's Cost tab uses (``cost.idle_mask`` + ``cost.accumulate``).

The crashed-idle scenario's real sampler stream (simulated time): the job dies 180 s in, the
``idle_billed`` rule fires 15 min later, and by then the cost tracker has counted at least
those 15 min as idle (and the money for them); the array form gives the same idle cost as the
tracker, on that stream and on one with a lost GPU, unreported utilization and a gap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostTracker, accumulate, gap_limit, gpu_idle, idle_mask
from gpufleet.core.wire.messages import Hello, Message, Sample

from tests.support.rules_support import BUSY, IDLE, Stream, decode, sim_stream_lines

PRICE = 1.89


def _array_form(msgs: Sequence[Message]) -> tuple[float, float]:
    """(total, idle) cost over the stream, computed as the Cost tab does."""
    hello = next(m for m in msgs if isinstance(m, Hello))
    samples = [m for m in msgs if isinstance(m, Sample)]
    pos = {n: i + 1 for i, n in enumerate(samples[0].columns)}
    t = np.array([s.t for s in samples])
    idle = np.ones(len(t), dtype=bool)
    for g in hello.gpus:

        def col(name: str, gpu: int = g.index) -> np.ndarray:
            out = []
            for s in samples:
                row = next(r for r in s.rows if r[0] == gpu)
                v = row[pos[name]]
                out.append(np.nan if v is None else float(v))
            return np.array(out)

        total = g.nominal.get("mem_total_bytes")
        idle &= idle_mask(
            col("util_gpu_pct"), col("mem_used_bytes"), float(total) if total else None, col("lost")
        )
    cost, idle_cost = accumulate(t, idle, PRICE, hello.interval_s or 1.0)
    return float(cost[-1]), float(idle_cost[-1])


def test_crashed_idle_stream_costs_idle_from_the_crash_on() -> None:
    host = HostConfig(name="a100-eval", price_per_hour=PRICE)
    engine = RuleEngine(load_rules(None, include_user=False), [host])
    msgs = decode(sim_stream_lines("crashed-idle", 1200))
    fired_at_idle_s = None
    for m in msgs:
        for a in engine.feed("a100-eval", m):
            if a.rule_id == "idle_billed" and a.state == "firing":
                fired_at_idle_s = engine.cost.summary("a100-eval").idle_s
    assert fired_at_idle_s is not None, "the idle rule did not fire"
    # What the rule calls idle (15 min) the cost tracker counted as idle too.
    assert fired_at_idle_s >= 900.0
    s = engine.cost.summary("a100-eval")
    assert s.idle_s == pytest.approx(1199 - 180, abs=3)
    assert s.idle == pytest.approx(s.idle_s / 3600 * PRICE) and s.idle > 0.5
    assert s.busy_s + s.idle_s == pytest.approx(s.billed_s)
    total, idle = _array_form(msgs)
    assert total == pytest.approx(s.total) and idle == pytest.approx(s.idle)


def test_array_form_matches_the_tracker_on_edge_cases() -> None:
    st = Stream(n_gpus=2)
    lost = {**IDLE, "util_gpu_pct": None, "mem_used_bytes": None, "lost": 1}
    unreported = {**IDLE, "util_gpu_pct": None}
    plan = [
        (100, {0: BUSY, 1: IDLE}),  # busy: one GPU works
        (100, {0: IDLE, 1: lost}),  # idle: a lost GPU does no work
        (100, {0: IDLE, 1: unreported}),  # not idle: no evidence of idleness
        (100, {0: IDLE, 1: IDLE}),
    ]
    msgs: list[Message] = [st.hello]
    t = 0.0
    for i, (n, gpus) in enumerate(plan):
        if i == 3:
            t += 60.0  # a gap (disconnected): billed, neither busy nor idle
        for _ in range(n):
            msgs.append(st.sample(t, gpus=gpus))
            t += 1.0
    ct = CostTracker([HostConfig(name="h", price_per_hour=PRICE)])
    for m in msgs:
        ct.feed("h", m)
    s = ct.summary("h")
    assert s.idle_s == pytest.approx(
        100 + 99
    )  # the lost stretch + the last one (first-sample rule)
    assert s.unknown_s == pytest.approx(61)
    assert gap_limit(1.0) < 61
    total, idle = _array_form(msgs)
    assert total == pytest.approx(s.total) and idle == pytest.approx(s.idle)


def test_gpu_idle_is_the_rules_definition() -> None:
    total = 80e9
    assert gpu_idle(0.0, 1e6, total) and not gpu_idle(5.0, 1e6, total)
    assert not gpu_idle(0.0, 0.1 * total, total)
    assert gpu_idle(0.0, None, total) and gpu_idle(0.0, 1e12, None)
    assert not gpu_idle(None, 0.0, total) and gpu_idle(None, None, total, lost=1)
