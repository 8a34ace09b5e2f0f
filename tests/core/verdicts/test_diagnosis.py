"""Diagnosis over a window: the right explanation for each sim scenario and for recorded
lines of the slowdowns no scenario has."""

from __future__ import annotations

from pathlib import Path

from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.diagnosis import diagnose
from gpufleet.core.wire.messages import Event, Hello, Message, Procs, Sample

from tests.support.rules_support import BUSY, GIB, T0, Stream, decode, sim_stream_lines


def run(msgs: list[Message], t0: float | None = None, t1: float | None = None) -> list[Finding]:
    hello = next(m for m in msgs if isinstance(m, Hello))
    samples = [m for m in msgs if isinstance(m, Sample)]
    procs = [m for m in msgs if isinstance(m, Procs)]
    events = [m for m in msgs if isinstance(m, Event)]
    lo = samples[0].t if t0 is None else t0
    hi = samples[-1].t if t1 is None else t1
    out = diagnose(hello, samples, procs, events, lo, hi)
    for f in out:
        assert finding_sentence(f)
    return out


def ids(findings: list[Finding]) -> set[tuple[str, int | None]]:
    return {(f.id, f.gpu) for f in findings}


def test_healthy_finds_nothing_to_blame() -> None:
    out = run(decode(sim_stream_lines("healthy-8xa100", 1300)))
    assert ids(out) == {("diag_none", None)}


def test_thermal_slowdown_names_the_gpu_and_the_lost_speed() -> None:
    out = run(decode(sim_stream_lines("thermal-throttle-h100", 120)))
    assert ids(out) == {("diag_thermal", 5), ("diag_throttled", 5)}
    (f,) = [f for f in out if f.id == "diag_thermal"]
    assert f.values["clock_frac"] < 0.9 and f.values["temp_slowdown_c"] == 87
    assert "GPU 5 was slowed by temperature" in finding_sentence(f)


def test_power_limit() -> None:
    out = run(decode(sim_stream_lines("power-capped-4090", 60)))
    assert {(i, g) for i, g in ids(out) if i != "diag_throttled"} == {
        ("diag_power_limit", 0),
        ("diag_power_limit", 1),
    }
    assert all(f.verdict == "warn" for f in out if f.id == "diag_power_limit")


def test_crash_time_and_that_no_hardware_cause_was_found() -> None:
    msgs = decode(sim_stream_lines("crashed-idle", 1200))
    out = run(msgs)
    (crash,) = [f for f in out if f.id == "diag_crash"]
    first = next(m.t for m in msgs if isinstance(m, Sample))
    assert crash.values["at_t"] - first == 180 and crash.values["procs_gone"] is True
    assert ("diag_none", None) in ids(out)


def test_shared_gpu() -> None:
    out = run(decode(sim_stream_lines("foreign-process", 100)))
    (f,) = [f for f in out if f.id == "diag_shared"]
    assert f.gpu == 3 and "xmrig" in finding_sentence(f)


def test_ecc_and_xid_before_the_crash() -> None:
    out = run(decode(sim_stream_lines("ecc-xid", 1380)))  # GPU 2 fails 21 min in
    got = ids(out)
    assert {("diag_xid", 2), ("diag_lost", 2), ("diag_ecc", 2), ("diag_crash", None)} <= got
    assert [f.values["xid"] for f in out if f.id == "diag_xid"] == [48, 79]
    assert all(f.verdict == "fail" for f in out if f.id in ("diag_xid", "diag_lost"))


def test_unexplained_clocks_pcie_downtraining_and_starvation() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    msgs += [s.sample(t, sm_clock_mhz=1000, pcie_gen=3) for t in range(120)]
    out = run(msgs)
    assert ids(out) == {("diag_clocks_unexplained", 0), ("diag_pcie", 0)}
    # Saw-tooth: 3 s of work, 7 s waiting, with little PCIe traffic: the data loader.
    s = Stream()
    msgs = [s.hello]
    for t in range(300):
        work = t % 10 < 3
        msgs.append(s.sample(t, util_gpu_pct=99 if work else 5, pcie_rx_bps=3e8, pcie_tx_bps=1e7))
    out = run(msgs)
    (f,) = [f for f in out if f.id == "diag_starvation"]
    assert f.values["cycles"] >= 25 and 0.25 <= f.values["busy_share"] <= 0.35
    assert "data loader" in finding_sentence(f)


def test_memory_temperature_rising_before_a_crash() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    for t in range(600):
        msgs.append(s.sample(t, temp_mem_c=80 + t * 0.04))  # 80 → 104 °C
    for t in range(600, 700):
        msgs.append(s.sample(t, util_gpu_pct=0, mem_used_bytes=0, temp_mem_c=60))
    out = run(msgs)
    (f,) = [f for f in out if f.id == "diag_mem_temp"]
    assert f.values["temp_c"] > 100
    (crash,) = [f for f in out if f.id == "diag_crash"]
    assert crash.values["at_t"] == T0 + 600


def test_empty_window() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello, s.sample(0)]
    out = run(msgs, T0 + 100, T0 + 200)
    assert ids(out) == {("diag_no_data", None)}


def test_single_sample_temperature_spike_is_no_warning() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    for t in range(600):
        spike = t in (100, 350)
        msgs.append(s.sample(t, temp_gpu_c=95 if spike else 70, temp_mem_c=110 if spike else 75))
    out = run(msgs)
    assert ids(out) == {("diag_none", None)}
    # A minute at 86 °C (slowdown 89): that is a finding.
    s = Stream()
    msgs = [s.hello, *(s.sample(t, temp_gpu_c=86 if 100 <= t < 170 else 70) for t in range(600))]
    (f,) = [f for f in run(msgs) if f.id == "diag_temperature"]
    assert f.values["temp_c"] == 86


def test_hw_power_brake_is_a_hardware_fault() -> None:
    s = Stream(n_gpus=2)
    braked = {"clock_reasons": 0x80 | 0x8, "sm_clock_mhz": 600}
    msgs: list[Message] = [s.hello]
    for t in range(300):
        msgs.append(s.sample(t, gpus={0: {**BUSY}, 1: {**BUSY, **braked}} if t >= 100 else None))
    out = run(msgs)
    (f,) = [f for f in out if f.id == "diag_hw_slowdown"]
    assert f.gpu == 1 and f.verdict == "fail" and f.values["brake"] is True
    assert "power brake" in finding_sentence(f)
    assert not [x for x in out if x.id == "diag_hw_slowdown" and x.gpu == 0]


def test_power_limit_that_does_not_bind_is_no_warning() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    msgs += [s.sample(t, power_limit_w=300.0, power_w=150.0) for t in range(120)]
    (f,) = [f for f in run(msgs) if f.id == "diag_power_limit"]
    assert f.verdict == "info" and "did not slow this job" in finding_sentence(f)


def test_hidden_memory_in_the_window() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    for t in range(0, 120, 2):
        msgs.append(s.sample(t, mem_used_bytes=60 * GIB))
        msgs.append(s.procs(t, [{"gpu": 0, "mem_bytes": 20 * GIB}]))
    (f,) = [f for f in run(msgs) if f.id == "diag_hidden_memory"]
    assert f.values["mem_hidden_bytes"] == 40 * GIB
    assert "40.0 GiB of its memory" in finding_sentence(f)


def test_throttled_share_is_the_same_in_diagnosis_and_evidence(tmp_path: Path) -> None:
    """The diagnosis and the evidence bundle's summary give one share for one window."""
    from gpufleet.core.history.store import Store
    from gpufleet.core.verdicts.bundle import simple_summary

    s = Stream()
    msgs: list[Message] = [s.hello]
    for t in range(600):
        r = 0x40 if (t // 30) % 4 == 0 else 0x4 if t % 7 == 0 else 0
        util = 0 if 300 <= t < 360 else 98  # an evaluation pause: idle time is no loss
        msgs.append(s.sample(t, clock_reasons=r, util_gpu_pct=util, viol_thermal_pct=None))
    (f,) = [f for f in run(msgs) if f.id == "diag_throttled"]
    # The samples are dated 2023: keep them past the default retention.
    with Store(tmp_path / "h.sqlite", retention_raw_days=1e5, retention_rollup_days=1e5) as store:
        for m in msgs:
            store.write("h", m)
        store.flush()
        lines = simple_summary(store, "h", T0, T0 + 600)
    (line,) = [x for x in lines if "clocks held down" in x]
    assert f"({100 * f.values['share']:.0f} %)" in line
