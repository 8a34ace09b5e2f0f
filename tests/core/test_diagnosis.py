"""Diagnosis over a window: the right explanation for each sim scenario and for recorded
lines of the slowdowns no scenario has."""

from __future__ import annotations

from _rules_support import T0, Stream, decode, sim_stream_lines
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.diagnosis import diagnose
from gpufleet.core.wire.messages import Event, Hello, Message, Procs, Sample


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
    assert ids(out) == {("diag_thermal", 5)}
    (f,) = out
    assert f.values["clock_frac"] < 0.9 and f.values["temp_slowdown_c"] == 87
    assert "GPU 5 was slowed by temperature" in finding_sentence(f)


def test_power_limit() -> None:
    out = run(decode(sim_stream_lines("power-capped-4090", 60)))
    assert ids(out) == {("diag_power_limit", 0), ("diag_power_limit", 1)}


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
