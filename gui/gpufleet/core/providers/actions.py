"""A rule's provider action: stop (or, opted in, terminate) the alert's instance through
its provider's API, once per alert, never when the instance's own watchdog has it.

In rules.toml::

    actions = [{ type = "provider", command = "stop", grace_s = 300 }]
    actions = [{ type = "provider", command = "terminate", allow_terminate = true }]

``stop`` where the provider has it (vast.ai, RunPod: the disk keeps costing storage);
where it has none (Lambda) the action refuses unless the rule opts in to ``terminate`` with
``allow_terminate = true`` (the disk is lost). The grace period, cancel and audit line come
from ``gpufleet.core.alerts.actions.ActionRunner``; this module decides and calls the API.

Once per alert: before acting it asks the action record (``ActionRecord``: the alert
lifecycle's ``action_done`` / ``record_action``) whether this alert's action already ran,
so an app restart does not stop the instance again; a done action is recorded, a failed one
may run again. An
instance whose watchdog is armed (``hello["watchdog"]["armed"]``) is left to it: the laptop
and the watchdog never both act on one alert. After a stop or terminate, the host's billing
state follows (``storage`` / ``ended``), and only then.

Done means the provider said so: its answer, or a re-read of the instance in the state the
action leads to (``Provider.act_confirmed``). A 200 that does not say so is a failed action:
billing stays as it was, the action is tried again as ``RetryPolicy`` says (not for a refused
key, an inactive account or an API that changed: trying again cannot help), and a failure
that remains raises a critical alert naming the host (``failed_action_alert``): the
instance keeps billing.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gpufleet.core.alerts.actions import ActionSpec
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import FIRING, Alert
from gpufleet.core.providers.base import (
    AFTER_ACTION,
    Action,
    BillingState,
    ErrorKind,
    Provider,
    ProviderError,
)
from gpufleet.core.providers.registry import open_provider
from gpufleet.core.text import provider_actions as _sentences  # registers the alert's text
from gpufleet.core.wire.messages import Hello


def watchdog_armed(hello: Hello | None) -> bool:
    """Whether the instance's own watchdog is armed, as its daemon's ``hello`` says: then it
    acts on the idle alert and the laptop does not."""
    wd = hello.raw.get("watchdog") if hello is not None else None
    return isinstance(wd, dict) and wd.get("armed") is True and wd.get("phase") != "done"


class ActionRecord(Protocol):
    """What the alert lifecycle offers to make an action run once per alert."""

    def action_done(self, alert_key: str, action: str) -> bool: ...

    def record_action(self, alert_key: str, action: str, t: float, outcome: str) -> None: ...


class FileActionRecord:
    """An ``ActionRecord`` kept in a JSON file of the data dir (``provider-actions.json``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths.data_dir() / "provider-actions.json"
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            # Unreadable: acting again could stop an instance twice; refuse instead.
            raise ProviderError(f"{self.path}: cannot read the action record ({e})") from None
        return doc if isinstance(doc, dict) else {}

    def action_done(self, alert_key: str, action: str) -> bool:
        with self._lock:
            return f"{alert_key}|{action}" in self._read()

    def record_action(self, alert_key: str, action: str, t: float, outcome: str) -> None:
        with self._lock:
            doc = self._read()
            doc[f"{alert_key}|{action}"] = {"t": t, "outcome": outcome}
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".actions.", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)


assert callable(_sentences.title)  # (imported for its registration)

# Errors that another try cannot fix: the user must act (a key, an account, an update).
_FINAL: frozenset[ErrorKind] = frozenset(
    {"auth", "account", "api_changed", "no_key", "not_supported", "not_found"}
)
ALERT_CONDITION = "provider_action"


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed stop or terminate is tried again: ``tries`` in all, ``wait_s`` apart;
    each try re-reads the instance up to ``rereads`` times ``reread_wait_s`` apart."""

    tries: int = 3
    wait_s: float = 30.0
    rereads: int = 3
    reread_wait_s: float = 5.0


def failed_action_alert(host: str, action: str, message: str, t: float) -> Alert:
    """The critical alert of a provider action that did not happen: the bill keeps running.
    Its sentence is ``gpufleet.core.text.provider_actions``'s."""
    return Alert(
        id=f"{ALERT_CONDITION}|{host}|{action}|{t:.3f}",
        rule_id=ALERT_CONDITION,
        severity="critical",
        host=host,
        gpu=None,
        state=FIRING,
        started_t=t,
        ended_t=None,
        evidence={"values": {"action": action, "error": message}},
        condition=ALERT_CONDITION,
    )


@dataclass(frozen=True)
class Outcome:
    """``rc`` 0 done (or dry run), 1 failed, 3 skipped; ``message`` one line for the audit."""

    rc: int
    message: str
    action: Action | None = None
    billing: BillingState | None = None


def choose(provider: Provider, wanted: str, allow_terminate: bool) -> Action:
    """The action to run for a rule that asks for ``wanted``; ProviderError if none may."""
    if wanted not in ("stop", "terminate"):
        raise ProviderError(f"provider action must be 'stop' or 'terminate', not {wanted!r}")
    if wanted == "terminate" or "stop" not in provider.actions:
        if not allow_terminate:
            why = (
                f"{provider.label} has no stop, only terminate"
                if wanted == "stop"
                else "terminate loses the instance's disk"
            )
            raise ProviderError(
                f"{why}: the rule must opt in with allow_terminate = true", "not_supported"
            )
        return "terminate"
    return "stop"


class ProviderActions:
    """Runs a rule's provider action for an alert (blocking; the ActionRunner's thread)."""

    def __init__(
        self,
        hosts: Callable[[str], HostConfig | None],
        record: ActionRecord,
        watchdog_armed: Callable[[str], bool] = lambda host: False,
        opener: Callable[[str], Provider] = open_provider,
        on_billing: Callable[[str, BillingState], None] | None = None,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        on_drift: Callable[[str, ProviderError | None], None] | None = None,
    ) -> None:
        self._policy = policy or RetryPolicy()
        # Told of each call for a host: its drift error, or None once a call succeeded
        # (``drift_board.DriftBoard.report``): the host says so until then.
        self._on_drift = on_drift
        self._sleep = sleep
        self._hosts = hosts
        self._record = record
        self._watchdog_armed = watchdog_armed
        self._open = opener
        self._on_billing = on_billing

    def _told(self, host_name: str, error: ProviderError | None) -> None:
        """Drift (or its end) for ``on_drift``; an error of another kind says nothing."""
        if self._on_drift is not None and (error is None or error.kind == "api_changed"):
            self._on_drift(host_name, error)

    def sync_billing(self, host_name: str) -> Outcome:
        """Ask the provider for the instance's state; its billing state goes to
        ``on_billing``."""
        host = self._hosts(host_name)
        if host is None or not host.provider or not host.provider_id:
            return Outcome(1, f"{host_name} is not tied to a provider instance")
        outcome, error = self._sync_one(host, host_name)
        self._told(host_name, error)
        return outcome

    def _sync_one(self, host: HostConfig, host_name: str) -> tuple[Outcome, ProviderError | None]:
        """The sync's outcome and the provider error it ended on (None: the provider
        answered as the adapter expects)."""
        assert host.provider and host.provider_id
        try:
            provider = self._open(host.provider)
            inst = provider.get_instance(host.provider_id)
        except ProviderError as e:
            if e.kind != "not_found":
                return Outcome(1, str(e)), e
            # Gone, as the instance's own path says; the account's list must agree (a path
            # that moved would otherwise end the bill of a running instance).
            try:
                listed = {i.id for i in provider.list_instances()}
            except ProviderError as le:
                return Outcome(1, str(le)), le
            if str(host.provider_id) in listed:
                return Outcome(1, f"{e} (but the account still lists it)"), e
            if self._on_billing is not None:
                self._on_billing(host_name, "ended")
            return Outcome(0, f"{host_name}: ended (the instance is gone)", billing="ended"), None
        if inst.billing is not None and self._on_billing is not None:
            self._on_billing(host_name, inst.billing)
        return Outcome(0, f"{host_name}: {inst.state}", billing=inst.billing), None

    def sync_fleet(self, hosts: Sequence[HostConfig]) -> dict[str, Outcome]:
        """Every provider-backed host's billing state from its provider: one list request per
        provider (not one per instance: rate limits), an instance no longer listed ended."""
        by_provider: dict[str, list[HostConfig]] = {}
        for h in hosts:
            if h.provider and h.provider_id:
                by_provider.setdefault(h.provider, []).append(h)
        out: dict[str, Outcome] = {}
        for name, members in by_provider.items():
            try:
                listed = {i.id: i for i in self._open(name).list_instances()}
            except ProviderError as e:
                out.update({h.name: Outcome(1, str(e)) for h in members})
                for h in members:
                    self._told(h.name, e)
                continue
            for h in members:
                self._told(h.name, None)
                inst = listed.get(str(h.provider_id))
                state: BillingState | None = "ended" if inst is None else inst.billing
                if state is not None and self._on_billing is not None:
                    self._on_billing(h.name, state)
                word = "ended (the instance is gone)" if inst is None else inst.state
                out[h.name] = Outcome(0, f"{h.name}: {word}", billing=state)
        return out

    def run(
        self, alert_key: str, host_name: str, wanted: str, allow_terminate: bool, dry_run: bool
    ) -> Outcome:
        kind = f"provider:{wanted}"
        if self._watchdog_armed(host_name):
            return Outcome(3, "left to the watchdog armed on the instance (it acts on this alert)")
        try:
            if self._record.action_done(alert_key, kind):
                return Outcome(3, "already done for this alert: not run again")
        except ProviderError as e:
            return Outcome(1, str(e))
        outcome = self._act(host_name, wanted, allow_terminate, dry_run)
        # Only a done action counts: a failed one may be tried again (a stop or terminate
        # sent twice is harmless; one never sent costs money).
        if not dry_run and outcome.rc == 0:
            try:
                # "ran": the word the alert lifecycle counts as final for an action.
                self._record.record_action(alert_key, kind, time.time(), "ran")
            except (ProviderError, OSError) as e:
                outcome = Outcome(
                    outcome.rc, f"{outcome.message} (not recorded: {e})", outcome.action
                )
        return outcome

    def _act(self, host_name: str, wanted: str, allow_terminate: bool, dry_run: bool) -> Outcome:
        host = self._hosts(host_name)
        if host is None or not host.provider or not host.provider_id:
            return Outcome(
                1,
                f"{host_name} is not tied to a provider instance: import it with "
                "`gpufleet hosts import --provider …`",
            )
        try:
            provider = self._open(host.provider)
            action = choose(provider, wanted, allow_terminate)
        except ProviderError as e:
            return Outcome(1, str(e))
        after = AFTER_ACTION.get((provider.name, action), "")
        what = f"{action} {provider.label} instance {host.provider_id}"
        if dry_run:
            return Outcome(0, f"dry run: would {what} ({after})", action)
        error = self._act_with_retries(provider, action, host.provider_id)
        self._told(host_name, error)
        if error is not None:
            # Billing stays as it was: the instance is still billed.
            return Outcome(1, f"{what} failed: {error}; the instance is still billed", action)
        billing: BillingState = "storage" if action == "stop" else "ended"
        if self._on_billing is not None:
            self._on_billing(host_name, billing)
        return Outcome(0, f"{what}: done; {after}", action, billing)

    def _act_with_retries(
        self, provider: Provider, action: Action, instance_id: str
    ) -> ProviderError | None:
        """None once the provider confirms the action; the last error after the policy's
        tries (or at once, for an error another try cannot fix)."""
        p = self._policy
        last: ProviderError | None = None
        for n in range(max(1, p.tries)):
            if n:
                self._sleep(p.wait_s)
            try:
                provider.act_confirmed(
                    action, instance_id, p.rereads, p.reread_wait_s, sleep=self._sleep
                )
                return None
            except ProviderError as e:
                last = e
                if e.kind in _FINAL:
                    break
        return last


def run_provider_hook(
    hosts: Callable[[str], HostConfig | None],
    hello_of: Callable[[str], Hello | None],
    on_billing: Callable[[str, BillingState], None] | None = None,
    record: ActionRecord | None = None,
    opener: Callable[[str], Provider] = open_provider,
    on_drift: Callable[[str, ProviderError | None], None] | None = None,
) -> Callable[[Alert, ActionSpec], tuple[int, str]]:
    """The ``run_provider`` of an ``ActionRunner``: the alert's host, its latest ``hello``
    (for the watchdog), where billing changes go (``billing.record_and_apply``), where drift
    found on the way goes (``on_drift``)."""
    acts = ProviderActions(
        hosts,
        record if record is not None else FileActionRecord(),
        watchdog_armed=lambda h: watchdog_armed(hello_of(h)),
        opener=opener,
        on_billing=on_billing,
        on_drift=on_drift,
    )

    def run(alert: Alert, spec: ActionSpec) -> tuple[int, str]:
        o = acts.run(alert.id, alert.host, spec.command, spec.allow_terminate, spec.dry_run)
        return o.rc, o.message

    return run
