"""Per-host billing state (running, storage, ended), persisted in the data dir.

The state comes from the provider where gpufleet reads one (an import, a poll, an action it
ran) and is set by hand otherwise (``gpufleet hosts bill HOST --pause|--resume|--end``):
``running`` bills the price per hour, ``storage`` (stopped, paying for the disk) bills the
host's ``storage_per_hour`` (nothing where unknown), ``ended`` bills nothing. Every change
is kept with its source and the laptop's time, as a record; the billed time itself is
measured by the cost tracker on monotonic clocks, never from these times.

The file (``billing.json``) is written atomically; a damaged one is reported and replaced
by an empty ledger only when the caller saves, never silently.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, get_args

from gpufleet.core.config import paths

# running: the GPU is billed; storage: stopped, paying for the disk; ended: nothing billed.
BillingState = Literal["running", "storage", "ended"]

log = logging.getLogger(__name__)
BILLING_STATES: Final[tuple[str, ...]] = get_args(BillingState)
VERSION: Final = 1
MAX_HISTORY: Final = 200  # changes kept per host


class BillingFileError(Exception):
    """billing.json cannot be read; the message names the file and what is wrong."""


@dataclass(frozen=True)
class BillingChange:
    state: BillingState
    t: float  # the laptop's wall clock when it was recorded (a record, not a time base)
    source: str  # "hand", "provider", "action"
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "t": self.t, "source": self.source, "note": self.note}


def billing_file() -> Path:
    return paths.data_dir() / "billing.json"


def _change(d: Any, where: str) -> BillingChange:
    if not isinstance(d, dict) or d.get("state") not in BILLING_STATES:
        raise BillingFileError(f"{where}: each change needs a `state` of {BILLING_STATES}")
    t = d.get("t")
    if not isinstance(t, int | float) or isinstance(t, bool):
        raise BillingFileError(f"{where}: `t` must be a number")
    return BillingChange(d["state"], float(t), str(d.get("source", "hand")), str(d.get("note", "")))


class BillingLedger:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else billing_file()
        self._hosts: dict[str, list[BillingChange]] = {}

    @classmethod
    def load(cls, path: Path | None = None) -> BillingLedger:
        ledger = cls(path)
        try:
            text = ledger.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ledger
        except OSError as e:
            raise BillingFileError(f"{ledger.path}: cannot read ({e})") from None
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise BillingFileError(f"{ledger.path}: not valid JSON ({e})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("hosts"), dict):
            raise BillingFileError(f"{ledger.path}: expected {{'version': 1, 'hosts': {{…}}}}")
        if doc.get("version", VERSION) > VERSION:
            raise BillingFileError(f"{ledger.path}: written by a newer gpufleet: upgrade")
        for host, changes in doc["hosts"].items():
            if not isinstance(changes, list):
                raise BillingFileError(f"{ledger.path}: host {host!r}: expected a list")
            ledger._hosts[str(host)] = [
                _change(c, f"{ledger.path}: host {host!r}") for c in changes
            ]
        return ledger

    def state(self, host: str) -> BillingState:
        """The current state; a host never recorded is running (billed from its start)."""
        changes = self._hosts.get(host)
        return changes[-1].state if changes else "running"

    def history(self, host: str) -> list[BillingChange]:
        return list(self._hosts.get(host, ()))

    def states(self) -> Mapping[str, BillingState]:
        return {h: c[-1].state for h, c in self._hosts.items() if c}

    def record(self, host: str, state: BillingState, t: float, source: str, note: str = "") -> bool:
        """Add a change (True) unless the host is already in that state (False)."""
        if state not in BILLING_STATES:
            raise ValueError(f"unknown billing state {state!r}: use one of {BILLING_STATES}")
        if self.state(host) == state and host in self._hosts:
            return False
        if self.state(host) == state and state == "running":
            return False  # the implicit start state needs no record
        changes = self._hosts.setdefault(host, [])
        changes.append(BillingChange(state, t, source, note))
        del changes[:-MAX_HISTORY]
        return True

    def apply(self, set_billing: Callable[[str, BillingState], None]) -> None:
        """Give every recorded state to the cost tracker (``CostTracker.set_billing``)."""
        for host, state in self.states().items():
            set_billing(host, state)

    def forget(self, host: str) -> None:
        self._hosts.pop(host, None)

    def save(self) -> Path:
        doc = {
            "version": VERSION,
            "hosts": {h: [c.to_json() for c in cs] for h, cs in self._hosts.items()},
        }
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".billing.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return self.path


def record_and_apply(
    set_billing: Callable[[str, BillingState], None], source: str = "action"
) -> Callable[[str, BillingState], None]:
    """A billing change from a provider action: into billing.json and the cost tracker
    (``CostTracker.set_billing``, a plain assignment read by the tracker's thread)."""
    lock = threading.Lock()

    def change(host: str, state: BillingState) -> None:
        with lock:
            try:
                ledger = BillingLedger.load()
                if ledger.record(host, state, time.time(), source):
                    ledger.save()
            except (BillingFileError, OSError) as e:
                log.warning("billing state of %s not saved: %s", host, e)
        set_billing(host, state)

    return change
