"""Each sim scenario shows its signature in the stream, deterministically under ``--seed``.

The streams are recorded with ``--no-wait`` through the real command line, so minutes of a
scenario take a fraction of a second, and decoded with the laptop's own parser.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from gpufleet.core.wire.messages import Event, Hello, Links, Message, Procs, Sample, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.sim.scenarios import SCENARIOS

from tests.support.paths import ROOT

GIB = 1 << 30
MIB = 1 << 20


def record(
    scenario: str, seconds: float, interval: float = 1.0, seed: int = 0, extra: Sequence[str] = ()
) -> list[Message]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "remote")
    env.pop("GPUFLEET_SIM_TIME_SCALE", None)
    r = subprocess.run(
        [
            sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
            "--scenario", scenario, "--seed", str(seed), "--interval", str(interval),
            "--count", str(int(seconds / interval)), "--no-wait", *extra,
        ],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    dec = StreamDecoder()
    msgs = dec.feed_many(r.stdout.splitlines())
    assert dec.bad_lines == 0, dec.last_error
    assert isinstance(msgs[0], Hello)
    return msgs


def hello_of(msgs: list[Message]) -> Hello:
    h = msgs[0]
    assert isinstance(h, Hello)
    return h


def samples(msgs: list[Message]) -> list[Sample]:
    return [m for m in msgs if isinstance(m, Sample)]


def series(msgs: list[Message], gpu: int, metric: str) -> list[tuple[float, Any]]:
    """(scenario time, value) pairs of one metric of one GPU."""
    ss = samples(msgs)
    t0 = ss[0].mono
    return [(round(s.mono - t0, 3), s.value(gpu, metric)) for s in ss]


def test_every_scenario_is_listed_with_its_gpu_count() -> None:
    assert set(SCENARIOS) >= {
        "healthy-8xa100",
        "thermal-throttle-h100",
        "power-capped-4090",
        "crashed-idle",
        "foreign-process",
        "ecc-xid",
    }


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_rows_are_complete_small_and_null_only_where_hello_says(name: str) -> None:
    msgs = record(name, 90, interval=1.0)
    hello = hello_of(msgs)
    n = SCENARIOS[name].n_gpus
    assert len(hello.gpus) == n
    for g in hello.gpus:
        assert set(g.nominal) == {k for k, _ in protocol.NOMINAL_KEYS}
        assert set(g.unsupported) <= set(protocol.COLUMN_NAMES)
    for s in samples(msgs):
        for row in s.rows:
            gpu = hello.gpu(int(row[0] or 0))
            assert gpu is not None
            lost = row[protocol.ROW_POS["lost"]] == 1
            for col, v in zip(protocol.COLUMN_NAMES, row[1:], strict=True):
                if col in gpu.unsupported:
                    assert v is None, (col, v)
                elif not lost:
                    assert v is not None, (name, col)
    seqs = [m.seq for m in msgs if isinstance(m, (Sample, Procs, Event, Links))]
    assert seqs == list(range(1, len(seqs) + 1))


def test_healthy_8xa100_trains_with_nvlink_allreduce_bursts() -> None:
    msgs = record("healthy-8xa100", 60, interval=0.25)
    hello = hello_of(msgs)
    assert all(g.name == "NVIDIA A100-SXM4-80GB" for g in hello.gpus)
    nominal = hello.gpus[0].nominal
    links_bps: Any = nominal["nvlink_links"] * nominal["nvlink_link_bps"]  # type: ignore[operator]
    for gpu in range(8):
        util = [v for _, v in series(msgs, gpu, "util_gpu_pct")]
        assert min(util) > 85
        nvl = [v for _, v in series(msgs, gpu, "nvlink_tx_bps")]
        # Bursts: some intervals run the links hard, others nearly idle.
        assert max(nvl) > 0.5 * links_bps
        assert min(nvl) < 0.1 * links_bps
        reasons = {v for _, v in series(msgs, gpu, "clock_reasons")}
        assert reasons == {0}
        temps = [v for _, v in series(msgs, gpu, "temp_gpu_c")]
        assert max(temps) < nominal["temp_slowdown_c"] - 10
        energy = [v for _, v in series(msgs, gpu, "energy_j")]
        assert all(b > a for a, b in itertools.pairwise(energy))
    procs = [m for m in msgs if isinstance(m, Procs)]
    assert procs and all(len(p.procs) == 8 for p in procs)
    assert all("train.py" in (pr.cmd or "") for pr in procs[0].procs)
    assert not [m for m in msgs if isinstance(m, Event)]


def test_thermal_throttle_h100_one_gpu_overheats_within_a_minute() -> None:
    msgs = record("thermal-throttle-h100", 120, interval=1.0)
    hello = hello_of(msgs)
    nom = hello.gpus[5].nominal
    slowdown = nom["temp_slowdown_c"]
    sm_max = nom["sm_clock_max_mhz"]
    assert isinstance(slowdown, int) and isinstance(sm_max, int)
    hot = series(msgs, 5, "temp_gpu_c")
    reasons = series(msgs, 5, "clock_reasons")
    clocks = series(msgs, 5, "sm_clock_mhz")
    viol = series(msgs, 5, "viol_thermal_pct")
    hbm = series(msgs, 5, "temp_mem_c")
    throttled = [t for (t, r) in reasons if r and r & protocol.REASON_THERMAL_MASK]
    assert throttled and throttled[0] <= 60
    late = [i for i, (t, _) in enumerate(hot) if t >= 80]
    assert all(hot[i][1] >= slowdown - 3 for i in late)
    assert all(clocks[i][1] < 0.9 * sm_max for i in late)
    assert all(viol[i][1] > 0 for i in late)
    assert any(reasons[i][1] & 0x40 for i in late)
    assert max(v for _, v in hbm[late[0] :]) >= 90
    # Clocks respond to temperature: full clock before the fault, lower after.
    assert clocks[0][1] == sm_max
    # Temperature follows power with inertia: no jump of more than a few degrees per second.
    temps = [v for _, v in hot]
    assert max(abs(b - a) for a, b in itertools.pairwise(temps)) <= 3
    # The other GPUs stay cool and unthrottled.
    for gpu in (0, 1, 2, 3, 4, 6, 7):
        reasons_g = [r for _, r in series(msgs, gpu, "clock_reasons")]
        assert all(not (r & protocol.REASON_THERMAL_MASK) for r in reasons_g)


def test_power_capped_4090_sits_at_300_watts_with_geforce_gaps() -> None:
    msgs = record("power-capped-4090", 30, interval=1.0)
    hello = hello_of(msgs)
    assert len(hello.gpus) == 2
    for g in hello.gpus:
        assert "4090" in g.name
        assert g.nominal["power_default_w"] == 450.0
        assert g.nominal["power_enforced_w"] == 300.0
        assert g.nominal["nvlink_links"] == 0
        for col in (
            "temp_mem_c", "ecc_sbe_vol", "ecc_dbe_vol", "nvlink_tx_bps", "nvlink_up",
            "sm_active_pct", "tensor_active_pct", "remap_pending",
        ):  # fmt: skip
            assert g.unsupported.get(col), col
    for gpu in (0, 1):
        for s in samples(msgs):
            assert s.value(gpu, "power_limit_w") == 300.0
            power = s.value(gpu, "power_w")
            assert power is not None and 280 <= power <= 300
            reasons = s.value(gpu, "clock_reasons")
            assert isinstance(reasons, int) and reasons & 0x4
            assert (s.value(gpu, "viol_power_pct") or 0) > 50
            clock = s.value(gpu, "sm_clock_mhz")
            assert clock is not None and clock < 2600  # well under the 2745 MHz it boosts to
            assert s.value(gpu, "temp_mem_c") is None
            assert s.value(gpu, "ecc_dbe_vol") is None
            assert s.value(gpu, "fan_pct") is not None


def test_crashed_idle_job_dies_and_the_gpus_idle() -> None:
    msgs = record("crashed-idle", 300, interval=2.0)
    crash = 180.0
    procs = [m for m in msgs if isinstance(m, Procs)]
    t0 = samples(msgs)[0].mono
    before = [p for p in procs if p.t - samples(msgs)[0].t < crash - 5]
    after = [p for p in procs if p.t - samples(msgs)[0].t > crash + 5]
    assert before and all(len(p.procs) == 4 for p in before)
    assert after and all(len(p.procs) == 0 for p in after)
    for gpu in range(4):
        for s in samples(msgs):
            t = s.mono - t0
            util = s.value(gpu, "util_gpu_pct")
            mem = s.value(gpu, "mem_used_bytes")
            assert util is not None and mem is not None
            if t < crash - 5:
                assert util > 85 and mem > 50 * GIB
            elif t > crash + 5:
                assert util <= 1 and mem < 64 * MIB
                reasons = s.value(gpu, "clock_reasons")
                assert isinstance(reasons, int) and reasons & 0x1  # gpu_idle
        power = series(msgs, gpu, "power_w")
        temp = series(msgs, gpu, "temp_gpu_c")
        assert power[-1][1] < 100
        # Cooling with inertia, not a step.
        after_crash = [v for t, v in temp if t > crash]
        assert after_crash[0] > after_crash[-1] + 10


def test_foreign_process_appears_and_takes_memory_and_sm() -> None:
    msgs = record("foreign-process", 120, interval=1.0)
    t_start = samples(msgs)[0].t
    procs = [m for m in msgs if isinstance(m, Procs)]
    early = [p for p in procs if p.t - t_start < 55]
    late = [p for p in procs if p.t - t_start > 65]
    assert early and late
    assert all(not any("xmrig" in (pr.cmd or "") for pr in p.procs) for p in early)
    for p in late:
        miners = [pr for pr in p.procs if "xmrig" in (pr.cmd or "")]
        assert len(miners) == 1
        miner = miners[0]
        assert miner.gpu == 3
        assert (miner.mem_bytes or 0) > 1 * GIB
        assert (miner.sm_pct or 0) > 20
        owner = [pr for pr in p.procs if pr.gpu == 3 and pr.pid != miner.pid]
        assert owner and (owner[0].sm_pct or 0) < 80  # the eval job lost SM to it
    mem3 = series(msgs, 3, "mem_used_bytes")
    mem_before = [v for t, v in mem3 if t < 55]
    mem_after = [v for t, v in mem3 if t > 65]
    assert min(mem_after) > max(mem_before) + 1 * GIB


def test_ecc_xid_remap_pending_xid79_and_dbe() -> None:
    msgs = record("ecc-xid", 1300, interval=1.0)
    events = [m for m in msgs if isinstance(m, Event)]
    t0 = samples(msgs)[0].t
    xids = {(e.gpu, e.code): round(e.t - t0) for e in events if e.type == protocol.EVENT_XID}
    # The job trains 21 min on GPU 1's bad link before GPU 2's double-bit error and its fall.
    assert xids == {(2, 48): 1260, (2, 79): 1275}
    assert any(e.type == protocol.EVENT_REMAP and e.gpu == 2 for e in events)
    assert any(e.type == protocol.EVENT_GPU_LOST and e.gpu == 2 for e in events)
    dbe = [v for _, v in series(msgs, 2, "ecc_dbe_vol") if v is not None]
    assert dbe[0] == 0 and max(dbe) >= 1
    pending = [v for _, v in series(msgs, 2, "remap_pending")]
    assert 1 in pending
    lost = series(msgs, 2, "lost")
    assert lost[0][1] == 0 and lost[-1][1] == 1
    last = samples(msgs)[-1]
    row2 = last.row(2)
    assert row2 is not None
    assert all(v is None for c, v in zip(last.columns, row2[1:], strict=True) if c != "lost")
    # The other GPUs go on reporting.
    assert last.value(0, "temp_gpu_c") is not None
    # Before the crash the job runs degraded: GPU 1 on 11 of 12 links, and every GPU's
    # all-reduce burst at 11/12 of the rate (it waits for the slowest GPU); after it, idle.
    nominal = hello_of(msgs).gpus[0].nominal
    links_bps: Any = nominal["nvlink_links"] * nominal["nvlink_link_bps"]  # type: ignore[operator]
    assert {v for t, v in series(msgs, 1, "nvlink_up") if t < 1260} == {11}
    assert {v for t, v in series(msgs, 0, "nvlink_up") if t < 1260} == {12}
    for gpu in range(4):
        nvl = [v for t, v in series(msgs, gpu, "nvlink_tx_bps") if 5 < t < 1260]
        assert 0.5 * links_bps < max(nvl) <= (0.82 * 11 / 12 + 0.02) * links_bps + 1
        util = [v for t, v in series(msgs, gpu, "util_gpu_pct") if 5 < t < 1260]
        assert min(util) > 5  # checkpoints dip it, never to idle
    for gpu in (0, 1, 3):
        after = [v for t, v in series(msgs, gpu, "util_gpu_pct") if t > 1280]
        assert after and max(after) == 0


def _values(msgs: list[Message]) -> list[object]:
    """Everything that must repeat exactly under the same seed (not wall times, pids)."""
    out: list[object] = []
    for m in msgs:
        if isinstance(m, Sample):
            out.append((m.seq, m.rows))
        elif isinstance(m, Event):
            out.append((m.seq, m.type, m.gpu, m.code, m.message))
        elif isinstance(m, Procs):
            out.append((m.seq, [(p.gpu, p.cmd, p.mem_bytes, p.sm_pct) for p in m.procs]))
    return out


def test_same_seed_same_values_other_seed_other_values() -> None:
    a = record("ecc-xid", 60, interval=0.5, seed=7)
    b = record("ecc-xid", 60, interval=0.5, seed=7)
    c = record("ecc-xid", 60, interval=0.5, seed=8)
    assert _values(a) == _values(b)
    assert _values(a) != _values(c)
    assert hello_of(a).gpus[0].uuid == hello_of(b).gpus[0].uuid
    assert hello_of(a).run_id != hello_of(b).run_id


def test_time_scale_brings_the_crash_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpufleet_sampler.backends.sim import SimBackend

    b = SimBackend("crashed-idle", seed=0, interval=1.0, time_scale=0.1)
    try:
        pos = protocol.ROW_POS["util_gpu_pct"]
        utils = [b.tick(100.0 + k)[0][pos] for k in range(25)]
    finally:
        b.close()
    assert utils[10] > 85 and utils[-1] == 0
