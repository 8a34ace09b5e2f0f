"""The causes the rules used to miss or cry wolf on, each on a stream this test writes from
the protocol (not recorded from the sim): HW slowdown and power brake on the right GPU only,
every clock event reason, memory held by nothing visible, NVLink judged against the job,
restart vs stall vs disconnect (live and in replay), memory temperature against its own
limit, a limit below the default that does not bind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence, alert_title, reason_meaning
from gpufleet.core.wire.messages import Message, parse_object
from gpufleet_sampler import protocol

from tests.support.rules_support import BUSY, GIB, T0, Stream

SHIPPED = load_rules(include_user=False)


def run(msgs: Iterable[Message], host: str = "h100-a") -> tuple[RuleEngine, list[Alert]]:
    eng = RuleEngine(SHIPPED)
    out: list[Alert] = []
    for m in msgs:
        out.extend(eng.feed(host, m))
    for a in out:
        assert host in alert_title(a)  # every title names the host
        assert "?" not in alert_title(a)
        assert alert_sentence(a)
    return eng, out


def fired(alerts: list[Alert], rule_id: str) -> list[Alert]:
    return [a for a in alerts if a.rule_id == rule_id and a.state == "firing"]


def warnings(alerts: list[Alert]) -> list[Alert]:
    return [a for a in alerts if a.state == "firing" and a.severity in ("warning", "critical")]


# --- clock event reasons ---------------------------------------------------------------------


def test_power_brake_fires_on_the_braked_gpu_only() -> None:
    s = Stream(n_gpus=4)
    braked = {**BUSY, "clock_reasons": 0x80, "sm_clock_mhz": 600, "viol_power_pct": 100.0}
    msgs = [s.hello]
    for t in range(120):
        msgs.append(s.sample(t, gpus={0: BUSY, 1: BUSY, 2: braked, 3: BUSY}))
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "hw_slowdown")
    assert a.gpu == 2 and a.started_t == T0 + 10  # for_s 10
    assert alert_title(a) == "HW power brake on GPU 2 of h100-a"
    assert "power supply" in alert_sentence(a)
    # The time held comes from the violation counter as well as the bit.
    thr = a.evidence["throttle"]
    assert thr["share"] == 1.0 and thr["by_reason"]["hw_power_brake"] == pytest.approx(10, abs=1)
    assert thr["counter_s"]["power"] == pytest.approx(10, abs=1)
    # A reason is an explanation: no "clocks below nominal with no reason" on top of it.
    assert {x.rule_id for x in warnings(alerts)} == {"hw_slowdown"}


def test_hw_slowdown_fires_on_its_gpu_only_even_at_idle() -> None:
    s = Stream(n_gpus=2)
    slowed = {**BUSY, "util_gpu_pct": 3, "clock_reasons": 0x8 | 0x1, "sm_clock_mhz": 300}
    msgs = [s.hello, *(s.sample(t, gpus={0: BUSY, 1: slowed}) for t in range(40))]
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "hw_slowdown")
    assert a.gpu == 1 and alert_title(a) == "HW slowdown on GPU 1 of h100-a"
    assert a.evidence["values"]["reasons"] == ["hw_slowdown"]


def test_thermal_bits_either_one() -> None:
    for bit in (0x20, 0x40):
        s = Stream()
        hot = {"clock_reasons": bit, "sm_clock_mhz": 1100, "temp_gpu_c": 88}
        _eng, alerts = run([s.hello, *(s.sample(t, **hot) for t in range(40))])
        (a,) = fired(alerts, "thermal_throttle")
        assert a.evidence["values"]["reasons"] == protocol.reason_labels(bit)
        assert "held down 100 % of the time" in alert_sentence(a)


def test_settings_that_hold_the_clock_low() -> None:
    # Applications clocks set low (0x2) while busy: someone's setting costs speed.
    s = Stream()
    low = {"clock_reasons": 0x2, "sm_clock_mhz": 1000}
    _eng, alerts = run([s.hello, *(s.sample(t, **low) for t in range(70))])
    (a,) = fired(alerts, "clock_setting_low")
    assert "applications_clocks" not in alert_sentence(a)
    assert "clocks_setting" in alert_sentence(a) and "nvidia-smi -rac" in alert_sentence(a)
    assert fired(alerts, "clocks_below_nominal") == []
    # Sync boost or the display clock at the full clock: nothing lost, nothing said.
    for bit in (0x10, 0x100):
        s = Stream()
        _eng, alerts = run([s.hello, *(s.sample(t, clock_reasons=bit) for t in range(200))])
        assert alerts == []


def test_power_cap_at_the_default_is_a_note_not_a_warning() -> None:
    s = Stream()
    capped = {"clock_reasons": 0x4, "sm_clock_mhz": 1200, "power_w": 399.0, "viol_power_pct": 80}
    _eng, alerts = run([s.hello, *(s.sample(t, **capped) for t in range(120))])
    assert warnings(alerts) == []
    (a,) = fired(alerts, "power_cap_active")
    assert a.severity == "info"


def test_every_reason_has_a_meaning() -> None:
    for _bit, label, _ in protocol.REASON_BITS:
        assert reason_meaning(label) != label


def test_power_limit_below_default_that_does_not_bind() -> None:
    # 300 W of a 400 W default, drawing 150 W, no cap bit: the limit does not slow the job.
    s = Stream()
    vals = {"power_limit_w": 300.0, "power_w": 150.0, "clock_reasons": 0}
    _eng, alerts = run([s.hello, *(s.sample(t, **vals) for t in range(5))])
    (a,) = fired(alerts, "power_limit_low")
    text = alert_sentence(a)
    assert "does not slow this job at the moment" in text
    assert "runs slower" not in text and "Nothing is lost yet" in text
    # Drawing at the limit with the cap bit: it does.
    s = Stream()
    vals = {"power_limit_w": 300.0, "power_w": 299.0, "clock_reasons": 0x4, "sm_clock_mhz": 1100}
    _eng, alerts = run([s.hello, *(s.sample(t, **vals) for t in range(5))])
    (b,) = fired(alerts, "power_limit_low")
    assert "runs slower than the same card elsewhere" in alert_sentence(b)


# --- memory ------------------------------------------------------------------------------


def _procs(s: Stream, t: float, per_gpu: Mapping[int, int]) -> Message:
    return s.procs(t, [{"gpu": g, "pid": 100 + g, "mem_bytes": b} for g, b in per_gpu.items()])


def test_memory_held_by_no_visible_process() -> None:
    s = Stream(n_gpus=2)
    # GPU 1: 40 GiB used, the only listed process holds 10 GiB: 30 GiB nobody shows.
    g0 = {**BUSY, "mem_used_bytes": 30 * GIB + (300 << 20)}
    g1 = {**BUSY, "mem_used_bytes": 40 * GIB}
    msgs: list[Message] = [s.hello]
    for t in range(0, 200, 2):
        msgs.append(s.sample(t, gpus={0: g0, 1: g1}))
        msgs.append(_procs(s, t, {0: 30 * GIB, 1: 10 * GIB}))
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "mem_unaccounted")
    assert a.gpu == 1 and a.started_t == T0 + 120
    v = a.evidence["values"]
    assert v["mem_hidden_bytes"] == 30 * GIB
    assert "30.0 GiB of the memory of GPU 1 of h100-a" in alert_sentence(a)


def test_hidden_memory_needs_a_fresh_process_snapshot() -> None:
    # The day tier keeps a snapshot only when the process set changes: its figures go stale
    # while the job grows, so a minute-old snapshot judges nothing.
    s = Stream()
    msgs: list[Message] = [s.hello, _procs(s, 0, {0: 10 * GIB})]
    msgs += [s.sample(t, mem_used_bytes=70 * GIB) for t in range(60, 3600, 60)]
    _eng, alerts = run(msgs)
    assert fired(alerts, "mem_unaccounted") == []


# --- NVLink ------------------------------------------------------------------------------


def _allreduce(t: int, gpus: int, scale: Mapping[int, float] | None = None) -> dict[int, Any]:
    """Data-parallel all-reduce on 8 GPUs: bursts at 35 % of the 300 GB/s nominal while the
    gradients are exchanged, quiet while computing; every GPU in step."""
    phase = t % 10
    rate = 105e9 if phase < 4 else 2e9
    out = {}
    for g in range(gpus):
        k = (scale or {}).get(g, 1.0)
        out[g] = {**BUSY, "nvlink_tx_bps": rate * k, "nvlink_rx_bps": rate * k}
    return out


def test_healthy_allreduce_at_35_percent_of_nominal_raises_nothing() -> None:
    s = Stream(n_gpus=8)
    msgs = [s.hello, *(s.sample(t, gpus=_allreduce(t, 8)) for t in range(1800))]
    _eng, alerts = run(msgs)
    assert alerts == []


def test_a_gpu_at_half_its_peers_nvlink_rate() -> None:
    s = Stream(n_gpus=8)
    msgs = [s.hello, *(s.sample(t, gpus=_allreduce(t, 8, {5: 0.4})) for t in range(900))]
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "nvlink_slow")
    assert a.gpu == 5 and a.severity == "warning"
    assert a.evidence["values"]["variant"] == "peers"
    assert alert_title(a) == "NVLink of GPU 5 of h100-a slower than its peers"
    assert "40 % of theirs" in alert_sentence(a)


def _links(s: Stream, t: float, gpu: int, per_link: list[float], up: list[int]) -> Message:
    n = len(per_link)
    obj = {
        "kind": "links",
        "seq": s._next(),
        "t": T0 + t,
        "gpus": [[gpu, per_link, per_link, up, [25e9] * n]],
    }
    return parse_object(obj, s.hello)


def test_a_dead_nvlink_lane() -> None:
    # All 12 links up, but link 7 carries nothing while the other 11 carry 8 GB/s each.
    s = Stream()
    lanes = [8e9] * 12
    lanes[7] = 0.0
    msgs: list[Message] = [s.hello]
    for t in range(400):
        msgs.append(s.sample(t, nvlink_tx_bps=88e9, nvlink_rx_bps=88e9))
        if t % 5 == 0:
            msgs.append(_links(s, t, 0, lanes, [1] * 12))
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "nvlink_slow")
    assert a.evidence["values"]["links_slow"] == [7]
    assert alert_title(a) == "Dead NVLink lane on GPU 0 of h100-a"
    # The same with every lane busy: nothing.
    s = Stream()
    msgs = [s.hello]
    for t in range(400):
        msgs.append(s.sample(t, nvlink_tx_bps=96e9, nvlink_rx_bps=96e9))
        if t % 5 == 0:
            msgs.append(_links(s, t, 0, [8e9] * 12, [1] * 12))
    assert run(msgs)[1] == []


def test_a_link_down_is_critical_at_once() -> None:
    s = Stream(n_gpus=2)
    down = {**BUSY, "nvlink_up": 11}
    msgs = [s.hello, *(s.sample(t, gpus={0: BUSY, 1: down}) for t in range(20))]
    (a,) = fired(run(msgs)[1], "nvlink_down")
    assert a.gpu == 1 and a.severity == "critical"


def test_rising_nvlink_error_counters() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello]
    for t in range(600):
        msgs.append(s.sample(t))
        if t % 10 == 0:
            msgs.append(s.event(t, "nvlink", gpu=0, code=40, message="GPU 0: 40 new NVLink errors"))
    (a,) = fired(run(msgs)[1], "nvlink_slow")
    assert a.evidence["values"]["variant"] == "errors"
    assert alert_title(a) == "NVLink errors rising on GPU 0 of h100-a"


# --- restart, stall, disconnect ------------------------------------------------------------


def _hello(run_id: str, n_gpus: int = 1) -> Message:
    s = Stream(n_gpus=n_gpus)
    obj = dict(s.hello.raw)
    obj["run_id"] = run_id
    return parse_object(obj)


def test_a_sampler_restart_is_called_a_restart() -> None:
    s = Stream()
    msgs: list[Message] = [_hello("run-a"), *(s.sample(t) for t in range(60))]
    msgs.append(_hello("run-b"))
    s.seq = 0  # a new stream starts its numbers again
    msgs.append(
        s.event(
            110, "note", gpu=None, reason="restart", gap_from=61, gap_to=61, message="restarted"
        )
    )
    msgs += [s.sample(t) for t in range(110, 200)]
    _eng, alerts = run(msgs)
    assert fired(alerts, "sampler_stalled") == []
    (a,) = fired(alerts, "sampler_restarted")
    assert a.severity == "info" and a.started_t == T0 + 110
    text = alert_sentence(a)
    assert "restarted" in alert_title(a) and "started over" in text and "driver hung" not in text
    assert a.evidence["values"]["gap_s"] == 51 and a.evidence["values"]["lost"] is True


def test_a_real_stall_is_still_a_stall() -> None:
    # The sampler produced nothing for 100 s (its numbers go on by one): stalled.
    s = Stream()
    msgs = [s.hello, *(s.sample(t) for t in range(10)), *(s.sample(t) for t in range(110, 120))]
    (a,) = fired(run(msgs)[1], "sampler_stalled")
    assert a.evidence["values"]["gap_s"] == 101


def _day_tier(s: Stream, t0: int, t1: int, note: bool) -> list[Message]:
    """A 2-hour laptop disconnect back-filled by the daemon: the raw ring (an hour) is too
    short, so older messages come from the day tier, one sample a minute, with their seq
    numbers (the thinned ones in between are never sent)."""
    out: list[Message] = []
    first = s.seq + 1
    per_minute = 60 + 30  # 60 samples and 30 process snapshots a minute at 1 Hz / 2 s
    if note:
        gap_to = first + per_minute * (t1 - t0) // 60
        out.append(
            s.event(
                t1,
                "note",
                gpu=None,
                reason="ring",
                gap_from=first,
                gap_to=gap_to,
                message="older than the raw ring",
            )
        )
    for t in range(t0, t1, 60):
        s.seq += per_minute - 1
        out.append(s.sample(t))
    s.seq += per_minute - 1  # the raw ring starts after the last thinned minute
    return out


@pytest.mark.parametrize("note", [True, False])
def test_two_hour_disconnect_from_the_day_tier_raises_no_stall(note: bool) -> None:
    s = Stream()
    msgs: list[Message] = [s.hello, *(s.sample(t) for t in range(600))]
    msgs.append(s.hello)  # the reconnect re-sends the same hello (same run)
    # Away from 600 s to 7800 s: the hour before the reconnect is still in the raw ring.
    msgs += _day_tier(s, 600, 4200, note)
    msgs += [s.sample(t) for t in range(4200, 8400)]
    _eng, alerts = run(msgs)
    assert alerts == []


def test_live_laptop_sleep_is_no_stall() -> None:
    eng = RuleEngine(SHIPPED)
    s = Stream()
    eng.feed("h", s.hello)
    eng.feed("h", s.sample(0))
    assert eng.tick(1000.0) == []
    assert eng.tick(1005.0) == []
    # The laptop slept two hours: the first tick after it is no evidence of a stall.
    assert eng.tick(8205.0) == []
    assert eng.tick(8210.0) == []
    # But silence after the wake-up is.
    (a,) = eng.tick(8240.0)
    assert a.rule_id == "sampler_stalled"


# --- temperatures --------------------------------------------------------------------------


def test_memory_temperature_against_its_own_limit() -> None:
    s = Stream(temp_mem_max_c=95)
    msgs = [s.hello, *(s.sample(t, temp_mem_c=97) for t in range(70))]
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "mem_temp_high")
    text = alert_sentence(a)
    assert "97 °C, at or over its own limit of 95 °C" in text and "within" not in text
    assert fired(alerts, "mem_temp_near_max") == []


def test_single_sample_temperature_spikes_raise_nothing() -> None:
    s = Stream()
    msgs = [s.hello]
    for t in range(600):
        spike = t % 97 == 50
        msgs.append(s.sample(t, temp_gpu_c=99 if spike else 66, temp_mem_c=120 if spike else 72))
    assert run(msgs)[1] == []


def test_flickering_thermal_bits_are_one_episode() -> None:
    # Thermal slowdown set two samples in three: one alert, with its share of the time.
    from gpufleet.core.alerts.throttle import throttled_share

    s = Stream()
    msgs = [s.hello]
    reasons = [0x40 if t % 3 else 0 for t in range(100)]
    for t, r in enumerate(reasons):
        msgs.append(s.sample(t, clock_reasons=r, temp_gpu_c=88, viol_thermal_pct=None))
    _eng, alerts = run(msgs)
    (a,) = fired(alerts, "thermal_throttle")
    since = a.evidence["since_t"]
    sel = [t for t in range(100) if since <= T0 + t <= a.started_t]
    ref = throttled_share([T0 + t for t in sel], [reasons[t] for t in sel])
    assert a.evidence["throttle"]["share"] == pytest.approx(ref.share, abs=1e-3)
    assert 0.6 <= ref.share <= 0.7


def test_hw_slowdown_with_a_thermal_reason_is_thermal() -> None:
    s = Stream()
    hot = {"clock_reasons": 0x8 | 0x40, "sm_clock_mhz": 700, "temp_gpu_c": 92}
    _eng, alerts = run([s.hello, *(s.sample(t, **hot) for t in range(60))])
    assert fired(alerts, "hw_slowdown") == []
    assert len(fired(alerts, "thermal_throttle")) == 1


def test_pcie_replays_rising_on_one_gpu() -> None:
    s = Stream(n_gpus=2)
    msgs: list[Message] = [s.hello]
    for t in range(400):
        bad = {**BUSY, "pcie_replays": 5000 + (t // 2 if t >= 100 else 0)}
        healthy = {**BUSY, "pcie_replays": 12}  # an old count since boot: no alert
        msgs.append(s.sample(t, gpus={0: healthy, 1: bad}))
    (a,) = fired(run(msgs)[1], "pcie_replays")
    assert a.gpu == 1 and a.evidence["values"]["replays_rise"] == 100
    assert "retransmitted 100 times within 10 min" in alert_sentence(a)


def test_reason_masks_that_nvml_cannot_send_count_as_no_reason() -> None:
    import numpy as np
    from gpufleet.core.alerts.throttle import REASON_SW_THERMAL, reason_bits

    # The wire takes any number up to 2**64 in a column: a broken sampler's -1, 2**63 or
    # inf must not wrap into a mask with every bit set (a throttle alert from nothing).
    got = reason_bits(
        np.array([np.nan, -1.0, 2.0**63, 2.0**64, np.inf, REASON_SW_THERMAL, 3.0, 2.0**62])
    )
    assert got.tolist() == [0, 0, 0, 0, 0, REASON_SW_THERMAL, 3, 2**62]
