"""What the user does to the fleet from the window: kill a process, add or edit hosts.

Every remote call runs in the QThreadPool (``worker.run_in_pool``); results come back as
signals and end in the status bar. The fleet writes the audit log of every kill.
"""

from __future__ import annotations

import logging
import time
from typing import Any, cast

from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.billing import (
    BILLING_STATES,
    BillingLedger,
    BillingState,
    record_and_apply,
)
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.providers.actions import FileActionRecord, ProviderActions
from gpufleet.core.providers.drift_board import DriftBoard
from gpufleet.core.text import provider_hosts
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.core.wire.messages import Proc
from gpufleet.ui.background.detached import run_detached
from gpufleet.ui.background.worker import run_in_pool
from gpufleet.ui.controllers.bridge import FleetBridge
from gpufleet.ui.controllers.host_removal import HostRemoval
from gpufleet.ui.dialogs.hosts import HostDialog, ImportDialog, ProviderImportDialog
from gpufleet.ui.dialogs.kill import KillDialog
from gpufleet.ui.dialogs.watchdog import WatchdogDialog
from gpufleet.ui.tabs.cost import CostTab
from gpufleet.ui.window.main_window import MainWindow

log = logging.getLogger(__name__)
PROVIDER_SYNC_S = 300.0  # providers rate-limit their APIs: one list per provider per 5 min
GRACE_S = 5.0
# How long NVML is watched after a kill for the GPU memory to be released.
WATCH_S = 15.0

_OUTCOME = {
    "exited": QT_TRANSLATE_NOOP("Actions", "exited"),
    "still_running": QT_TRANSLATE_NOOP("Actions", "is still running after {grace} s"),
    "refused": QT_TRANSLATE_NOOP(
        "Actions", "was not signalled: the PID now belongs to another process"
    ),
    "not_found": QT_TRANSLATE_NOOP("Actions", "had already exited"),
    "permission_denied": QT_TRANSLATE_NOOP(
        "Actions", "was not signalled: permission denied (another user's process)"
    ),
}


def follow_billing(fleet: Fleet, host: str, state: BillingState) -> None:
    """A stopped (storage) or ended instance is not connected to: it could only fail, over
    and over, as "unreachable"; one that runs again is connected to again."""
    reason = provider_hosts.parked_reason(state)
    try:
        if reason is None:
            fleet.unpark(host)
        else:
            fleet.park(host, reason)
    except FleetError:
        pass  # not (or no longer) in the fleet: nothing to follow


class Actions(QObject):
    kill_finished = Signal(object)  # KillResult or an Exception
    billing_synced = Signal(str, str)  # host, billing state: from the provider sync's thread

    def __init__(
        self,
        window: MainWindow,
        fleet: Fleet,
        bridge: FleetBridge,
        pool: QThreadPool,
        demo: bool,
        drift: DriftBoard | None = None,
    ) -> None:
        super().__init__()
        # Where the billing sync says a provider's API changed (shown on the host).
        self.drift = drift if drift is not None else DriftBoard()
        self.window = window
        self.fleet = fleet
        self.bridge = bridge
        self.pool = pool
        self.demo = demo
        self.kill_dialog: KillDialog | None = None
        self._syncing = False
        window.memory.kill_requested.connect(self.request_kill)
        window.memory.kill_tree_requested.connect(
            lambda host, proc: self.request_kill(host, proc, tree=True)
        )
        self.removal = HostRemoval(window, fleet, bridge, pool)
        self.billing_synced.connect(
            lambda host, state: self.apply_billing(host, cast(BillingState, state))
        )
        menu = window.menu_hosts
        for i, (text, slot) in enumerate(
            (
                (self.tr("&Add host…"), self.add_host),
                (self.tr("&Edit selected host…"), self.edit_host),
                (self.tr("&Remove selected host…"), self.removal.ask),
                (self.tr("&Import from ~/.ssh/config…"), self.import_hosts),
                (self.tr("Import from a &provider…"), self.import_from_provider),
                (self.tr("&Watchdog on the selected host…"), self.watchdog),
            )
        ):
            act = QAction(text, menu)
            act.triggered.connect(slot)
            # The demo fleet can only point to "add" (and its simulated watchdog).
            act.setEnabled(not demo or i in (0, 5))
            menu.addAction(act)
        menu.addSeparator()
        for tab in window.tab_list:
            if isinstance(tab, CostTab):
                tab.billing_requested.connect(self.set_billing)
        if not demo:
            run_in_pool(BillingLedger.load, self._billing_loaded, self._billing_failed, pool)
            # Billing follows the instance: the providers' word on provider-backed hosts.
            self._sync_timer = QTimer(self)
            self._sync_timer.setInterval(int(PROVIDER_SYNC_S * 1000))
            self._sync_timer.timeout.connect(self.sync_providers)
            self._sync_timer.start()
            self._first_sync = QTimer(self)  # parented: gone with this object
            self._first_sync.setSingleShot(True)
            self._first_sync.timeout.connect(self.sync_providers)
            self._first_sync.start(5000)
        quit_act = QAction(self.tr("&Quit"), menu)
        quit_act.setShortcut("Ctrl+Q")
        quit_act.triggered.connect(window.quit_requested)
        menu.addAction(quit_act)

    # -- kill ------------------------------------------------------------------------------

    def request_kill(
        self, host: str, proc: Proc, signal: str = "TERM", note: str = "", tree: bool = False
    ) -> KillDialog:
        """Open the confirmation (non-blocking); on accept the signal is sent off-thread."""
        dlg = KillDialog(self.window, host, proc, signal, GRACE_S, note, tree)
        self.kill_dialog = dlg
        dlg.accepted.connect(lambda: self._send(host, proc, signal, tree))
        dlg.open()
        return dlg

    def _send(self, host: str, proc: Proc, signal: str, tree: bool = False) -> None:
        self.window.show_outcome(
            self.tr("sending {signal} to PID {pid} on {host}…").format(
                signal=signal, pid=proc.pid, host=host
            )
        )
        fleet = self.fleet

        def call() -> Any:
            return fleet.kill(host, proc.pid, proc.start_ticks, signal, GRACE_S, tree, WATCH_S)

        run_in_pool(
            call,
            lambda res: self._done(host, proc, signal, res, tree),
            lambda e: self._failed(host, proc, signal, e),
            self.pool,
        )

    def _done(self, host: str, proc: Proc, signal: str, res: Any, tree: bool = False) -> None:
        known = _OUTCOME.get(res.result)
        what = (
            QCoreApplication.translate("Actions", known).format(grace=f"{GRACE_S:.0f}")
            if known
            else str(res.result)
        )
        text = self.tr("{signal} → PID {pid} ({name}) on {host}: {what}").format(
            signal=signal, pid=proc.pid, name=proc.name or "?", host=host, what=what
        )
        if res.result not in _OUTCOME and res.message:
            text += f" — {res.message}"
        if tree and res.tree:
            text += " — " + self.tr("{n} processes in its tree").format(n=len(res.tree))
        memory = getattr(res, "memory", None)
        if memory and memory.get("message"):
            # The sampler's sentence: how much NVML shows released, or that it was not.
            text += f" — {memory['message']}"
        self.window.show_outcome(text, ok=res.result in ("exited", "not_found"))
        self.kill_finished.emit(res)
        if res.result == "still_running" and signal == "TERM":
            self.request_kill(
                host,
                proc,
                "KILL",
                tree=tree,
                note="<p><b>"
                + self.tr("PID {pid} did not exit within {grace} s of TERM.").format(
                    pid=proc.pid, grace=f"{GRACE_S:.0f}"
                )
                + "</b></p>",
            )

    def _failed(self, host: str, proc: Proc, signal: str, e: BaseException) -> None:
        self.window.show_outcome(
            self.tr("{signal} → PID {pid} on {host} failed: {error}").format(
                signal=signal, pid=proc.pid, host=host, error=e
            ),
            ok=False,
        )
        self.kill_finished.emit(e)

    # -- hosts -----------------------------------------------------------------------------

    def add_host(self) -> None:
        dlg = HostDialog(self.window, None, self.pool)
        dlg.saved.connect(self._host_saved)
        dlg.open()

    def edit_host(self) -> None:
        name = self.window.selected_host
        cfg = self.window.hosts.get(name) if name else None
        if cfg is None:
            return
        dlg = HostDialog(self.window, cfg, self.pool)
        dlg.saved.connect(self._host_saved)
        dlg.open()

    def import_hosts(self) -> None:
        dlg = ImportDialog(self.window, set(self.window.hosts), pool=self.pool)
        dlg.imported.connect(self._hosts_imported)
        dlg.open()

    # -- billing -----------------------------------------------------------------------------

    def _billing_loaded(self, ledger: Any) -> None:
        for host, state in ledger.states().items():
            if host in self.window.hosts:
                self.apply_billing(host, state)

    def sync_providers(self) -> None:
        """Ask each provider for its hosts' states (off the GUI thread); a changed billing
        state goes into billing.json and the cost tracker."""
        hosts = [h for h in self.window.hosts.values() if h.provider and h.provider_id]
        alerting = self.bridge.hub.alerting
        if self.demo or not hosts or alerting is None or self._syncing:
            return

        def apply(host: str, state: BillingState) -> None:  # on the sync's thread
            self.billing_synced.emit(host, state)  # queued to the GUI thread

        acts = ProviderActions(
            {h.name: h for h in hosts}.get,
            FileActionRecord(),
            on_billing=record_and_apply(apply),
            on_drift=self.drift.report,
        )
        self._syncing = True
        # A daemon thread, not the pool: quitting never waits on a provider.
        run_detached(lambda: acts.sync_fleet(hosts), self._synced, self._sync_failed)

    def _synced(self, outcomes: Any) -> None:
        self._syncing = False
        failed = [o.message for o in outcomes.values() if o.rc]
        if failed:
            log.warning("provider billing sync: %s", "; ".join(dict.fromkeys(failed)))

    def _sync_failed(self, e: BaseException) -> None:
        self._syncing = False
        log.warning("provider billing sync failed: %s", e)

    def _billing_failed(self, e: BaseException) -> None:
        self.window.show_outcome(str(e), ok=False)

    def set_billing(self, host: str, state: str) -> None:
        """A billing state set by hand: into billing.json (off the GUI thread; not for the
        demo fleet), then into the cost tracker on the hub's thread."""
        if state not in BILLING_STATES:
            return
        st = cast(BillingState, state)

        def save() -> bool:
            if self.demo:
                return True  # the demo fleet's billing is never written to the data dir
            ledger = BillingLedger.load()
            changed = ledger.record(host, st, time.time(), "hand")
            if changed:
                ledger.save()
            return changed

        def done(_changed: Any) -> None:
            self.apply_billing(host, st)
            self.window.show_outcome(
                self.tr("{host}: billing set to {state}").format(host=host, state=state)
            )

        run_in_pool(save, done, self._billing_failed, self.pool)

    def watchdog(self) -> None:
        name = self.window.selected_host
        if not name or name not in self.window.hosts:
            self.window.show_outcome(self.tr("select a host first"), ok=False)
            return
        WatchdogDialog(self.window, self.fleet, name, self.pool).open()

    def import_from_provider(self) -> None:
        dlg = ProviderImportDialog(self.window, list(self.window.hosts.values()), pool=self.pool)
        dlg.imported.connect(lambda saved: self._provider_hosts_imported(saved, dlg))
        dlg.open()

    def _provider_hosts_imported(
        self, saved: list[tuple[HostConfig, str | None]], dlg: ProviderImportDialog
    ) -> None:
        for h, old in saved:
            self._host_saved(h, old)
        for host, state in dlg.billing.items():
            self.apply_billing(host, state)
        if dlg.billing_note:
            self.window.show_outcome(dlg.billing_note, ok=False)

    def apply_billing(self, host: str, state: BillingState) -> None:
        """A host's billing state, from wherever it came: to the cost tracker (on the hub's
        thread), and the connection follows (see ``follow_billing``)."""
        alerting = self.bridge.hub.alerting
        if alerting is not None:
            cost = alerting.engine.cost
            self.bridge.post(lambda: cost.set_billing(host, state))
        follow_billing(self.fleet, host, state)

    def _hosts_imported(self, hosts: list[HostConfig]) -> None:
        for h in hosts:
            self._host_saved(h, None)

    def _host_saved(self, cfg: HostConfig, old_name: str | None) -> None:
        if self.demo:
            self.window.show_outcome(
                self.tr("{name} saved; restart gpufleet without --demo to watch your hosts").format(
                    name=cfg.name
                )
            )
            return
        try:
            # The config watch may have seen the saved file first and added it already.
            if {h.name: h for h in self.fleet.hosts()}.get(cfg.name) != cfg:
                if old_name and old_name in self.window.hosts:
                    self.fleet.remove_host(old_name)
                self.fleet.add_host(cfg)
        except Exception as e:
            self.window.show_outcome(f"{cfg.name}: {e}", ok=False)
            return
        self.window.set_hosts(self.fleet.hosts())
        self.window.show_outcome(self.tr("{name} saved; connecting…").format(name=cfg.name))
