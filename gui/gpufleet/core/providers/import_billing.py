"""The provider's word on each imported host's billing state, recorded as an import applies:
the CLI's ``hosts import`` and the window's "Import from a provider…" record the same states
(a stopped pod is ``storage``, not running; an instance gone from the account ``ended``), so
the cost and the connection follow the instance whichever way it was imported."""

from __future__ import annotations

import time
from collections.abc import Iterable

from gpufleet.core.cost.billing import BillingLedger, BillingState
from gpufleet.core.providers.importing import Change


def import_states(changes: Iterable[Change]) -> dict[str, BillingState]:
    """host name -> the billing state the provider gives it, for the changes that name a
    host (those with no SSH endpoint or refused, and not yet a host, have none)."""
    out: dict[str, BillingState] = {}
    for c in changes:
        host = c.host or c.before
        if host is None or (c.kind in ("no_ssh", "invalid") and c.before is None):
            continue
        state: BillingState | None = "ended" if c.kind == "ended" else c.instance.billing
        if state is not None:
            out[host.name] = state
    return out


def record_import_billing(
    changes: Iterable[Change], t: float | None = None
) -> dict[str, BillingState]:
    """Record the states of ``import_states`` in billing.json (saved when one changed);
    → those states. Raises BillingFileError when the ledger cannot be read."""
    chosen = list(changes)
    states = import_states(chosen)
    notes = {h.name: c.instance.state for c in chosen if (h := c.host or c.before) is not None}
    ledger = BillingLedger.load()
    now = time.time() if t is None else t
    changed = False
    for name, state in states.items():
        changed |= ledger.record(name, state, now, "provider", notes.get(name, ""))
    if changed:
        ledger.save()
    return states
