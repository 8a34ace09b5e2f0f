"""The sampler's NVML bill: the fake pynvml's cost model (every call costs the CPU time the
recorded H200 run gave it, docs/device/h200-nvml-call-times.json), the CPU plan the backend
makes from its own start-up timing (hello's ``cpu_budget``), GPUs read on a thread pool, and
what the GUI plots still arriving as often as it is plotted.

The cost model's own tests burn real CPU (a charge is a busy wait until the thread's CPU
clock has advanced that much, so their figures are lower bounds). The plan's tests run on the
fake's virtual CPU clock instead (``virtual_cpu``: a charge advances it exactly, the fake's
own Python costs nothing), handed to the backend as its CPU clock: their verdict is the
plan's logic on exact timings, the same on a fast idle machine and a slow loaded one. What
the real reads cost is measured in bench/sampler.py, not asserted.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link.sampler_argv import backend_args
from gpufleet.core.wire.messages import Sample, StreamDecoder
from gpufleet_sampler import oneshot, protocol, stream
from gpufleet_sampler.__main__ import build_parser
from gpufleet_sampler.backends import nvml_pool
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.loop import Sampler

from tests.support.nvml_fake import fake_nvml, import_fake, profile

POS = protocol.ROW_POS


def _cpu_us(fn: Any, *args: Any) -> float:
    t0 = time.thread_time()
    fn(*args)
    return (time.thread_time() - t0) * 1e6


# ---------------------------------------------------------------------------- cost model


def test_the_h200_profile_charges_each_call_its_recorded_cpu_time() -> None:
    with fake_nvml("h100x8") as fake:
        fake.nvmlInit()
        h = fake.nvmlDeviceGetHandleByIndex(0)
        model = fake._fake.set_cost("h200")
        try:
            assert model is not None and model.name == "h200"
            # The recorded run: 4024 µs per field-value call, 1779 µs per process
            # utilization call, 56 µs for memory info (docs/device/h200-nvml-call-times.json).
            assert _cpu_us(fake.nvmlDeviceGetFieldValues, h, [83]) >= 4024
            assert _cpu_us(fake.nvmlDeviceGetFieldValues, h, [83, 82, 197, 198]) >= 4024
            assert _cpu_us(fake.nvmlDeviceGetMemoryInfo, h, fake.nvmlMemory_v2) >= 56
            charged = fake._fake.charged_us
            assert charged["nvmlDeviceGetFieldValues"] == pytest.approx(2 * 4024.4)
            assert charged["nvmlDeviceGetMemoryInfo"] == pytest.approx(56.4)
            # A call the run did not time costs the median of the cheap ones it did.
            fake.nvmlDeviceGetRemappedRows(h)
            assert charged["nvmlDeviceGetRemappedRows"] == pytest.approx(model.default_us)
            # Timed only at start-up: that cost once per arguments, then the default.
            fake.nvmlDeviceGetMaxClockInfo(h, 0)
            fake.nvmlDeviceGetMaxClockInfo(h, 0)
            assert charged["nvmlDeviceGetMaxClockInfo"] == pytest.approx(2340 + model.default_us)
        finally:
            fake._fake.set_cost(None)
        # Off again: the same call costs what the fake's Python costs.
        assert fake._fake.cost is None
        assert _cpu_us(fake.nvmlDeviceGetFieldValues, h, [83]) < 4024


def test_the_per_field_variant_spreads_the_field_read_over_its_fields() -> None:
    with fake_nvml("h100x8") as fake:
        fake.nvmlInit()
        h = fake.nvmlDeviceGetHandleByIndex(0)
        fake._fake.set_cost("h200-per-field")
        try:
            one = 4024.4 / 11  # the recorded call asked for 11 fields
            assert _cpu_us(fake.nvmlDeviceGetFieldValues, h, [83, 82]) >= 2 * one
            assert fake._fake.charged_us["nvmlDeviceGetFieldValues"] == pytest.approx(2 * one)
        finally:
            fake._fake.set_cost(None)


def test_a_bad_cost_profile_is_a_clear_error() -> None:
    fake = import_fake()
    with pytest.raises(ValueError, match=r"unknown cost profile 'h300'.*h200"):
        fake._fake.set_cost("h300")


# ---------------------------------------------------------------------------- the plan


def _backend(fake: Any, cost: str | None, n: int = 8, scale: float = 1.0, **kw: Any) -> NvmlBackend:
    """A backend whose CPU clock is the fake's virtual one, the calls charged ``cost``."""
    fake._fake.virtual_cpu = True
    fake._fake.set_cost(cost, scale)
    return NvmlBackend(interval=1.0, events=False, cpu_clock=fake._fake.cpu_clock, **kw)


def _ticks(fake: Any, b: NvmlBackend, t0: int, t1: int) -> list[list[list[Any]]]:
    out = []
    for t in range(t0, t1):
        fake._fake.set_time(float(t))
        out.append(b.tick(float(t)))
    return out


def test_without_nvml_cost_every_tier_runs_at_the_period_it_is_needed_at() -> None:
    with fake_nvml("h100x8") as fake:
        b = _backend(fake, None)
        try:
            _ticks(fake, b, 1, 4)
            plan = b.hello()[protocol.CPU_BUDGET_KEY]
        finally:
            b.close()
    assert plan["within"] is True and plan["budget_pct"] == 1.0
    assert plan["tiers_s"] == plan["needed_s"]
    assert plan["tiers_s"]["fields"] == 1.0  # the counters every tick, as before
    assert plan["workers"] == min(8, nvml_pool.usable_cpus())


@pytest.mark.parametrize("cost", ["h200", "h200-per-field"])
def test_under_the_h200_profile_the_plan_fits_one_percent_of_a_core(cost: str) -> None:
    prof = profile("h100x8")
    with fake_nvml(prof) as fake:
        try:
            b = _backend(fake, cost)
            try:
                _ticks(fake, b, 1, 3)  # the first GPM reads: GPM's cost and what it answers
                hello = b.hello()
                calls0 = fake._fake.calls["nvmlDeviceGetFieldValues"]
                _ticks(fake, b, 3, 33)
                field_reads = fake._fake.calls["nvmlDeviceGetFieldValues"] - calls0
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
    plan = hello[protocol.CPU_BUDGET_KEY]
    assert plan["within"] is True
    assert plan["planned_pct"] <= 0.8 * plan["budget_pct"]
    tiers, needed = plan["tiers_s"], plan["needed_s"]
    # The slow tiers were stretched first, to their limits, before the counters were.
    assert tiers["slow"] == 600.0 and tiers["links"] == 300.0 and tiers["putil"] == 30.0
    # The counters: stretched too, within their limit (30 s); ~10 s on this profile.
    assert needed["fields"] < tiers["fields"] <= 30.0
    # GPM gives PCIe and NVLink throughput on this Hopper profile: no field read per tick.
    g0 = hello["gpus"][0]
    assert g0["gpm_throughput"] == ["nvlink", "pcie"]
    assert field_reads < 8 * 30 / 2  # not one a tick: at most one every 2 ticks per GPU
    # What the plan was made from: the field read's cost per call and per field.
    cost_us = g0[protocol.GPU_COST_KEY]
    if cost == "h200":
        assert cost_us["fv_call"] > 3000 and cost_us["fv_field"] < 100
    else:
        assert cost_us["fv_call"] < 100 and cost_us["fv_field"] > 300
        # 18 link states by 18 calls are cheaper than 18 fields at ~366 µs each.
        assert b._gpus[0].link_states_via == "calls"


def test_the_plan_follows_what_the_reads_cost_when_the_start_up_timing_was_wrong() -> None:
    """The start-up timing priced every read at a tenth of the H200's (the calls got ten
    times dearer after it, as a driver whose calls got dearer): the reads' own CPU, measured
    every budget_check_s, is over the budget, and the plan stretches the slow tiers until it
    fits; the same GPUs back to free reads come back to the periods they are needed at."""
    with fake_nvml("h100x8") as fake:
        b = _backend(fake, "h200", scale=0.1)
        b.budget_check_s = 30.0
        try:
            _ticks(fake, b, 1, 5)
            first = b.cpu_plan()
            assert first["tiers_s"] == first["needed_s"] and first["measured_pct"] is None
            fake._fake.set_cost("h200")
            plans = []
            try:
                for t in range(5, 100):
                    _ticks(fake, b, t, t + 1)
                    plans.append(b.cpu_plan())
            finally:
                fake._fake.set_cost(None)
            dear = b.cpu_plan()
            _ticks(fake, b, 100, 200)
            cheap = b.cpu_plan()
        finally:
            b.close()
    # The first measure (30 s in) found the reads over the budget and planned again...
    replanned = next(p for p in plans if p["version"] > first["version"])
    assert replanned["measured_pct"] > replanned["budget_pct"]
    assert replanned["cost_scale"] > 2.0
    # ...and the next measures found the new plan within it.
    assert dear["measured_pct"] <= dear["budget_pct"]
    assert dear["tiers_s"]["fields"] > 1.0 and dear["tiers_s"]["links"] >= 60.0
    # Free reads again: measured far under the budget, the tiers back where they are needed.
    assert cheap["measured_pct"] < 0.5 * cheap["budget_pct"]
    assert cheap["tiers_s"] == cheap["needed_s"]
    assert cheap["cost_scale"] < dear["cost_scale"]


def test_a_budget_that_cannot_be_met_says_so_and_stretches_every_tier_to_its_limit() -> None:
    with fake_nvml("h100x8") as fake:
        try:
            b = _backend(fake, "h200", cpu_budget_pct=0.01)
            try:
                _ticks(fake, b, 1, 3)
                plan = b.cpu_plan()
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
    assert plan["within"] is False and plan["planned_pct"] > plan["budget_pct"]
    assert plan["tiers_s"] == {
        "fields": 30.0,
        "links": 300.0,
        "medium": 30.0,
        "putil": 30.0,
        # GPM gives the throughput here: the byte counters are not read, nothing to stretch.
        "rates": 1.0,
        "slow": 600.0,
    }
    assert plan["throughput_s"] is None and "rates" not in plan["gave_up"]


def test_a_budget_of_zero_is_refused_with_a_clear_message() -> None:
    with fake_nvml("h100x8"), pytest.raises(ValueError, match="CPU budget must be > 0"):
        NvmlBackend(interval=1.0, events=False, cpu_budget_pct=0.0)


def test_a_hosts_budget_reaches_the_sampler_on_its_command_line() -> None:
    """``sampler_cpu_pct`` in a host's config becomes ``--cpu-budget`` on every sampler
    command (the daemon started by ``attach --start`` included), and the plan fits it."""
    host = HostConfig(name="h", sampler_cpu_pct=0.25)
    args = backend_args(host)
    assert args[args.index("--cpu-budget") + 1] == "0.25"
    assert "--cpu-budget" not in backend_args(HostConfig(name="h"))
    parsed = build_parser().parse_args(["stream", *args])
    with fake_nvml("h100x8") as fake:
        fake._fake.set_cost("h200")
        try:
            b = stream.open_backend(parsed, events=False)
            try:
                plan = b.hello()[protocol.CPU_BUDGET_KEY]
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
    assert plan["budget_pct"] == 0.25  # 8 GPUs: the per-8-GPU budget as it is
    assert plan["tiers_s"]["fields"] > 1.0  # a tighter budget stretches the slow tiers


# ---------------------------------------------------------------------------- the pool


# Both runs plan from their own start-up timing: the same generous budget keeps one plan.
@pytest.mark.usefixtures("generous_budget")
def test_gpus_read_on_the_pool_give_the_rows_read_one_by_one() -> None:
    prof = profile("h100x8")
    prof["inject"] = [{"gpu": 5, "from_tick": 4, "key": "*", "error": "GpuIsLost"}]
    out = {}
    for workers, every in ((1, None), (4, True), (4, False)):
        with fake_nvml(prof) as fake:
            b = NvmlBackend(interval=1.0, events=False, workers=workers, pool_every=every)
            try:
                out[workers, every] = (_ticks(fake, b, 1, 8), b.events(8.0))
            finally:
                b.close()
    assert out[1, None] == out[4, True] == out[4, False]
    rows, events = out[4, True]
    assert [r[POS["lost"]] for r in rows[-1]] == [0] * 5 + [1] + [0] * 2
    assert [e["gpu"] for e in events if e["type"] == protocol.EVENT_GPU_LOST] == [5]


def _calls_by_thread(pool_every: bool, ticks: int) -> tuple[str, Any]:
    """8 GPUs under the H200 profile on a pool of 8: after the first ticks (which prime every
    tier on every GPU), the charged calls per (function, "main" / "pool"), and the plan's
    word for which GPUs the pool took."""
    with fake_nvml("h100x8") as fake:
        b = _backend(fake, "h200", workers=8, pool_every=pool_every)
        try:
            _ticks(fake, b, 1, 3)
            fake._fake.charged_on.clear()
            _ticks(fake, b, 3, 3 + ticks)
            pooled = b.hello()[protocol.CPU_BUDGET_KEY]["pooled"]
        finally:
            b.close()
        return pooled, fake._fake.charged_on.copy()


def test_with_few_cores_only_the_gpus_with_a_long_read_due_go_to_the_pool() -> None:
    """Per-tick calls are short (5-180 µs): on a thread each would hand the GIL over for
    nothing; the 4 ms field reads of the tiers that are due overlap the rest instead."""
    pooled, on = _calls_by_thread(False, 37)
    assert pooled == "long reads"
    assert on["nvmlDeviceGetFieldValues", "pool"] > 0
    assert on["nvmlDeviceGetFieldValues", "main"] == 0
    # 8 GPUs x 37 ticks of per-tick calls, a few of them on the ticks of a long read.
    assert on["nvmlDeviceGetMemoryInfo", "main"] > 0.6 * 8 * 37
    assert on["nvmlDeviceGetMemoryInfo", "pool"] > 0


def test_asked_for_every_gpu_on_the_pool_it_reads_every_gpu_there() -> None:
    pooled, on = _calls_by_thread(True, 7)
    assert pooled == "every GPU"
    assert on["nvmlDeviceGetMemoryInfo", "pool"] == 8 * 7
    assert on["nvmlDeviceGetMemoryInfo", "main"] == 0


def test_usable_cpus_follow_the_affinity_and_the_containers_quota(tmp_path: Path) -> None:
    assert 1 <= nvml_pool.usable_cpus() <= len(os.sched_getaffinity(0))
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("250000 100000\n")
    assert nvml_pool.cgroup_quota(str(v2)) == 2.5
    (v2 / "cpu.max").write_text("max 100000\n")
    assert nvml_pool.cgroup_quota(str(v2)) is None
    v1 = tmp_path / "v1" / "cpu"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    assert nvml_pool.cgroup_quota(str(tmp_path / "v1")) is None
    (v1 / "cpu.cfs_quota_us").write_text("400000\n")
    assert nvml_pool.cgroup_quota(str(tmp_path / "v1")) == 4.0
    assert nvml_pool.cgroup_quota(str(tmp_path / "none")) is None
    # Readers: one per GPU up to 8 and the usable cores, or as many as asked.
    assert nvml_pool.pool_size(8, None, 2) == 2
    assert nvml_pool.pool_size(8, None, 64) == 8
    assert nvml_pool.pool_size(2, None, 64) == 2
    assert nvml_pool.pool_size(8, 4, 2) == 4


# ---------------------------------------------------------------------------- skipped ticks


def test_skipped_ticks_are_counted_in_each_sample_and_the_client_reads_them() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            s = Sampler(b, 1.0, procs_interval=1e9)
            hello = s.hello()
            fake._fake.set_time(1.0)
            first = s.step(1.0, 1.7e9 + 1)[0]
            s.skip(3)  # the loop found itself three deadlines late
            fake._fake.set_time(5.0)
            later = s.step(5.0, 1.7e9 + 5)[0]
        finally:
            b.close()
    assert protocol.SKIPPED_KEY not in first
    assert later[protocol.SKIPPED_KEY] == 3
    dec = StreamDecoder()
    msgs = dec.feed_many([protocol.encode(m).encode() for m in (hello, first, later)])
    assert dec.bad_lines == 0
    assert [type(m) for m in msgs[1:]] == [Sample, Sample]


# ---------------------------------------------------------------------------- what is plotted

# What the GUI draws as curves, one point per sample (gui/gpufleet/ui/tabs: clocks, thermal,
# memory, interconnect; the summary and cost views read util_gpu_pct): each must be read
# afresh every tick. HBM temperature (a dotted line beside the GPU's) and the enforced power
# limit (a dashed step line drawn only where it changes) are plotted at the sampler's own
# periods for them: the counters tier and the medium tier, which hello's cpu_budget states.
PER_TICK = (
    "util_gpu_pct",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temp_gpu_c",
    "power_w",
    "mem_used_bytes",
    "clock_reasons",
    "pcie_tx_bps",
    "pcie_rx_bps",
    "nvlink_tx_bps",
    "nvlink_rx_bps",
)
PER_TIER = {"temp_mem_c": "fields", "power_limit_w": "medium"}


def _changing_profile(n: int) -> dict[str, Any]:
    """h100x8 where every plotted value differs from one tick to the next (counters grow
    by a different amount each tick, so their rates change too)."""
    prof = profile("h100x8")
    prof["count"] = n
    prof["gpus"] = []
    d = prof["defaults"]
    ticks = 200
    tri = [k * (k + 1) // 2 for k in range(ticks)]
    d["nvmlDeviceGetUtilizationRates"] = {
        "gpu": {"seq": [k % 90 for k in range(ticks)]},
        "memory": 40,
    }
    for clk in (0, 1, 2):
        d[f"nvmlDeviceGetClockInfo:{clk}"] = {"seq": [1000 + k for k in range(ticks)]}
    d["nvmlDeviceGetTemperatureV:0"] = {"seq": [30 + k % 50 for k in range(ticks)]}
    d["nvmlDeviceGetPowerUsage"] = {"seq": [300000 + 1000 * k for k in range(ticks)]}
    mem = d["nvmlDeviceGetMemoryInfo_v2"]
    d["nvmlDeviceGetMemoryInfo_v2"] = dict(mem, used={"seq": [10**9 + k for k in range(ticks)]})
    d["nvmlDeviceGetCurrentClocksEventReasons"] = {"seq": [0, 4]}
    d["nvmlDeviceGetEnforcedPowerLimit"] = {"seq": [700000 - 1000 * k for k in range(ticks)]}
    for mid in (20, 21, 60, 61):  # GPM throughput (MiB/s), where the plan takes it from GPM
        d[f"gpm:{mid}"] = {"seq": [1000.0 + 10 * k for k in range(ticks)]}
    d["field:82"] = {"seq": [40 + k % 40 for k in range(ticks)]}
    for key, scale in (("field:197", 10**6), ("field:198", 2 * 10**6)):
        d[key] = {"seq": [scale * v for v in tri], "cycle": False}
    for key in ("field:138:4294967295", "field:139:4294967295"):
        d[key] = {"seq": [10**5 * v for v in tri], "cycle": False}
    return prof


def _longest_unchanged(values: list[Any]) -> int:
    """The longest run of ticks showing the same value (1: a new value every tick)."""
    best = run = 1
    for a, b in itertools.pairwise(values):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return best


@pytest.mark.parametrize("cost", [None, "h200"])
def test_every_plotted_metric_arrives_at_least_once_per_interval_it_is_plotted_at(
    cost: str | None,
) -> None:
    ticks = 70
    with fake_nvml(_changing_profile(2)) as fake:
        try:
            b = _backend(fake, cost, n=2)
            try:
                s = Sampler(b, 1.0, procs_interval=2.0)
                s.hello()
                samples = []
                for t in range(1, ticks + 1):
                    fake._fake.set_time(float(t))
                    samples += [m for m in s.step(float(t), 1.7e9 + t) if m["kind"] == "sample"]
                plan = b.cpu_plan()
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
    assert plan["within"] is True
    for gpu in (0, 1):
        # From tick 3: the first tick primes the rates, the second the plan with GPM's cost.
        series = {name: [m["gpus"][gpu][POS[name]] for m in samples[2:]] for name in POS}
        for name in PER_TICK:
            assert None not in series[name], (name, cost)
            assert _longest_unchanged(series[name]) == 1, (name, cost, series[name])
        for name, tier in PER_TIER.items():
            period = plan["tiers_s"][tier]
            assert None not in series[name], (name, cost)
            assert _longest_unchanged(series[name]) <= period, (name, cost, period)
        if cost is None:
            assert _longest_unchanged(series["temp_mem_c"]) == 1  # as before: every tick
        else:
            assert plan["tiers_s"]["fields"] < 30.0 and plan["tiers_s"]["medium"] <= 30.0


# ---------------------------------------------------------------------------- check


def test_check_starts_no_event_thread_to_wait_for(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A one-shot ``check`` sees no Xid events (they come from a running daemon) and used to
    wait up to one event wait (0.5 s) at exit for the thread it started."""
    parser = build_parser()
    args = parser.parse_args(["check", "--backend", "nvml", "--state-dir", str(tmp_path)])
    with fake_nvml("h100x8") as fake:
        assert oneshot.run(args) == 0
        assert fake._fake.calls["nvmlEventSetCreate"] == 0
        assert fake._fake.calls["nvmlDeviceRegisterEvents"] == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["kind"] == "check" and len(facts["gpus"]) == 8
    assert facts["xid"]["seen"] == "unknown"


# ---------------------------------------------------------------------------- per-link views


def _links_ticks(
    prof: dict[str, Any], ticks: int, before: Any = None
) -> tuple[list[int], list[int], dict[str, Any]]:
    """Two GPUs of ``prof`` under the H200 profile for ``ticks`` ticks at 1 Hz: the ticks
    that sent a ``links`` message, those that sent an NVLink event, and the last plan.
    ``before(backend, t)`` runs ahead of each tick."""
    prof["count"] = 2
    links: list[int] = []
    events: list[int] = []
    with fake_nvml(prof) as fake:
        try:
            b = _backend(fake, "h200", n=2)
            try:
                s = Sampler(b, 1.0, procs_interval=1e9)
                s.hello()
                for t in range(1, ticks + 1):
                    if before is not None:
                        before(b, t)
                    fake._fake.set_time(float(t))
                    msgs = s.step(float(t), 1.7e9 + t)
                    if any(m["kind"] == protocol.KIND_LINKS for m in msgs):
                        links.append(t)
                    if any(
                        m["kind"] == protocol.KIND_EVENT and m.get("type") == "nvlink" for m in msgs
                    ):
                        events.append(t)
                plan = b.cpu_plan()
            finally:
                b.close()
        finally:
            fake._fake.set_cost(None)
    return links, events, plan


def test_per_link_values_come_every_5_s_while_someone_watches_them() -> None:
    """Where the plan stretched the per-link NVLink reads (to 300 s under the H200 profile),
    a client that shows them (the laptop's per-link view) asks for them: every 5 s for as long
    as it said, then back to the plan's period."""

    def ask(b: NvmlBackend, t: int) -> None:
        if t == 10:
            assert b.cpu_plan()["tiers_s"]["links"] == 300.0
            b.watch_links(20.0, float(t))

    at, _events, _plan = _links_ticks(profile("h100x8"), 60, ask)
    # The start-up read on the first tick; then, asked at 10 s for 20 s: 10, 15, ... 30; the
    # next per the plan's 300 s.
    assert at == [1, 10, 15, 20, 25, 30]


def test_a_link_that_goes_down_brings_the_per_link_values_back_to_every_5_s() -> None:
    """No client needs to look: the sampler itself watches its links for 10 minutes after
    one went down, so the daemon's ring holds the detail for a laptop that was asleep."""
    prof = profile("h100x8")
    # GPU 1's link 5 goes down at tick 40 (the link states are read every 5 s or more).
    down = {"seq": [1] * 40 + [0] * 2000}
    prof["gpus"] = [{}, {"field:165:5": down, "nvmlDeviceGetNvLinkState:5": down}]
    at, events, plan = _links_ticks(prof, 120)
    assert plan["tiers_s"]["links"] == 300.0
    assert events and 40 <= events[0] <= 75
    down_at = events[0]
    # Before: the start-up read only (the plan's 300 s); after: every 5 s.
    assert at[0] == 1 and all(t > down_at for t in at[1:])
    assert len(at) >= 1 + (120 - down_at) // 5 - 1
    assert all(b - a == 5 for a, b in itertools.pairwise(at[2:]))


def test_the_plan_settles_after_the_first_gpm_reads() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            settled = [b.cpu_plan()["settled"]]
            for t in range(1, 5):
                _ticks(fake, b, t, t + 1)
                settled.append(b.cpu_plan()["settled"])
        finally:
            b.close()
    # Three timed GPM reads (ticks 1-3), then the plan stands.
    assert settled == [False, False, False, True, True]
