"""What the running app does with alerts besides showing them, and the saved settings it obeys.

- Webhooks: the ones in the settings (``[settings.webhooks.NAME]``) and the ones in the
  user's rules.toml (``[webhooks.NAME]``; the settings win on a shared name), their URLs read
  from the keyring off the GUI thread. A webhook from the settings gets every alert at or
  above its minimum severity, firing and resolved; a rules.toml webhook gets the alerts of
  the rules that name it (``notify = [...]``), as ``gpufleet replay`` and the core do.
- Rule actions (``actions = [...]`` in rules.toml): scheduled by the pipeline's alerting stage
  (``gpufleet.core.pipeline.alerting``) through its ``ActionRunner``, local commands here and
  remote ones through the Fleet (``Fleet.run_shell``), each after its grace period, in dry
  run when asked; every outcome shows in the status bar (and the audit log).
- The alert list's context menu: open, acknowledge, snooze, and cancel a pending action.
- Settings read at start: the theme (``chosen_dark``), history retention (``retention_days``)
  and the notification rate limits; the rate limits and the webhooks also apply at once when
  the settings dialog saves (``apply_settings``).

Dispatch runs on the pipeline hub's thread, which owns the rule engine (not thread-safe);
the notifier and the runner work on their own threads, so the data flow never waits on them.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QPoint, Qt, QThreadPool, Signal
from PySide6.QtWidgets import QListWidgetItem, QMenu

from gpufleet.core.alerts.actions import (
    CANCELLED,
    DRY_RUN,
    FAILED,
    PENDING,
    RAN,
    ActionRun,
    ActionRunner,
)
from gpufleet.core.config.configfile import ConfigError
from gpufleet.core.config.settings import Settings, load_settings
from gpufleet.core.cost.billing import BillingState
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.webhooks import Delivery, Notifier, Webhook
from gpufleet.core.pipeline.build import Pipeline
from gpufleet.core.pipeline.consumers import (
    build_action_runner,
    load_webhook_list,
    start_webhooks,
    webhook_specs,
)
from gpufleet.core.providers.actions import failed_action_alert
from gpufleet.core.providers.drift_board import DriftBoard
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.desktop.tray import Notifier as TrayNotifier
from gpufleet.ui.widgets.theme import system_is_dark
from gpufleet.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)

SNOOZE_CHOICES_H = (1.0, 8.0, 24.0)
QUIT_FLUSH_S = 3.0  # how long quitting waits for webhook deliveries still queued


# -- settings read at start ----------------------------------------------------------------


def load_app_settings() -> Settings:
    """The saved settings (defaults where the file is absent or unreadable; problems logged:
    the settings dialog shows them to the user)."""
    try:
        s, problems = load_settings()
    except ConfigError as e:
        log.warning("settings not read: %s", e)
        return Settings()
    for p in problems:
        log.warning("%s", p)
    return s


def chosen_dark(settings: Settings | None = None) -> bool:
    """Dark or light: ``GPUFLEET_THEME`` (tests, screenshots) over the saved theme over the
    system's scheme."""
    forced = os.environ.get("GPUFLEET_THEME")
    if forced in ("dark", "light"):
        return forced == "dark"
    theme = (settings or load_app_settings()).theme
    if theme in ("dark", "light"):
        return theme == "dark"
    return system_is_dark()


# -- webhooks -----------------------------------------------------------------------------


# -- the wiring ---------------------------------------------------------------------------


class ActionEvents(QObject):
    """Carries the action runner's news to the GUI thread: built before the pipeline (the
    runner reports through it), listened to by the AlertWiring built after the window."""

    changed = Signal(object)  # ActionRun: scheduled, or what became of it


def make_action_runner(
    fleet: Fleet,
    events: ActionEvents,
    demo: bool,
    live: LiveBuffers,
    set_billing: Callable[[str, BillingState], None],
    drift: DriftBoard | None = None,
) -> ActionRunner:
    """The app's rule actions (``core.pipeline.consumers.build_action_runner``, the same as
    ``gpufleet serve``'s), reporting to the GUI thread through ``events``; a provider action
    that finds the provider's API changed says so on the host (``drift``)."""
    return build_action_runner(
        fleet,
        demo=demo,
        hello_of=live.hello,
        on_done=events.changed.emit,
        set_billing=set_billing,
        on_drift=drift.report if drift is not None else None,
    )


class AlertWiring(QObject):
    """Webhooks, rule actions and the alert list's menu of one running app."""

    delivered = Signal(object)  # Delivery
    webhooks_ready = Signal(object)  # tuple of the active webhooks' names

    def __init__(
        self,
        window: MainWindow,
        pipeline: Pipeline,
        events: ActionEvents,
        tray_notifier: TrayNotifier,
        pool: QThreadPool,
        settings: Settings,
    ) -> None:
        super().__init__()
        self.window = window
        self.hub = pipeline.hub
        self.alerting = pipeline.alerting
        assert self.alerting.runner is not None, "the app's pipeline is built with a runner"
        self.runner: ActionRunner = self.alerting.runner
        self.tray_notifier = tray_notifier
        self.pool = pool
        self.settings = settings
        self.webhook_problems: list[str] = []
        events.changed.connect(self._on_action)
        self.delivered.connect(self._on_delivery)
        window.settings_applied.connect(self.apply_settings)
        panel = self.window.panel
        panel.alert_marks = self.mark
        panel.alerts.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        panel.alerts.customContextMenuRequested.connect(self._context_menu)
        self.apply_settings(settings)

    # -- settings --------------------------------------------------------------------------

    def apply_settings(self, s: Settings) -> None:
        """Rate limits at once; webhooks after their URLs were read from the keyring."""
        self.settings = s
        self.tray_notifier.set_limits(s.notify_repeat_min, s.notify_max_per_min)
        table, subscribed, problems = webhook_specs(s)
        if not table:
            self._install([], frozenset(), problems)
            return

        def load() -> tuple[list[Webhook], list[str]]:
            hooks, more = load_webhook_list(table)
            return hooks, problems + more

        run_in_pool(
            load,
            lambda res: self._install(res[0], subscribed, res[1]),
            lambda e: self._install([], frozenset(), [*problems, str(e)]),
            self.pool,
        )

    def _install(
        self, hooks: list[Webhook], subscribed: frozenset[str], problems: list[str]
    ) -> None:
        self.webhook_problems = problems
        for p in problems:
            log.warning("webhook: %s", p)
        if problems:
            self.window.show_outcome(
                self.tr("Webhook not used: %1").replace("%1", problems[0]), False
            )
        names = tuple(w.name for w in hooks)
        new, used = start_webhooks(hooks, subscribed, self.delivered.emit)
        alerting = self.alerting

        def swap() -> None:  # on the hub's thread, which reads the dispatcher
            alerting.set_webhooks(new, used)
            self.webhooks_ready.emit(names)

        self.hub.post(swap)

    @property
    def notifier(self) -> Notifier | None:
        return self.alerting.notifier

    # -- what the user sees ------------------------------------------------------------------

    def _on_action(self, run: ActionRun) -> None:
        what = f"{run.spec.type} command “{run.spec.command}” on {run.host} ({run.rule_id})"
        if run.state == PENDING:
            text = (
                self.tr("In %1 s: %2. Right-click the alert to cancel.")
                .replace("%1", f"{run.spec.grace_s:.0f}")
                .replace("%2", what)
            )
            if run.spec.dry_run:
                text += " " + self.tr("(dry run: it will only be logged)")
            ok = True
        elif run.state == DRY_RUN:
            text, ok = self.tr("Dry run, not executed: %1").replace("%1", what), True
        elif run.state == CANCELLED:
            text, ok = self.tr("Cancelled: %1").replace("%1", what), True
        elif run.state == RAN:
            text, ok = self.tr("Ran: %1").replace("%1", what), True
        elif run.state == FAILED:
            detail = run.output.strip().splitlines()[-1:] or [f"exit {run.rc}"]
            text = self.tr("Failed: %1: %2").replace("%1", what).replace("%2", detail[0])
            ok = False
            if run.spec.type == "provider":
                # The instance keeps billing: a critical alert, not only a status line.
                log.error("provider action failed on %s: %s", run.host, detail[0])
                alert = failed_action_alert(run.host, run.spec.command, detail[0], time.time())
                self.hub.post_external([alert])
        else:
            return
        self.window.show_outcome(text, ok)
        self.window.update_summaries()  # the alert's mark (pending action) changes

    def _on_delivery(self, d: Delivery) -> None:
        if not d.ok:
            self.window.show_outcome(
                self.tr("Webhook %1 not delivered after %2 attempts: %3")
                .replace("%1", d.webhook)
                .replace("%2", str(d.attempts))
                .replace("%3", d.error or "?"),
                False,
            )

    def mark(self, alert: Alert) -> str:
        """A short note after the alert's sentence in the list (acknowledged, snoozed, an
        action waiting to run)."""
        notes = []
        if alert.acked:
            notes.append(self.tr("acknowledged"))
        until = alert.snoozed_until
        if until is not None and until > time.time():
            notes.append(
                self.tr("snoozed until %1").replace(
                    "%1", time.strftime("%H:%M", time.localtime(until))
                )
            )
        for r in self.runner.pending():
            if r.alert_id == alert.id:
                notes.append(
                    self.tr("%1 command pending: “%2”")
                    .replace("%1", r.spec.type)
                    .replace("%2", r.spec.command)
                )
        return "; ".join(notes)

    def pending_for(self, alert_id: str) -> list[ActionRun]:
        return [r for r in self.runner.pending() if r.alert_id == alert_id]

    def ack(self, alert: Alert) -> None:
        self.hub.ack(alert.id)

    def snooze(self, alert: Alert, hours: float) -> None:
        self.hub.snooze(alert.id, time.time() + hours * 3600.0)

    def cancel(self, run_id: str) -> bool:
        ok = self.runner.cancel(run_id)
        if not ok:
            self.window.show_outcome(self.tr("Too late to cancel: the action has started."), False)
        return ok

    def alert_menu(self, alert: Alert) -> QMenu:
        """The context menu of one alert (built here so tests can trigger its actions)."""
        menu = QMenu(self.window)
        menu.addAction(
            self.tr("Open at the moment it started"), lambda: self.window.open_alert(alert)
        )
        ours = not str(alert.id).startswith("am:")  # Alertmanager's alerts are silenced there
        act = menu.addAction(self.tr("Acknowledge"), lambda: self.ack(alert))
        act.setEnabled(ours and not alert.acked)
        snooze = menu.addMenu(self.tr("Snooze"))
        snooze.setEnabled(ours)
        for h in SNOOZE_CHOICES_H:
            snooze.addAction(
                self.tr("for %n hour(s)", "", int(h)), functools.partial(self.snooze, alert, h)
            )
        pending = self.pending_for(alert.id)
        if pending:
            menu.addSeparator()
        for r in pending:
            menu.addAction(
                self.tr("Cancel the %1 command “%2”")
                .replace("%1", r.spec.type)
                .replace("%2", r.spec.command),
                functools.partial(self.cancel, r.id),
            )
        return menu

    def _context_menu(self, pos: QPoint) -> None:
        lw = self.window.panel.alerts
        item: QListWidgetItem | None = lw.itemAt(pos)
        alert = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if alert is None:
            return
        self.alert_menu(alert).popup(lw.viewport().mapToGlobal(pos))

    # -- life --------------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancel pending actions (no one is left to cancel them) and let queued webhook
        deliveries go out briefly: the alerting stage's threads stop."""
        self.alerting.stop(QUIT_FLUSH_S)
