"""The alerting stage of the pipeline: one rule engine (with its cost tracker), the webhooks
and rule actions its state changes go to, and the alerts received from Alertmanager.

Every method except ``set_webhooks``'s notifier start-up runs on the hub's thread, which owns
the engine. Webhooks come from two places: a rule's ``notify = [...]`` list (sent by the
dispatcher) and the settings' webhooks, which get every alert at or above their minimum
severity (``subscribed``); a name in both gets an alert once. A pending action is cancelled
when its alert resolves before it ran.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from gpufleet.core.alerts.actions import ActionRun, ActionRunner
from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.alerts.rules import RuleEngine
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.fleet.events import HostStatus
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.webhooks import Notifier
from gpufleet.core.pipeline.dispatch import AlertDispatcher
from gpufleet.core.wire.messages import Message

log = logging.getLogger(__name__)


class Alerting:
    """The rule engine and where its alerts go (see the module docstring)."""

    def __init__(
        self,
        engine: RuleEngine,
        runner: ActionRunner | None = None,
        on_scheduled: Callable[[ActionRun], None] | None = None,
        lifecycle: AlertLifecycle | None = None,
    ) -> None:
        self.engine = engine
        self.runner = runner
        # Fired, acknowledged, snoozed, sent and acted-on, kept in the history store so that a
        # restart re-notifies, re-posts and re-runs nothing (in memory without a store).
        self.lifecycle = lifecycle if lifecycle is not None else AlertLifecycle()
        # Told of each action the dispatcher scheduled (its grace period starts), on the
        # hub's thread; what becomes of it later comes through the runner's own on_done.
        self.on_scheduled = on_scheduled
        self.dispatcher = AlertDispatcher(engine, None, runner, self.lifecycle)
        self.subscribed: frozenset[str] = frozenset()
        self._external: dict[str, Alert] = {}  # Alertmanager's firing alerts, by id
        self._lock = threading.Lock()  # the notifier swap against a quit
        self._stopped = False

    # -- the engine --------------------------------------------------------------------------

    def restore(self, hosts: Sequence[str]) -> list[Alert]:
        """At start, before the first message: the previous run's alerts of these hosts come
        back into the engine (nothing is sent again), and the actions of active alerts that
        had not run yet are scheduled again (in their grace period)."""
        restored = self.dispatcher.restore(hosts=hosts)
        runs = self.dispatcher.resume()
        if self.on_scheduled is not None:
            for r in runs:
                self.on_scheduled(r)
        return restored

    def feed(self, host: str, msg: Message) -> list[Alert]:
        return self._dispatch(self.engine.feed(host, msg))

    def host_status(self, ev: HostStatus) -> list[Alert]:
        return self._dispatch(self.engine.host_status(ev.host, ev.state, ev.t, ev.reason))

    def tick(self, now: float) -> list[Alert]:
        return self._dispatch(self.engine.tick(now))

    def ack(self, alert_id: str) -> list[Alert]:
        a = self.dispatcher.ack(alert_id)  # recorded: it holds across a restart
        return [a] if a is not None else []

    def snooze(self, alert_id: str, until_t: float) -> list[Alert]:
        a = self.dispatcher.snooze(alert_id, until_t)
        return [a] if a is not None else []

    def set_host(self, host: HostConfig) -> None:
        self.engine.set_host(host)

    def remove_host(self, name: str) -> None:
        self.engine.remove_host(name)

    def active(self) -> tuple[Alert, ...]:
        return (*self.engine.active(), *self._external.values())

    def judging(self, conditions: frozenset[str]) -> set[str]:
        """Hosts where a rule of these conditions is pending or firing (RuleEngine.judging)."""
        return self.engine.judging(conditions)

    def cost_summaries(self) -> dict[str, CostSummary]:
        cost = self.engine.cost
        return {h: cost.summary(h) for h in cost.hosts()}

    # -- Alertmanager --------------------------------------------------------------------------

    def external(self, alerts: Sequence[Alert]) -> list[Alert]:
        for a in alerts:
            if a.state == "firing":
                self._external[a.id] = a
            else:
                self._external.pop(a.id, None)
        return list(alerts)

    def has_external(self) -> bool:
        return bool(self._external)

    # -- webhooks and actions ----------------------------------------------------------------

    @property
    def notifier(self) -> Notifier | None:
        return self.dispatcher.notifier

    def set_webhooks(self, notifier: Notifier | None, subscribed: frozenset[str]) -> None:
        """Swap in a started notifier (on the hub's thread); the old one finishes what it
        has in flight on a thread of its own."""
        with self._lock:
            if self._stopped:
                if notifier is not None:
                    notifier.stop(timeout=0.5)
                return
            old = self.dispatcher.notifier
            self.dispatcher.notifier = notifier
            self.subscribed = subscribed
        if old is not None:
            threading.Thread(target=old.stop, name="gpufleet-notify-old", daemon=True).start()

    def _dispatch(self, changed: list[Alert]) -> list[Alert]:
        if not changed:
            return changed
        with self._lock:
            if self._stopped:
                return changed
            try:
                runs = self.dispatcher.handle(changed)
            except Exception:  # a webhook or action bug must not lose the alerts themselves
                log.exception("alert dispatch failed")
                return changed
            notifier, subscribed = self.dispatcher.notifier, self.subscribed
        for a in changed:
            rule = self.engine.rule(a.rule_id, a.host)
            if rule is None:
                continue
            if notifier is not None and subscribed:
                names = [n for n in subscribed if n not in rule.notify]
                if names:
                    notifier.submit(a, names)
            if a.state == "resolved" and self.runner is not None:
                for r in self.runner.pending():
                    if r.alert_id == a.id:
                        self.runner.cancel(r.id)
        if self.on_scheduled is not None:
            for r in runs:
                self.on_scheduled(r)
        return changed

    def stop(self, flush_s: float = 3.0) -> None:
        """Cancel pending actions (no one is left to cancel them), let queued webhook
        deliveries go out briefly, stop the threads."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            notifier = self.dispatcher.notifier
        if self.runner is not None:
            self.runner.stop(timeout=5.0)
        if notifier is not None:
            notifier.flush(flush_s)
            notifier.stop(timeout=2.0)
