"""Each built-in rule fires on a stream that has its problem (a sim scenario of the real
sampler, or hand-built recorded lines) and stays quiet on the healthy 8×A100 scenario."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence, alert_title
from gpufleet.core.wire.messages import Message, Sample

from tests.support.rules_support import BUSY, GIB, IDLE, T0, Stream, decode, sim_stream_lines

SHIPPED = load_rules(include_user=False)
SHIPPED_IDS = {r.id for r in SHIPPED}


def replay(msgs: Iterable[Message], host: HostConfig | None = None) -> tuple[list[Alert], float]:
    """Feed a stream; returns every state change and the first sample's time."""
    eng = RuleEngine(SHIPPED, [host] if host else [])
    name = host.name if host else "h"
    out: list[Alert] = []
    t0 = None
    for m in msgs:
        if t0 is None and isinstance(m, Sample):
            t0 = m.t
        out.extend(eng.feed(name, m))
    assert t0 is not None
    for a in out:  # every alert has a sentence with its numbers
        assert alert_title(a) and "?" not in alert_title(a)
        assert alert_sentence(a)
    return out, t0


def firing(alerts: list[Alert], rule_id: str) -> list[Alert]:
    return [a for a in alerts if a.rule_id == rule_id and a.state == "firing"]


def sim(scenario: str, count: int) -> list[Message]:
    return decode(sim_stream_lines(scenario, count))


ALLOW = HostConfig(
    name="h", price_per_hour=2.0, budget=1000.0, allowed_processes=("python", "python3")
)


def test_healthy_scenario_fires_nothing() -> None:
    alerts, _ = replay(sim("healthy-8xa100", 1300), ALLOW)
    assert alerts == []


def test_thermal_scenario() -> None:
    alerts, t0 = replay(sim("thermal-throttle-h100", 120))
    (a,) = firing(alerts, "thermal_throttle")
    # The airflow is blocked at 10 s; the thermal bits come on about 20 s later; the rule
    # fires 30 s (its for_s) after that, on GPU 5 only.
    assert a.gpu == 5 and 40 <= a.started_t - t0 <= 60
    assert a.evidence["window_s"] == 30
    assert a.evidence["values"]["clock_pct"] < 90
    (b,) = firing(alerts, "temp_near_slowdown")
    assert b.gpu == 5
    # The memory reaches 97 °C against its own 95 °C limit: over it, not "within 5 °C".
    (c,) = firing(alerts, "mem_temp_high")
    assert c.gpu == 5 and "at or over its own limit of 95 °C" in alert_sentence(c)
    assert "within" not in alert_sentence(c)
    assert {x.rule_id for x in alerts} == {
        "thermal_throttle",
        "temp_near_slowdown",
        "mem_temp_high",
    }


def test_power_capped_scenario() -> None:
    alerts, t0 = replay(sim("power-capped-4090", 60))
    got = firing(alerts, "power_limit_low")
    assert sorted(a.gpu for a in got) == [0, 1]
    assert all(a.started_t == t0 for a in got)
    v = got[0].evidence["values"]
    assert v["power_limit_w"] == 300.0 and v["power_default_w"] == 450.0
    assert {a.rule_id for a in alerts} == {"power_limit_low"}  # the cap bit is no extra note


def test_crashed_idle_scenario_and_budget() -> None:
    host = HostConfig(name="h", price_per_hour=10.0, budget=3.0)
    alerts, t0 = replay(sim("crashed-idle", 1200), host)
    (a,) = firing(alerts, "idle_billed")
    # The job dies 180 s in; the rule fires after 15 min of idleness.
    assert a.started_t - t0 == pytest.approx(180 + 900, abs=3)
    assert a.evidence["price_per_hour"] == 10.0
    assert "$2.50 so far" in alert_sentence(a)  # 15 min at 10/h
    # Budget 3.00 at 10/h: 80 % after 14.4 min, 100 % after 18 min.
    (b80,) = firing(alerts, "budget_80")
    (b100,) = firing(alerts, "budget_100")
    assert b80.started_t - t0 == pytest.approx(864, abs=1.5)
    assert b100.started_t - t0 == pytest.approx(1080, abs=1.5)
    assert b100.severity == "critical"


def test_foreign_process_scenario() -> None:
    alerts, t0 = replay(sim("foreign-process", 100), ALLOW)
    (m,) = firing(alerts, "miner_process")
    assert m.gpu == 3 and 60 <= m.started_t - t0 <= 63
    assert "xmrig" in alert_sentence(m)
    # A process not in an allow-list (other than a miner) is the other rule.
    strict = HostConfig(name="h", allowed_processes=("torchrun",))
    alerts, _ = replay(sim("foreign-process", 10), strict)
    assert sorted(a.gpu for a in firing(alerts, "foreign_process")) == [0, 1, 2, 3]


def test_ecc_xid_scenario() -> None:
    # GPU 1 trains on 11 of 12 NVLink links from the start; 21 min in GPU 2 fails.
    alerts, t0 = replay(sim("ecc-xid", 1380))
    rel = {
        (a.rule_id, a.gpu, a.key): round(a.started_t - t0) for a in alerts if a.state == "firing"
    }
    assert rel == {
        ("nvlink_down", 1, ""): 10,
        ("ecc_dbe_increase", 2, ""): 1260,
        ("remap_pending", 2, ""): 0,
        ("xid", 2, "48"): 1260,
        ("xid", 2, "79"): 1275,
        ("gpu_lost", 2, ""): 1275,
    }
    assert all(a.gpu == 2 for a in alerts if a.rule_id != "nvlink_down")
    xids = {a.key: a for a in firing(alerts, "xid")}
    assert xids["79"].severity == "critical" and "fallen off the bus" in alert_title(xids["79"])


# --- rules without a sim scenario: hand-built recorded lines -------------------------------


def feed(stream_msgs: list[Message], host: HostConfig | None = None) -> list[Alert]:
    alerts, _ = replay(stream_msgs, host)
    return alerts


def test_mem_temp_over_100() -> None:
    # No limit of its own reported: the guide's 100 °C.
    s = Stream(temp_mem_max_c=None)
    msgs = [s.hello, *(s.sample(t, temp_mem_c=102) for t in range(0, 61))]
    (a,) = firing(feed(msgs), "mem_temp_high")
    assert a.started_t == T0 + 60 and a.severity == "critical"
    assert "over 100 °C" in alert_title(a)
    # A limit of its own (110 °C): 102 °C is within 5 °C of it, not over it.
    s1 = Stream(temp_mem_max_c=110)
    alerts = feed([s1.hello, *(s1.sample(t, temp_mem_c=106) for t in range(0, 61))])
    assert firing(alerts, "mem_temp_high") == []
    (n,) = firing(alerts, "mem_temp_near_max")
    assert "within 5 °C of its limit (110 °C)" in alert_sentence(n)
    # Not reported (GDDR6X): nothing.
    s2 = Stream(temp_mem_max_c=None)
    assert feed([s2.hello, *(s2.sample(t, temp_mem_c=None) for t in range(0, 100))]) == []


def test_clocks_below_nominal_without_reason() -> None:
    s = Stream()
    msgs = [s.hello, *(s.sample(t, sm_clock_mhz=1000, clock_reasons=0) for t in range(0, 61))]
    (a,) = firing(feed(msgs), "clocks_below_nominal")
    assert a.started_t == T0 + 60 and a.evidence["values"]["clock_pct"] == pytest.approx(70.9)
    # The same clocks with a reason (power cap) are not "unexplained".
    msgs = [s.hello, *(s.sample(t, sm_clock_mhz=1000, clock_reasons=0x4) for t in range(0, 70))]
    assert firing(feed(msgs), "clocks_below_nominal") == []


def test_power_cap_note_at_default_limit() -> None:
    s = Stream()
    msgs = [
        s.hello,
        *(s.sample(t, clock_reasons=0x4, power_w=399, sm_clock_mhz=1300) for t in range(61)),
    ]
    (a,) = firing(feed(msgs), "power_cap_active")
    assert a.severity == "info" and a.started_t == T0 + 60


def test_p8_with_a_working_process() -> None:
    s = Stream()
    msgs: list[Message] = [s.hello, s.procs(0, [{"gpu": 0, "sm_pct": 40}])]
    msgs += [s.sample(t, pstate=8, util_gpu_pct=40, sm_clock_mhz=210) for t in range(31)]
    (a,) = firing(feed(msgs), "p8_with_process")
    assert a.started_t == T0 + 30
    # P8 with a process that only holds memory (an idle notebook kernel) is normal.
    s2 = Stream()
    msgs = [s2.hello, s2.procs(0, [{"gpu": 0, "sm_pct": 0}])]
    msgs += [s2.sample(t, gpus={0: IDLE}) for t in range(60)]
    assert firing(feed(msgs), "p8_with_process") == []


def test_remap_failed_and_retired_pending() -> None:
    s = Stream()
    alerts = feed([s.hello, s.sample(0, remap_failed=1, retired_pending=1)])
    assert {a.rule_id for a in alerts} == {"remap_failed", "retired_pending"}
    assert firing(alerts, "remap_failed")[0].severity == "critical"


def test_ecc_dbe_increase_from_an_event_and_its_hold() -> None:
    s = Stream()
    msgs = [s.hello, s.sample(0), s.event(5, "ecc", gpu=0, ecc_dbe_vol=2, message="dbe")]
    (a,) = firing(feed(msgs), "ecc_dbe_increase")
    assert a.started_t == T0 + 5
    # It stays an hour (hold_s), then resolves.
    msgs += [s.sample(t) for t in range(6, 3607)]
    alerts = feed(msgs)
    (done,) = [x for x in alerts if x.state == "resolved"]
    assert done.rule_id == "ecc_dbe_increase"
    assert done.ended_t == T0 + 3606


def test_application_xid_is_a_warning() -> None:
    s = Stream()
    alerts = feed([s.hello, s.sample(0), s.event(1, "xid", gpu=0, code=13)])
    (a,) = firing(alerts, "xid")
    assert a.severity == "warning" and a.key == "13"


def test_pcie_downtrained_only_while_busy() -> None:
    s = Stream()
    msgs = [s.hello, *(s.sample(t, pcie_gen=3, pcie_width=8) for t in range(61))]
    (a,) = firing(feed(msgs), "pcie_downtrained")
    assert a.evidence["values"]["pcie_width"] == 8
    # At idle P-states the link drops to Gen1 on purpose: no alert.
    msgs = [s.hello, *(s.sample(t, gpus={0: IDLE}) for t in range(200))]
    assert firing(feed(msgs), "pcie_downtrained") == []


def test_nvlink_down_and_slow() -> None:
    s = Stream()
    msgs = [s.hello, *(s.sample(t, nvlink_up=10) for t in range(11))]
    (a,) = firing(feed(msgs), "nvlink_down")
    assert a.evidence["values"] == {"nvlink_up": 10, "nvlink_links": 12}
    # 13 % of nominal on the only NVLink GPU, no errors: nominal alone judges nothing.
    msgs = [
        s.hello,
        *(s.sample(t, nvlink_tx_bps=40e9, nvlink_rx_bps=40e9) for t in range(301)),
    ]
    assert firing(feed(msgs), "nvlink_slow") == []


def test_host_unreachable_for_duration() -> None:
    eng = RuleEngine(SHIPPED)
    s = Stream()
    eng.feed("h", s.hello)
    eng.feed("h", s.sample(0))
    assert eng.host_status("h", "reconnecting", T0 + 10, "timeout") == []
    assert eng.tick(T0 + 69) == []
    (a,) = eng.tick(T0 + 70)
    assert a.rule_id == "host_unreachable" and a.gpu is None
    assert a.evidence["values"]["reason"] == "timeout"
    (done,) = eng.host_status("h", "streaming", T0 + 100)
    assert done.state == "resolved" and done.ended_t == T0 + 100


def test_sampler_stalled_gap_in_a_stream_and_live() -> None:
    s = Stream()
    msgs = [s.hello, s.sample(0), s.sample(1), s.sample(100), s.sample(101)]
    alerts = feed(msgs)
    fired = firing(alerts, "sampler_stalled")
    assert [a.started_t for a in fired] == [T0 + 31]  # last sample + stall_s (30 s)
    assert [a.ended_t for a in alerts if a.state == "resolved"] == [T0 + 100]
    # Live: no sample arrives between ticks of the laptop's clock.
    eng = RuleEngine(SHIPPED)
    eng.feed("h", s.hello)
    eng.feed("h", s.sample(200))
    assert eng.tick(5000.0) == []  # laptop clock: arrival noted at 5000
    assert eng.tick(5030.0) == []
    (a,) = eng.tick(5031.0)
    assert a.rule_id == "sampler_stalled"
    eng.feed("h", s.sample(231))
    assert [x.state for x in eng.history][-1] == "resolved"


def test_every_shipped_rule_is_covered_here() -> None:
    covered = {
        "thermal_throttle", "power_limit_low", "power_cap_active", "clocks_below_nominal",
        "temp_near_slowdown", "mem_temp_near_max", "mem_temp_high", "idle_billed",
        "foreign_process", "miner_process", "p8_with_process", "ecc_dbe_increase",
        "remap_pending", "remap_failed", "retired_pending", "xid", "gpu_lost",
        "pcie_downtrained", "nvlink_down", "nvlink_slow", "host_unreachable",
        "sampler_stalled", "budget_80", "budget_100",
        # tests/core/alerts/test_alert_causes.py
        "hw_slowdown", "clock_setting_low", "mem_unaccounted", "sampler_restarted",
        "pcie_replays", "slice_mem_nearly_full",
        # tests/core/alerts/test_watchdog_alerts.py
        "watchdog_pending", "watchdog_acted", "watchdog_failed", "watchdog_unready",
        # tests/core/verdicts/test_judgment.py
        "idle_held", "mem_growth", "proc_suspect",
    }  # fmt: skip
    assert covered == SHIPPED_IDS


def test_slice_memory_judged_against_the_slice_not_the_card() -> None:
    from gpufleet.core.wire.messages import parse_object
    from gpufleet_sampler import protocol

    s = Stream()
    raw = dict(s.hello.raw)
    slice_gpu = {
        "index": protocol.mig_index(0, 0),
        "uuid": "MIG-1",
        "name": "NVIDIA A100-SXM4-80GB MIG 1g.10gb",
        "nominal": {"mem_total_bytes": 10 * GIB},
        "mig": {"parent": 0, "slot": 0, "profile": "1g.10gb"},
    }
    raw["gpus"] = [*raw["gpus"], slice_gpu]
    s.hello = parse_object(raw)  # type: ignore[assignment]
    s.n = 1
    msgs: list[Message] = [s.hello]
    for t in range(90):
        sample = s.sample(t, mem_used_bytes=24 * GIB)  # the card: 30 % of 80 GiB
        assert isinstance(sample, Sample)
        row = [100, *(None for _ in sample.columns)]
        row[sample.columns.index("mem_used_bytes") + 1] = int((9.2 if t < 40 else 5.0) * GIB)
        obj = {"kind": "sample", "seq": sample.seq, "t": sample.t, "mono": t,
               "gpus": [list(sample.rows[0]), row]}  # fmt: skip
        msgs.append(parse_object(obj, s.hello))  # type: ignore[arg-type]
    alerts, t0 = replay(msgs)
    (a,) = firing(alerts, "slice_mem_nearly_full")
    assert a.gpu == 100 and a.started_t - t0 == 30
    assert "MIG slice 0 of GPU 0" in alert_sentence(a) and "30 %" in alert_sentence(a)
    assert [x.state for x in alerts if x.rule_id == "slice_mem_nearly_full"][-1] == "resolved"
    # The whole card at 95 % is not this rule's business (frameworks cache memory).
    busy = [s.hello] + [s.sample(t, mem_used_bytes=76 * GIB) for t in range(60)]
    assert not firing(replay(busy)[0], "slice_mem_nearly_full")


def test_busy_gpu_is_not_idle_and_memory_counts() -> None:
    # Utilization 0 but 70 GiB held (a hung job holding memory): not idle by definition.
    s = Stream()
    msgs = [
        s.hello,
        *(s.sample(t, **{**IDLE, "mem_used_bytes": 70 * GIB}) for t in range(0, 1000, 10)),
    ]
    assert firing(feed(msgs), "idle_billed") == []
    assert BUSY["util_gpu_pct"] > 5
