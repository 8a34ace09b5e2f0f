"""Start-up notifications: critical and throttling first, the rest in one summary, nothing
the user already saw (before a restart too)."""

from __future__ import annotations

from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.ordering import mark_notified, plan_notifications


def alert(i: int, rule: str, severity: str, condition: str = "", **kw: object) -> Alert:
    return Alert(
        id=f"h{i}:{rule}@{i}",
        rule_id=rule,
        severity=severity,
        host=f"h{i}",
        gpu=0,
        state=kw.pop("state", "firing"),  # type: ignore[arg-type]
        started_t=float(1000 + i),
        ended_t=None,
        evidence={},
        condition=condition or rule,
        **kw,  # type: ignore[arg-type]
    )


def test_critical_and_throttling_first_the_rest_summed_up() -> None:
    arriving = [
        alert(1, "idle_billed", "warning"),
        alert(2, "sampler_restarted", "info"),
        alert(3, "thermal_throttle", "warning"),
        alert(4, "pcie_downtrained", "warning"),
        alert(5, "gpu_lost", "critical"),
        alert(6, "mem_unaccounted", "warning"),
        alert(7, "foreign_process", "warning", acked=True),
        alert(8, "xid", "critical", state="resolved"),
        alert(9, "hw_slowdown", "warning"),
    ]
    plan = plan_notifications(arriving, 3, now=2000.0)
    assert [a.rule_id for a in plan.show] == ["gpu_lost", "hw_slowdown", "pcie_downtrained"]
    assert [a.rule_id for a in plan.summarized] == [
        "thermal_throttle",
        "mem_unaccounted",
        "idle_billed",
    ]
    assert plan.more == 3


def test_nothing_already_notified_comes_again_after_a_restart() -> None:
    lc = AlertLifecycle()
    arriving = [alert(1, "gpu_lost", "critical"), alert(2, "idle_billed", "warning")]
    plan = plan_notifications(arriving, 1, now=2000.0, lifecycle=lc)
    mark_notified(plan, lc, 2000.0)
    assert plan_notifications(arriving, 5, now=2001.0, lifecycle=lc).show == []
    # A snooze holds until it ends.
    snoozed = alert(3, "thermal_throttle", "warning", snoozed_until=3000.0)
    assert plan_notifications([snoozed], 5, now=2500.0).show == []
    assert plan_notifications([snoozed], 5, now=3500.0).show == [snoozed]
