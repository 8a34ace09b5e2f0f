"""The alert lifecycle that survives restarts: fired, resolved, acknowledged, snoozed, and
what was done for each firing (notified or posted per channel, actions run).

``AlertLifecycle(store)`` keeps it in the history store's ``alert_states`` and
``alert_marks`` tables (``AlertLifecycle()`` keeps it in memory, for tests and the CLI).
The dispatcher asks it before sending or running anything, so a restart (a clean quit or a
kill -9) re-notifies nothing, re-posts nothing and re-runs no action; the rule engine's
``restore`` takes back what ``restore()`` returns, so that acknowledgements and snoozes
hold and a condition still true goes on as the same alert instead of firing anew.

An ``alert_key`` is the alert's ``id``: host, rule, GPU, key and the time it fired, stable
over the alert's life and unique per firing. A channel is a string naming where a state
was sent, e.g. ``webhook:team-slack:firing`` (``channel``); an action a string naming it
within its rule (``action_name``). Marks are written before ``mark_sent`` /
``record_action`` return (committed, not queued).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from gpufleet.core.history.store import Store
from gpufleet.core.model.alert import FIRING, Alert, alert_from_json

SENT: Final = "sent"
ACTION: Final = "action"
# Outcomes of an action that mean "do not run it again" (a user's cancel counts too).
ACTION_FINAL: Final = frozenset({"running", "ran", "failed", "dry_run", "cancelled"})
# Resolved alerts younger than this come back too: their cooldowns and snoozes hold.
RECENT_S: Final = 86400.0


def channel(kind: str, name: str, state: str) -> str:
    """The channel string of one alert state sent one way: ``webhook:NAME:firing``,
    ``desktop::resolved``..."""
    return f"{kind}:{name}:{state}"


def action_name(index: int, spec_type: str, command: str) -> str:
    """An action's identity within its rule: its place, type and command."""
    return f"{index}:{spec_type}:{command}"


class AlertLifecycle:
    """Alert states and marks, backed by a ``Store`` (or memory when ``store`` is None).

    Thread-safe: the notifier marks deliveries from its own thread."""

    def __init__(self, store: Store | None = None, *, clock: Callable[[], float] = time.time):
        self.store = store
        self.clock = clock
        self._lock = threading.Lock()
        self._states: dict[str, dict[str, Any]] = {}
        self._marks: dict[tuple[str, str, str], tuple[float, str | None]] = {}
        if store is not None:
            for row in store.alert_states(t0=self.clock() - 10 * RECENT_S):
                self._states[str(row["id"])] = row
            for key, kind, name, t, outcome in store.alert_marks():
                self._marks[(key, kind, name)] = (t, outcome)

    # -- states -------------------------------------------------------------------------

    def record(self, alert: Alert) -> None:
        """Every state change of an alert (fired, resolved, acknowledged, snoozed)."""
        row = alert.to_json()
        with self._lock:
            self._states[alert.id] = row
        if self.store is not None:
            self.store.write_lifecycle("state", row)

    def restore(self) -> list[Alert]:
        """The alerts to take back at start: those firing, those snoozed past now, and
        those resolved within the last day (their cooldowns hold). Oldest first."""
        now = self.clock()
        out: list[Alert] = []
        with self._lock:
            rows = list(self._states.values())
        for row in rows:
            try:
                a = alert_from_json(row)
            except ValueError:
                continue  # a row this version cannot read: leave it in the history
            recent = a.ended_t is not None and a.ended_t >= now - RECENT_S
            snoozed = a.snoozed_until is not None and a.snoozed_until > now
            if a.state == FIRING or recent or snoozed:
                out.append(a)
        out.sort(key=lambda a: (a.started_t, a.id))
        return out

    def alerts(self, host: str | None, t0: float, t1: float) -> list[dict[str, Any]]:
        """Alerts active at some point of [t0, t1] (for the evidence bundle), with the
        channels they were sent to and the actions run for them."""
        with self._lock:
            rows = [
                dict(r)
                for r in self._states.values()
                if (host is None or r.get("host") == host)
                and float(r.get("started_t") or 0.0) <= t1
                and (r.get("ended_t") is None or float(r["ended_t"]) >= t0)
            ]
            marks = dict(self._marks)
        for r in rows:
            key = str(r["id"])
            r["sent"] = sorted(n for (k, kind, n) in marks if k == key and kind == SENT)
            r["actions"] = [
                {"action": n, "t": t, "outcome": o}
                for (k, kind, n), (t, o) in sorted(marks.items())
                if k == key and kind == ACTION
            ]
        rows.sort(key=lambda r: (float(r.get("started_t") or 0.0), str(r["id"])))
        return rows

    # -- what was done ------------------------------------------------------------------

    def already_sent(self, alert_key: str, channel: str) -> bool:
        with self._lock:
            return (alert_key, SENT, channel) in self._marks

    def mark_sent(self, alert_key: str, channel: str, t: float) -> None:
        self._mark(alert_key, SENT, channel, t, "ok")

    def action_done(self, alert_key: str, action: str) -> bool:
        with self._lock:
            m = self._marks.get((alert_key, ACTION, action))
        return m is not None and m[1] in ACTION_FINAL

    def record_action(self, alert_key: str, action: str, t: float, outcome: str) -> None:
        """What became of an action of a firing ("running" before it starts, then "ran",
        "failed", "dry_run" or "cancelled"; a provider's own outcomes work the same)."""
        self._mark(alert_key, ACTION, action, t, outcome)

    def _mark(self, key: str, kind: str, name: str, t: float, outcome: str | None) -> None:
        with self._lock:
            self._marks[(key, kind, name)] = (t, outcome)
        if self.store is not None:
            self.store.write_lifecycle(
                "mark", {"alert_key": key, "kind": kind, "name": name, "t": t, "outcome": outcome}
            )

    def marks(self, alert_key: str) -> Iterable[tuple[str, str, str | None]]:
        """(kind, name, outcome) of every mark of one firing."""
        with self._lock:
            return [(kd, n, o) for (k, kd, n), (_t, o) in self._marks.items() if k == alert_key]
