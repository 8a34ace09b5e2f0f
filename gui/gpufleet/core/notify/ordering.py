"""Which alerts get a desktop notification, in which order, within a budget (Qt-free).

At start-up (and after any burst) several alerts arrive at once, and a desktop shows only a
few notifications before the user stops reading. The budget goes to what matters: critical
alerts first, then throttling (the job is slower right now), then the other warnings, the
most recent first within each; the rest is one "N more" summary. Acknowledged, snoozed and
already notified alerts (``AlertLifecycle``, channel ``desktop::firing``) are left out, so a
restart shows nothing the user has already seen.

The tray calls ``plan_notifications(changed, budget, now=time.time(), lifecycle=lc)``, shows
``plan.show`` in order and, when ``plan.more``, one summary notification, then calls
``mark_notified(plan, lc, time.time())``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from gpufleet.core.alerts.lifecycle import AlertLifecycle, channel
from gpufleet.core.model.alert import FIRING, SEVERITY_RANK, Alert, severity_at_least

# Conditions that mean "your job runs slower now".
THROTTLING: Final = frozenset(
    {
        "thermal_throttle",
        "hw_slowdown",
        "clocks_below_nominal",
        "clock_setting_low",
        "power_limit_low",
        "nvlink_slow",
        "pcie_downtrained",
    }
)
DESKTOP: Final = "desktop"


@dataclass(frozen=True)
class NotificationPlan:
    show: list[Alert] = field(default_factory=list)
    summarized: list[Alert] = field(default_factory=list)

    @property
    def more(self) -> int:
        """How many the one summary notification stands for."""
        return len(self.summarized)


def desktop_channel(alert: Alert) -> str:
    return channel(DESKTOP, "", alert.state)


def notification_rank(alert: Alert) -> tuple[int, float]:
    """Sort key: critical, then throttling, then other warnings, then the rest; newest
    first within each."""
    if alert.severity == "critical":
        group = 0
    elif alert.condition in THROTTLING or "thrott" in alert.rule_id:
        group = 1
    else:
        group = 2 + (2 - SEVERITY_RANK.get(alert.severity, 0))
    return group, -alert.started_t


def plan_notifications(
    alerts: Iterable[Alert],
    budget: int,
    *,
    now: float | None = None,
    lifecycle: AlertLifecycle | None = None,
    min_severity: str = "warning",
) -> NotificationPlan:
    """The firing alerts worth a notification, ``budget`` of them to show and the rest to
    sum up; silenced and already notified ones left out."""
    t = time.time() if now is None else now
    seen: set[str] = set()
    cand: list[Alert] = []
    for a in alerts:
        if a.state != FIRING or a.id in seen or not severity_at_least(a.severity, min_severity):
            continue
        if a.silenced(t):
            continue
        if lifecycle is not None and lifecycle.already_sent(a.id, desktop_channel(a)):
            continue
        seen.add(a.id)
        cand.append(a)
    cand.sort(key=notification_rank)
    n = max(0, int(budget))
    return NotificationPlan(show=cand[:n], summarized=cand[n:])


def mark_notified(plan: NotificationPlan, lifecycle: AlertLifecycle, t: float) -> None:
    """Record the plan as notified (the summary counts for the alerts it stands for)."""
    for a in [*plan.show, *plan.summarized]:
        lifecycle.mark_sent(a.id, desktop_channel(a), t)
