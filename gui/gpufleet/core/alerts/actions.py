"""Per-rule actions: run a local command, or a remote one on the alert's host.

A rule's ``actions`` (in rules.toml) are tables like::

    { type = "local", command = "vastai stop instance $MY_ID", grace_s = 120, dry_run = false }
    { type = "remote", command = "sudo shutdown -h now", grace_s = 300 }
    { type = "provider", command = "stop", grace_s = 300 }   (terminate: allow_terminate = true)

When an alert fires, each action waits its grace period (the user can cancel it meanwhile),
then runs, unless ``dry_run`` (the default is false; the log then says what would have run).
A local command runs through the shell with the alert in the environment
(``GPUFLEET_ALERT_ID``, ``_RULE``, ``_SEVERITY``, ``_HOST``, ``_GPU``, ``_STATE``, ``_STARTED_T``,
``_TITLE``, ``_SENTENCE``, and the whole alert as ``GPUFLEET_ALERT_JSON``): the alert is never
pasted into the command line, so its values cannot inject shell syntax. A remote command goes
through ``run_remote(host, command) -> (exit code, output)``, supplied by the caller (the
fleet), which keeps this module free of SSH. A provider action (stop or terminate the
instance through its provider's API) goes through ``run_provider(alert, spec)``, supplied by
the caller (``gpufleet.core.providers.actions``). Every outcome (ran, failed, dry run, cancelled)
is one line of the audit log.

With an ``AlertLifecycle``, each action of a firing runs at most once across restarts: it is
marked "running" (committed) before it starts and with its outcome after, and an action
already marked is not scheduled again.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from gpufleet.core.alerts.lifecycle import AlertLifecycle, action_name
from gpufleet.core.history.audit import append_audit
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence, alert_title

log = logging.getLogger(__name__)

RunRemote = Callable[[str, str], tuple[int, str]]
RunProvider = Callable[[Alert, "ActionSpec"], tuple[int, str]]
Audit = Callable[[dict[str, Any]], None]
OUTPUT_MAX: Final = 4000

PENDING: Final = "pending"
CANCELLED: Final = "cancelled"
RAN: Final = "ran"
FAILED: Final = "failed"
DRY_RUN: Final = "dry_run"
SKIPPED: Final = "skipped"  # a provider action already done, or left to the instance's watchdog
SKIP_RC: Final = 3  # what run_provider returns for it


class ActionError(ValueError):
    """An action definition that cannot be used."""


@dataclass(frozen=True)
class ActionSpec:
    type: str
    command: str
    grace_s: float = 60.0
    dry_run: bool = False
    timeout_s: float = 120.0
    allow_terminate: bool = False  # provider actions: terminate (loses the disk) opted in

    @classmethod
    def from_mapping(cls, d: Mapping[str, Any]) -> ActionSpec:
        typ, cmd = d.get("type"), d.get("command")
        if typ not in ("local", "remote", "provider"):
            raise ActionError(f"action type must be 'local', 'remote' or 'provider', got {typ!r}")
        if not isinstance(cmd, str) or not cmd.strip():
            raise ActionError("action command must be a non-empty string")
        if typ == "provider" and cmd not in ("stop", "terminate"):
            raise ActionError(f"a provider action's command is 'stop' or 'terminate', not {cmd!r}")
        if typ == "provider" and cmd == "terminate" and d.get("allow_terminate") is not True:
            raise ActionError(
                "a provider terminate loses the instance's disk: it needs allow_terminate = true"
            )
        try:
            return cls(
                type=str(typ),
                command=cmd,
                grace_s=float(d.get("grace_s", 60.0)),
                dry_run=bool(d.get("dry_run", False)),
                timeout_s=float(d.get("timeout_s", 120.0)),
                allow_terminate=d.get("allow_terminate") is True,
            )
        except (TypeError, ValueError) as e:
            raise ActionError(f"action {cmd!r}: {e}") from None


@dataclass(frozen=True)
class ActionRun:
    """One scheduled action and what became of it."""

    id: str
    alert_id: str
    rule_id: str
    host: str
    spec: ActionSpec
    state: str
    rc: int | None = None
    output: str = ""
    name: str = ""  # its identity within the rule (``lifecycle.action_name``)


def alert_env(alert: Alert) -> dict[str, str]:
    """The alert as environment variables for a local command."""
    return {
        "GPUFLEET_ALERT_ID": alert.id,
        "GPUFLEET_ALERT_RULE": alert.rule_id,
        "GPUFLEET_ALERT_SEVERITY": alert.severity,
        "GPUFLEET_ALERT_HOST": alert.host,
        "GPUFLEET_ALERT_GPU": "" if alert.gpu is None else str(alert.gpu),
        "GPUFLEET_ALERT_STATE": alert.state,
        "GPUFLEET_ALERT_STARTED_T": f"{alert.started_t:.3f}",
        "GPUFLEET_ALERT_TITLE": alert_title(alert),
        "GPUFLEET_ALERT_SENTENCE": alert_sentence(alert),
        "GPUFLEET_ALERT_JSON": json.dumps(alert.to_json(), ensure_ascii=False, default=str),
    }


def _default_audit(demo: bool) -> Audit:
    def write(entry: dict[str, Any]) -> None:
        append_audit(entry, demo)

    return write


class ActionRunner:
    """Schedules actions with a cancellable grace period; each waits on its own thread."""

    def __init__(
        self,
        run_remote: RunRemote | None = None,
        *,
        demo: bool = False,
        audit: Audit | None = None,
        on_done: Callable[[ActionRun], None] | None = None,
        lifecycle: AlertLifecycle | None = None,
        run_provider: RunProvider | None = None,
    ) -> None:
        self._run_remote = run_remote
        self._run_provider = run_provider
        self.lifecycle = lifecycle
        self._audit = audit or _default_audit(demo)
        self._on_done = on_done
        self._lock = threading.Lock()
        self._runs: dict[str, ActionRun] = {}
        self._cancel: dict[str, threading.Event] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._ids = itertools.count(1)
        self._stopping = False

    def on_alert(self, alert: Alert, actions: tuple[Mapping[str, Any], ...]) -> list[ActionRun]:
        """Schedule a firing alert's rule actions (resolved alerts run nothing)."""
        if alert.state != "firing":
            return []
        out = []
        for i, a in enumerate(actions):
            spec = ActionSpec.from_mapping(a)
            name = action_name(i, spec.type, spec.command)
            if self.lifecycle is not None and self.lifecycle.action_done(alert.id, name):
                continue  # run (or cancelled) before a restart: never again
            with self._lock:
                if any(
                    r.alert_id == alert.id and r.name == name and r.state in (PENDING, "running")
                    for r in self._runs.values()
                ):
                    continue  # already scheduled in this run
            out.append(self.schedule(alert, spec, name))
        return out

    def schedule(self, alert: Alert, spec: ActionSpec, name: str = "") -> ActionRun:
        run = ActionRun(
            id=f"action-{next(self._ids)}",
            alert_id=alert.id,
            rule_id=alert.rule_id,
            host=alert.host,
            spec=spec,
            state=PENDING,
            name=name or action_name(0, spec.type, spec.command),
        )
        ev = threading.Event()
        t = threading.Thread(
            target=self._wait_and_run, args=(run, alert, ev), name=f"gpufleet-{run.id}", daemon=True
        )
        with self._lock:
            self._runs[run.id] = run
            self._cancel[run.id] = ev
            self._threads[run.id] = t
        t.start()
        return run

    def cancel(self, run_id: str) -> bool:
        """Cancel a pending action (True when it had not started)."""
        with self._lock:
            run = self._runs.get(run_id)
            ev = self._cancel.get(run_id)
            if run is None or ev is None or run.state != PENDING:
                return False
            ev.set()
            return True

    def get(self, run_id: str) -> ActionRun | None:
        with self._lock:
            return self._runs.get(run_id)

    def pending(self) -> list[ActionRun]:
        with self._lock:
            return [r for r in self._runs.values() if r.state == PENDING]

    def wait(self, run_id: str, timeout: float | None = None) -> ActionRun | None:
        with self._lock:
            t = self._threads.get(run_id)
        if t is not None:
            t.join(timeout)
        return self.get(run_id)

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel everything pending and wait for running commands. What was pending is not
        marked done: after a restart ``AlertDispatcher.resume`` schedules it again."""
        with self._lock:
            self._stopping = True
            for rid, ev in self._cancel.items():
                if self._runs[rid].state == PENDING:
                    ev.set()
            threads = list(self._threads.values())
        for t in threads:
            t.join(timeout)

    def _set(self, run: ActionRun, **changes: Any) -> ActionRun:
        with self._lock:
            cur = replace(self._runs[run.id], **changes)
            self._runs[run.id] = cur
            return cur

    def _wait_and_run(self, run: ActionRun, alert: Alert, ev: threading.Event) -> None:
        spec = run.spec
        if ev.wait(spec.grace_s):
            with self._lock:
                cur = self._runs[run.id]
            if cur.state == PENDING:
                done = self._set(run, state=CANCELLED)
                if self._stopping:
                    self._log(done, "not run: gpufleet stopped during the grace period", False)
                else:
                    self._log(done, "cancelled during the grace period")
                return
        with self._lock:
            # A cancel that races the end of the grace period loses: we go on.
            if self._runs[run.id].state != PENDING:
                return
            self._runs[run.id] = replace(self._runs[run.id], state="running")
        # Committed before it starts: a crash while it runs must not run it again.
        self._mark(run, "running")
        if spec.dry_run:
            done = self._set(run, state=DRY_RUN)
            self._log(done, f"dry run: would run the {spec.type} command")
            return
        try:
            rc, output = self._execute(spec, alert)
        except Exception as e:  # one line in the log, never a dead thread
            done = self._set(run, state=FAILED, output=f"{type(e).__name__}: {e}")
            self._log(done, "could not run")
            return
        if spec.type == "provider" and rc == SKIP_RC:
            done = self._set(run, state=SKIPPED, rc=rc, output=output[-OUTPUT_MAX:])
            self._log(done, "skipped")
            return
        done = self._set(run, state=RAN if rc == 0 else FAILED, rc=rc, output=output[-OUTPUT_MAX:])
        self._log(done, "ran" if rc == 0 else f"exited {rc}")

    def _execute(self, spec: ActionSpec, alert: Alert) -> tuple[int, str]:
        if spec.type == "provider":
            if self._run_provider is None:
                raise ActionError("no provider API configured here")
            return self._run_provider(alert, spec)
        if spec.type == "remote":
            if self._run_remote is None:
                raise ActionError("no way to run remote commands here")
            return self._run_remote(alert.host, spec.command)
        try:
            p = subprocess.run(
                spec.command,
                shell=True,
                env={**os.environ, **alert_env(alert)},
                capture_output=True,
                text=True,
                timeout=spec.timeout_s,
            )
        except subprocess.TimeoutExpired as e:
            return 124, f"timed out after {e.timeout:.0f} s"
        return p.returncode, (p.stdout + p.stderr)

    def _mark(self, run: ActionRun, outcome: str) -> None:
        if self.lifecycle is not None:
            try:
                self.lifecycle.record_action(run.alert_id, run.name, time.time(), outcome)
            except Exception:  # the action's own outcome and audit line still count
                log.exception("action %s: could not record its outcome", run.id)

    def _log(self, run: ActionRun, what: str, final: bool = True) -> None:
        if final:
            self._mark(run, run.state)
        entry = {
            "kind": "action",
            "action_id": run.id,
            "alert_id": run.alert_id,
            "rule_id": run.rule_id,
            "host": run.host,
            "type": run.spec.type,
            "command": run.spec.command,
            "dry_run": run.spec.dry_run,
            "result": run.state,
            "rc": run.rc,
            "message": what,
            "output": run.output[-OUTPUT_MAX:],
        }
        try:
            self._audit(entry)
        finally:
            if self._on_done is not None:
                self._on_done(run)
