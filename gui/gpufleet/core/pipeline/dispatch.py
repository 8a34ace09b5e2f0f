"""Route alert state changes to their rule's webhooks and actions, once each.

The hub calls ``AlertDispatcher.handle(engine.feed(...))``; the dispatcher records every
state change in the ``AlertLifecycle`` (the history's alert tables), looks up the effective
rule for the alert's host and hands the alert to the ``Notifier`` (the rule's ``notify``
list) and to the ``ActionRunner`` (the rule's ``actions``, firing alerts only). Both do their
work on their own threads, so this returns at once, and both ask the lifecycle first: what
was posted or run before a restart is not posted or run again.

An alert that fired and resolved within one batch (a back-fill after the app was away: a
miner killed 16 minutes ago) is posted once, as resolved, and runs no action: it is over.

Start-up, in this order: ``lifecycle.restore()`` → ``engine.restore(...)`` →
``dispatcher.resume()`` (actions of restored alerts that were still in their grace period
when the app stopped are scheduled again; those already run are not).
"""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.core.alerts.actions import ActionRun, ActionRunner
from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.alerts.rules import RuleEngine
from gpufleet.core.model.alert import FIRING, RESOLVED, Alert
from gpufleet.core.notify.webhooks import Notifier


class AlertDispatcher:
    def __init__(
        self,
        engine: RuleEngine,
        notifier: Notifier | None = None,
        actions: ActionRunner | None = None,
        lifecycle: AlertLifecycle | None = None,
    ) -> None:
        self.engine = engine
        self.lifecycle = lifecycle if lifecycle is not None else AlertLifecycle()
        self._notifier: Notifier | None = None
        self.notifier = notifier
        self.actions = actions
        if actions is not None and actions.lifecycle is None:
            actions.lifecycle = self.lifecycle

    @property
    def notifier(self) -> Notifier | None:
        return self._notifier

    @notifier.setter
    def notifier(self, notifier: Notifier | None) -> None:
        """A notifier swapped in later (new webhook settings) asks the same lifecycle."""
        if notifier is not None and notifier.lifecycle is None:
            notifier.lifecycle = self.lifecycle
        self._notifier = notifier

    def handle(self, alerts: Iterable[Alert]) -> list[ActionRun]:
        """Record, send and schedule what the alerts' rules ask for; returns the scheduled
        actions (so that the UI can offer to cancel them during their grace period)."""
        batch = list(alerts)
        over = {a.id for a in batch if a.state == RESOLVED}
        runs: list[ActionRun] = []
        for a in batch:
            self.lifecycle.record(a)
        for a in batch:
            if a.state == FIRING and a.id in over:
                continue  # fired and resolved in this batch: the resolved post says it all
            rule = self.engine.rule(a.rule_id, a.host)
            if rule is None:
                continue
            if self.notifier is not None and rule.notify:
                self.notifier.submit(a, list(rule.notify))
            if self.actions is not None and rule.actions and a.state == FIRING:
                runs.extend(self.actions.on_alert(a, rule.actions))
        return runs

    def ack(self, alert_id: str) -> Alert | None:
        """Acknowledge an alert and record it (it stays acknowledged after a restart)."""
        a = self.engine.ack(alert_id)
        if a is not None:
            self.lifecycle.record(a)
        return a

    def snooze(self, alert_id: str, until_t: float) -> Alert | None:
        """Snooze an alert until ``until_t`` and record it (it holds after a restart)."""
        a = self.engine.snooze(alert_id, until_t)
        if a is not None:
            self.lifecycle.record(a)
        return a

    def restore(self, hosts: Iterable[str] | None = None) -> list[Alert]:
        """Take back the previous run's alerts into the engine (nothing is sent); only
        those of ``hosts`` when given (a host removed from the config keeps its history but
        no longer has active alerts)."""
        keep = None if hosts is None else set(hosts)
        states = [a for a in self.lifecycle.restore() if keep is None or a.host in keep]
        return self.engine.restore(states)

    def resume(self) -> list[ActionRun]:
        """Schedule the actions of active alerts that were not run before the app stopped
        (in their grace period then); those already run or cancelled are skipped."""
        runs: list[ActionRun] = []
        if self.actions is None:
            return runs
        for a in self.engine.active():
            rule = self.engine.rule(a.rule_id, a.host)
            if rule is not None and rule.actions:
                runs.extend(self.actions.on_alert(a, rule.actions))
        return runs
