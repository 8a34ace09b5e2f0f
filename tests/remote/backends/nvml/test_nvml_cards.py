"""The sampler's CPU plan on each card class rentals come in (issue 28): Hopper with GPM, and
A100-, L40S- and RTX 4090-shaped cards without it (``card_profile`` in nvml_fake), 8 GPUs at
1 Hz, every NVML call charged by the H200 profile per call and per field.

Run on the fake's virtual CPU clock (a charge advances it exactly; the fake's own Python is
free), handed to the backend as its CPU clock: the verdicts are the plan's logic on exact
timings, the same on any machine. Without GPM the PCIe / NVLink byte counters are the dear
read; the plan may read them less often (the ``rates`` tier), and then each value is the exact
mean rate since the last read, with nothing (null) on the ticks in between.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from gpufleet_sampler import protocol, protocol_schema
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.remote.backends.nvml.test_nvml_bill import PER_TICK
from tests.support.nvml_fake import CARD_CLASSES, card_profile, charged_backend, fake_nvml

POS = protocol.ROW_POS
COSTS = ("h200", "h200-per-field")
# Past one budget check (BUDGET_CHECK_S, shortened here): the plan has met what was measured.
CHECK_S = 40.0
TICKS = 100


def _run(prof: dict[str, Any], cost: str, ticks: int = TICKS) -> tuple[dict[str, Any], list[Any]]:
    """The plan after ``ticks`` ticks at 1 Hz and every tick's rows."""
    with charged_backend(prof, cost) as (fake, b):
        b.budget_check_s = CHECK_S
        rows = []
        for t in range(1, ticks + 1):
            fake._fake.set_time(float(t))
            rows.append(b.tick(float(t)))
        plan = b.cpu_plan()
    return plan, rows


@pytest.mark.parametrize("cost", COSTS)
@pytest.mark.parametrize("card", CARD_CLASSES)
def test_every_card_class_is_planned_within_the_budget_and_names_what_it_gave_up(
    card: str, cost: str
) -> None:
    plan, _rows = _run(card_profile(card), cost)
    assert protocol_schema.problems((protocol_schema.CPU_BUDGET_KEYS,), plan) == []
    assert plan["within"] is True, (card, cost, plan)
    assert plan["planned_pct"] <= 0.8 * plan["budget_pct"]
    # What the reads cost on the (exact) clock, measured over a check, within it too.
    assert plan["measured_pct"] is not None and plan["measured_pct"] <= plan["budget_pct"]
    tiers, needed = plan["tiers_s"], plan["needed_s"]
    stretched = {k: [needed[k], v] for k, v in tiers.items() if v > needed[k]}
    assert plan["gave_up"] == stretched
    if card == "hopper":
        # GPM gives PCIe and NVLink throughput every tick: no byte counter is read.
        assert plan["throughput_s"] is None and "rates" not in plan["gave_up"]
    elif card == "4090":
        # No PCIe byte counters and no NVLink on it: nothing to stretch there either.
        assert plan["throughput_s"] is None and "rates" not in plan["gave_up"]
    else:
        # The byte counters' period is said; where a field read costs 4 ms a call, reading
        # them every tick cannot fit (8 x 4 ms a second is 3.2 % of a core): stretched.
        assert plan["throughput_s"] == tiers["rates"] <= 10.0
        if cost == "h200":
            assert plan["gave_up"]["rates"] == [1.0, tiers["rates"]] and tiers["rates"] > 1.0
    if card in ("l40s", "4090"):
        # No NVLink: the per-link tier saves nothing stretched, so it is not given up.
        assert "links" not in plan["gave_up"]


def _counting_profile(card: str) -> dict[str, Any]:
    """``card`` where the PCIe byte counters grow by a different amount each tick (tick k
    adds k MB transmitted, 2k received), so a rate over several ticks is a mean that differs
    from any one tick's rate."""
    prof = card_profile(card, 2)
    tri = [k * (k + 1) // 2 for k in range(TICKS + 5)]
    d = prof["defaults"]
    d["field:197"] = {"seq": [10**6 * v for v in tri], "cycle": False}
    d["field:198"] = {"seq": [2 * 10**6 * v for v in tri], "cycle": False}
    return prof


def test_a_stretched_counter_gives_the_exact_mean_rate_on_read_ticks_and_nothing_between() -> None:
    plan, rows = _run(_counting_profile("a100"), "h200")
    period = plan["throughput_s"]
    assert period is not None and period > 1.0
    for gpu in (0, 1):
        tx = [(t, r[gpu][POS["pcie_tx_bps"]]) for t, r in enumerate(rows, start=1)]
        rx = {t: r[gpu][POS["pcie_rx_bps"]] for t, r in enumerate(rows, start=1)}
        # The last 30 ticks: the plan has settled on its period well before.
        late = [(t, v) for t, v in tx if t > TICKS - 30]
        read = [t for t, v in late if v is not None]
        assert len(read) >= 2
        gaps = {b - a for a, b in itertools.pairwise(read)}
        assert gaps == {round(period)}, (gpu, read)
        for a, b in itertools.pairwise(read):
            # Bytes sent over ticks a+1..b: sum of k MB, over (b - a) seconds.
            mean = sum(range(a + 1, b + 1)) * 10**6 / (b - a)
            assert dict(late)[b] == int(mean)
            assert rx[b] == int(2 * mean)
            # Nothing made up in between: no value at all.
            assert all(dict(late)[t] is None and rx[t] is None for t in range(a + 1, b))


def test_a_32_bit_counter_is_never_stretched_and_the_plan_says_what_that_costs() -> None:
    """A byte counter of 32 bits wraps every 4 GiB: read less often than every tick at PCIe
    speed it can wrap twice unseen, so the plan keeps it per tick, whatever the budget."""
    prof = card_profile("l40s")
    prof["field_types"] = {**prof.get("field_types", {}), "197": 1, "198": 1}
    plan, rows = _run(prof, "h200", ticks=12)
    assert plan["tiers_s"]["rates"] == 1.0 and "rates" not in plan["gave_up"]
    assert plan["throughput_s"] == 1.0
    # One field read a tick per GPU at 4 ms a call does not fit 1 %: said, not hidden.
    assert plan["within"] is False
    assert all(r[0][POS["pcie_tx_bps"]] is not None for r in rows[2:])


# What a tier may give up first where the budget bites: none of its values is plotted per
# tick (the counters only where they hold no HBM temperature; see NvmlPlan._curveless).
FIRST = {"slow", "links", "putil", "medium", "fields"}


@pytest.mark.parametrize("cost", COSTS)
def test_on_a_4090_the_plan_gives_up_only_what_no_plot_shows_and_costs_less_than_before(
    cost: str,
) -> None:
    """A 4090 has neither NVLink nor PCIe byte counters: its dear read is the counters'
    field read (energy, throttle time), which no plot shows per tick. Where the budget
    bites, such tiers go to their limits before the plan settles for 80 % of the budget,
    which it used to fill with them (0.68-0.77 % of a core planned on this clock, the
    counters every 2-5 s; measured in bench/sampler.py above nvitop's refresh on the same
    fake): now the plan is under a third of the budget."""
    plan, _rows = _run(card_profile("4090"), cost)
    assert plan["within"] is True
    assert set(plan["gave_up"]) <= FIRST
    assert plan["tiers_s"]["fields"] == 30.0 and plan["tiers_s"]["medium"] == 30.0
    assert plan["planned_pct"] < plan["budget_pct"] / 3
    assert plan["measured_pct"] < plan["budget_pct"] / 3


def _without_hbm_temperature(prof: dict[str, Any]) -> dict[str, Any]:
    prof["defaults"].pop("field:82", None)
    return prof


@pytest.mark.parametrize("cost", COSTS)
def test_hbm_temperature_keeps_the_counters_tier_as_short_as_the_budget_allows(cost: str) -> None:
    """The Thermal tab plots HBM temperature, which rides in the counters' field read: on
    Hopper the counters are stretched only as far as the budget needs (10 s here); the same
    card without HBM temperature gives them up to their limit, every plotted curve kept."""
    with_hbm, _ = _run(card_profile("hopper"), cost)
    without, _ = _run(_without_hbm_temperature(card_profile("hopper")), cost)
    assert 1.0 < with_hbm["tiers_s"]["fields"] < 30.0
    assert without["tiers_s"]["fields"] == 30.0
    assert without["planned_pct"] < with_hbm["planned_pct"]
    for plan in (with_hbm, without):
        assert plan["within"] is True and "rates" not in plan["gave_up"]


def test_where_the_budget_does_not_bite_nothing_is_given_up_however_a_peer_compares() -> None:
    """At a tenth of the H200's call times every tier fits at its needed period: the plan
    gives nothing up, although it reads more than a peer's refresh would (that comparison
    only orders what is given up where something must be)."""
    with fake_nvml(card_profile("4090")) as fake:
        fake._fake.virtual_cpu = True
        fake._fake.set_cost("h200", 0.1)
        try:
            b = NvmlBackend(interval=1.0, events=False, cpu_clock=fake._fake.cpu_clock)
            try:
                for t in range(1, 6):
                    fake._fake.set_time(float(t))
                    b.tick(float(t))
                plan, peer = b.cpu_plan(), b.peer_pct
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
            fake._fake.virtual_cpu = False
    assert plan["gave_up"] == {} and plan["tiers_s"] == plan["needed_s"]
    assert peer is not None and plan["planned_pct"] > peer


# The curves the GUI plots per tick that a 4090 answers: all but the PCIe / NVLink
# throughput it has no counters for.
PER_TICK_4090 = tuple(n for n in PER_TICK if not n.startswith(("pcie_", "nvlink_")))


def _changing_4090() -> dict[str, Any]:
    """Two 4090s where every per-tick value differs from one tick to the next."""
    prof = card_profile("4090", 2)
    d = prof["defaults"]
    seq = range(TICKS + 5)
    d["nvmlDeviceGetUtilizationRates"] = {"gpu": {"seq": [k % 90 for k in seq]}, "memory": 40}
    for clk in (0, 1, 2):
        d[f"nvmlDeviceGetClockInfo:{clk}"] = {"seq": [1000 + k for k in seq]}
    d["nvmlDeviceGetTemperature:0"] = {"seq": [30 + k % 50 for k in seq]}
    d["nvmlDeviceGetPowerUsage"] = {"seq": [300000 + 1000 * k for k in seq]}
    mem = d["nvmlDeviceGetMemoryInfo_v2"]
    d["nvmlDeviceGetMemoryInfo_v2"] = dict(mem, used={"seq": [10**9 + k for k in seq]})
    d["nvmlDeviceGetCurrentClocksThrottleReasons"] = {"seq": [0, 4]}
    return prof


@pytest.mark.parametrize("cost", COSTS)
def test_on_a_4090_every_curve_plotted_per_tick_still_comes_every_tick(cost: str) -> None:
    plan, rows = _run(_changing_4090(), cost)
    assert plan["tiers_s"]["fields"] == 30.0  # the counters given up to their limit...
    for gpu in (0, 1):
        for name in PER_TICK_4090:
            # ...and from the second tick (the first primes the rates) a new value each tick.
            values = [r[gpu][POS[name]] for r in rows[1:]]
            assert None not in values, (name, cost)
            assert all(a != b for a, b in itertools.pairwise(values)), (name, cost)
