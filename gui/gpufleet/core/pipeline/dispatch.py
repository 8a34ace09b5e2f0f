"""Route alert state changes to their rule's webhooks and actions.

The fleet (or the GUI's worker) calls ``AlertDispatcher.handle(engine.feed(...))``; the
dispatcher looks up the effective rule for the alert's host and hands the alert to the
``Notifier`` (the rule's ``notify`` list) and to the ``ActionRunner`` (the rule's ``actions``,
firing alerts only). Both do their work on their own threads, so this returns at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpufleet.core.alerts.actions import ActionRun, ActionRunner
from gpufleet.core.alerts.rules import RuleEngine
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.webhooks import Notifier


class AlertDispatcher:
    def __init__(
        self,
        engine: RuleEngine,
        notifier: Notifier | None = None,
        actions: ActionRunner | None = None,
    ) -> None:
        self.engine = engine
        self.notifier = notifier
        self.actions = actions

    def handle(self, alerts: Iterable[Alert]) -> list[ActionRun]:
        """Send and schedule what the alerts' rules ask for; returns the scheduled actions
        (so that the UI can offer to cancel them during their grace period)."""
        runs: list[ActionRun] = []
        for a in alerts:
            rule = self.engine.rule(a.rule_id, a.host)
            if rule is None:
                continue
            if self.notifier is not None and rule.notify:
                self.notifier.submit(a, list(rule.notify))
            if self.actions is not None and rule.actions:
                runs.extend(self.actions.on_alert(a, rule.actions))
        return runs
