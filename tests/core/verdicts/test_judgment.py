"""The one judgment of a window (``verdicts.judgment``) on streams this test writes from the
protocol (``judgment_streams``): for each case of issue 25, in two shapes, the alert, the
diagnosis and the cost say the same thing; and over every stream of the corpus, every alert
that fired is in the diagnosis and nothing it concerns is called normal."""

from __future__ import annotations

from functools import cache

import pytest
from gpufleet.core.alerts.rules import load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import alert_sentence, alert_title, finding_sentence
from gpufleet.core.verdicts.judgment import NORMAL_IDS, Judgment, judge
from gpufleet.core.verdicts.window import from_messages

from tests.support.judgment_streams import ALL
from tests.support.rules_support import GIB, T0

SHIPPED = load_rules(include_user=False)
PRICE = 2.0


@cache
def judged(name: str) -> Judgment:
    host, msgs = ALL[name]()
    return judge(from_messages(host, msgs), HostConfig(name=host, price_per_hour=PRICE), SHIPPED)


def fired(j: Judgment, rule: str) -> list[Alert]:
    return [a for a in j.fired() if a.rule_id == rule]


def ids(j: Judgment) -> set[str]:
    return {f.id for f in j.findings}


def only(j: Judgment, fid: str) -> Finding:
    found = [f for f in j.findings if f.id == fid]
    assert len(found) == 1, (fid, [f.id for f in j.findings])
    return found[0]


def alarms(j: Judgment) -> list[Alert]:
    return [a for a in j.fired() if a.severity in ("warning", "critical")]


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_alert_is_in_the_diagnosis_and_nothing_it_flags_is_normal(name: str) -> None:
    j = judged(name)
    for a in j.fired():
        said = j.findings_for(a)
        assert said, (a.rule_id, [f.id for f in j.findings])
        assert all(f.gpu in (None, a.gpu) for f in said)
        assert "?" not in alert_title(a)
    if alarms(j):
        assert not ids(j) & NORMAL_IDS
    for f in j.findings:
        assert finding_sentence(f) and not finding_sentence(f).startswith(f.id)


def test_the_healthy_run_is_called_normal_and_raises_nothing() -> None:
    j = judged("healthy")
    assert alarms(j) == []
    assert "diag_none" in ids(j)
    assert j.cost is not None and j.cost.idle_s == 0


@pytest.mark.parametrize("name", ["pcie-x8", "pcie-x8-stop"])
def test_pcie_replays_then_x8_in_alerts_and_diagnosis(name: str) -> None:
    j = judged(name)
    assert fired(j, "pcie_replays") and fired(j, "pcie_downtrained")
    assert {"diag_pcie", "diag_alert"} <= ids(j)
    replays = fired(j, "pcie_replays")[0]
    assert any(f.id == "diag_alert" for f in j.findings_for(replays))
    assert "diag_none" not in ids(j)


@pytest.mark.parametrize(("name", "before", "after"), [("power-450-300", 450, 300),
                                                      ("power-400-250", 400, 250)])  # fmt: skip
def test_a_lowered_limit_is_quoted_as_set_never_blended(name: str, before: int, after: int) -> None:
    j = judged(name)
    (a,) = fired(j, "power_limit_low")
    assert a.evidence["values"]["power_limit_w"] == after
    f = only(j, "diag_power_limit")
    assert f.values["power_limit_w"] == after
    assert [(c["from_w"], c["to_w"]) for c in f.values["changes"]] == [(before, after)]
    text = finding_sentence(f)
    assert f"{before} W to {after} W" in text
    assert f"{(before + after) / 2:.0f}" not in text  # the blend of the two limits


@pytest.mark.parametrize(("name", "leak_s"), [("leak-fast", 1200), ("leak-slow", 7200)])
def test_a_leak_is_warned_before_full_and_the_crash_names_memory(name: str, leak_s: int) -> None:
    j = judged(name)
    (a,) = fired(j, "mem_growth")
    full_t = T0 + 600 + leak_s
    assert a.started_t < full_t  # warned before it got there
    v = a.evidence["values"]
    assert 0 < v["eta_s"] <= 7200
    assert v["full_at_t"] == pytest.approx(full_t, abs=1800)  # a projection, 2 h out at most
    oom = only(j, "diag_oom")
    assert oom.values["mem_peak_bytes"] >= 79 * GIB
    assert "memory exhaustion" in finding_sentence(oom)
    assert "diag_crash" in ids(j) and "diag_mem_growth" in ids(j)


@pytest.mark.parametrize("name", ["hung-p8", "hung-p0"])
def test_a_hung_job_holding_memory_is_caught_sooner_and_counted_idle(name: str) -> None:
    j = judged(name)
    assert fired(j, "idle_billed") == []  # memory held: the plain rule cannot see it
    (a,) = fired(j, "idle_held")
    v = a.evidence["values"]
    assert v["kind"] == "hung"
    assert a.started_t - v["quiet_since_t"] == pytest.approx(300, abs=10)  # not 15 min
    assert v["cost_so_far"] == pytest.approx(300 / 3600 * PRICE, abs=0.01)
    assert "hung" in alert_sentence(a)
    assert j.findings_for(a)[0].id == "diag_idle_held"
    assert j.cost is not None
    assert j.cost.idle_s == pytest.approx(3600, abs=20)  # the quiet hour, all of it
    assert j.cost.busy_s == pytest.approx(3600, abs=20)


@pytest.mark.parametrize("name", ["notebook-a100", "notebook-4090"])
def test_a_forgotten_notebook_is_named_and_its_hours_are_idle(name: str) -> None:
    j = judged(name)
    (a,) = fired(j, "idle_held")
    assert a.evidence["values"]["kind"] == "notebook"
    assert a.started_t - T0 == pytest.approx(900, abs=10)  # never seen working: 15 min
    assert "notebook" in alert_sentence(a)
    assert alarms(j) == [a]
    assert j.cost is not None and j.cost.busy_s == 0
    assert j.cost.idle_s == pytest.approx(7190, abs=20)
    assert j.cost.idle == pytest.approx(7190 / 3600 * PRICE, abs=0.02)


@pytest.mark.parametrize(("name", "extra"), [("hidden-4090", set()), ("hidden-a100-vgpu", {"ecc"})])
def test_hidden_sensors_are_said_hidden_and_not_judged(name: str, extra: set[str]) -> None:
    j = judged(name)
    (rep,) = j.sensors
    assert {"temperature", "power", "clock_reasons"} | extra <= set(rep.hidden)
    assert "processes" in rep.reported and "temperature" not in rep.reported
    (a,) = fired(j, "clocks_below_nominal")
    assert "does not report clock event reasons" in alert_sentence(a)
    assert "diag_clocks_unexplained" not in ids(j)
    assert "cannot be judged here" in finding_sentence(only(j, "diag_not_judged"))
    assert "diag_sensors_hidden" in ids(j) and "diag_none" not in ids(j)


@pytest.mark.parametrize(("name", "pid", "user", "why"), [
    ("intruder-kworker", 4242, "root", "kernel_name"),
    ("intruder-outsider", 4243, "bob", "late_outsider"),
])  # fmt: skip
def test_a_disguised_or_late_process_is_warned_naming_pid_user_memory(
    name: str, pid: int, user: str, why: str
) -> None:
    j = judged(name)
    (a,) = fired(j, "proc_suspect")
    assert a.severity == "warning" and a.started_t - T0 == pytest.approx(7200, abs=1)
    (p,) = a.evidence["values"]["processes"]
    assert (p["pid"], p["user"], p["mem_bytes"], p["why"]) == (pid, user, 3 * GIB, why)
    text = alert_sentence(a)
    assert str(pid) in text and user in text and "3.0 GiB" in text
    assert fired(j, "miner_process") == []


def test_a_miner_stays_critical_and_is_not_called_merely_suspect() -> None:
    j = judged("intruder-miner")
    assert [a.severity for a in fired(j, "miner_process")] == ["critical"]
    assert fired(j, "proc_suspect") == []


def test_a_process_marked_as_mine_is_left_alone() -> None:
    host, msgs = ALL["intruder-kworker"]()
    cfg = HostConfig(name=host, allowed_processes=("[kworker/u16:3]",))
    j = judge(from_messages(host, msgs), cfg, SHIPPED)
    assert fired(j, "proc_suspect") == []
