"""Cost: exact for a known price × time; busy/idle/unknown split; budget; advice."""

from __future__ import annotations

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostTracker
from gpufleet.core.text.catalogue import cost_sentence

from tests.support.rules_support import BUSY, GIB, IDLE, T0, Stream, decode, sim_stream_lines


def test_exact_cost_for_price_times_time() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=2.4, currency="CNY")])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 3601):
        ct.feed("h", s.sample(t))
    sm = ct.summary("h")
    assert sm.billed_s == 3600.0 and sm.total == pytest.approx(2.4)
    assert sm.busy_s == 3600.0 and sm.idle_s == 0.0 and sm.unknown_s == 0.0
    assert sm.rate_per_h == 2.4 and sm.projection_24h == pytest.approx(2.4 + 24 * 2.4)
    assert sm.effective_ratio == pytest.approx(0.98)
    assert "¥2.40" in cost_sentence(sm)


def test_billing_start_before_the_first_sample_counts_as_unknown() -> None:
    host = HostConfig(name="h", price_per_hour=6.0, billing_start=T0 - 1800)
    ct = CostTracker([host])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 1801):
        ct.feed("h", s.sample(t))
    sm = ct.summary("h")
    assert sm.billed_s == 3600.0 and sm.total == pytest.approx(6.0)
    assert sm.unknown_s == 1800.0 and sm.unknown == pytest.approx(3.0)
    assert sm.busy == pytest.approx(3.0)


def test_idle_split_matches_known_idle_periods() -> None:
    # 10 min busy, 20 min idle, 5 min busy, a 10 min gap (disconnected), 5 min idle.
    ct = CostTracker([HostConfig(name="h", price_per_hour=12.0)])
    s = Stream(n_gpus=2)
    ct.feed("h", s.hello)
    t = 0
    plan = [(600, BUSY), (1200, IDLE), (300, BUSY)]
    for length, values in plan:
        for _ in range(length):
            ct.feed("h", s.sample(t, gpus={0: values, 1: IDLE}))
            t += 1
    t += 600  # nothing arrives
    for _ in range(301):
        ct.feed("h", s.sample(t, gpus={0: IDLE, 1: IDLE}))
        t += 1
    sm = ct.summary("h")
    # Each interval takes the state of its first sample; the interval across the gap is
    # unknown (billed, neither busy nor idle): busy = 600 + 299, idle = 1200 + 300.
    assert sm.billed_s == pytest.approx(3000)
    assert sm.busy_s == pytest.approx(899)
    assert sm.idle_s == pytest.approx(1500)
    assert sm.unknown_s == pytest.approx(601)
    assert sm.idle == pytest.approx(1500 / 3600 * 12.0)


def test_crashed_idle_scenario_split() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=1.0)])
    for m in decode(sim_stream_lines("crashed-idle", 1200)):
        ct.feed("h", m)
    sm = ct.summary("h")
    # The job dies 180 s in (the sample at 180 is the first idle one).
    assert sm.busy_s == pytest.approx(180, abs=2) and sm.idle_s == pytest.approx(1019, abs=2)


def test_budget_fraction_and_exhaustion_time() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=10.0, budget=5.0)])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 1801):
        ct.feed("h", s.sample(t))
    sm = ct.summary("h")
    assert sm.budget_used_frac == pytest.approx(1.0)
    assert sm.budget_exhausted_t == pytest.approx(T0 + 1800)
    assert ct.budget_state("h") == (pytest.approx(1.0), pytest.approx(5.0))


def test_no_price_means_no_invented_cost() -> None:
    ct = CostTracker()
    s = Stream()
    ct.feed("h", s.hello)
    ct.feed("h", s.sample(0))
    ct.feed("h", s.sample(1))
    sm = ct.summary("h")
    assert sm.total is None and sm.billed_s == 1.0
    assert "price per hour" in cost_sentence(sm)


def test_advice_smaller_instance_and_fractional_gpu() -> None:
    ct = CostTracker([HostConfig(name="h")])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 700):
        ct.feed("h", s.sample(t, mem_used_bytes=30 * GIB))  # 37 % of 80 GiB, steady load
    (a,) = ct.summary("h").advice
    assert a.id == "smaller_instance" and a.values["mem_peak_frac"] == pytest.approx(0.375)
    # Bursts: 3 s busy, 7 s quiet (the guide's example), memory at 45 %.
    ct = CostTracker([HostConfig(name="h")])
    ct.feed("h", s.hello)
    for t in range(0, 2000):
        busy = t % 10 < 3
        ct.feed("h", s.sample(t, util_gpu_pct=99 if busy else 10, mem_used_bytes=36 * GIB))
    (a,) = ct.summary("h").advice
    assert a.id == "fractional_gpu" and a.values["busy_frac"] == pytest.approx(0.3, abs=0.01)
    assert "fractional" in cost_sentence(ct.summary("h"))
    # A full card gets no advice.
    ct = CostTracker([HostConfig(name="h")])
    ct.feed("h", s.hello)
    for t in range(0, 700):
        ct.feed("h", s.sample(t))
    assert ct.summary("h").advice == ()
