"""What every provider adapter offers, in one shape, and the one error type they raise.

An adapter lists the account's instances as ``Instance`` (SSH endpoint, GPU, price and
currency, state, billing state) and runs the actions the provider has (``stop``,
``resume``, ``terminate``); an action it lacks raises ``ProviderError`` of kind
``not_supported`` with what to do instead. Adapters are Qt-free and blocking; callers run
them off the GUI thread.

Billing states, the same everywhere in gpufleet:

- ``running``: the GPU is billed;
- ``storage``: stopped, still paying for the disk (vast.ai, RunPod);
- ``ended``: nothing billed any more (terminated, destroyed).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gpufleet.core.cost.billing import BillingState as BillingState

Action = Literal["stop", "resume", "terminate"]
ErrorKind = Literal[
    "auth",  # the key was refused (401/403)
    "rate_limited",  # 429 after every retry
    "server",  # 5xx after every retry
    "timeout",  # no answer in time
    "network",  # no connection
    "not_found",  # no such instance
    "not_supported",  # the provider has no such action
    "bad_response",  # an answer we cannot read (not JSON, too large)
    "api_changed",  # the endpoint is gone (404/410) or the body lacks what we read: drift
    "account",  # the key was accepted but the account may not do this (inactive, unpaid)
    "not_confirmed",  # the provider answered but nothing says the action happened
    "no_key",  # no API key configured
    "failed",  # anything else the provider refused (4xx)
]

# What each action leaves billed afterwards, per provider (shown before acting).
AFTER_ACTION: dict[tuple[str, Action], str] = {
    ("vast", "stop"): "the GPU is no longer billed; the disk keeps costing storage",
    ("vast", "terminate"): "nothing is billed any more; the disk and its data are gone",
    ("runpod", "stop"): "the GPU is no longer billed; the volume disk keeps costing storage",
    ("runpod", "terminate"): "nothing is billed any more; the pod and its volume are gone",
    ("lambda", "terminate"): "nothing is billed any more; the instance's disk is gone "
    "(persistent filesystems survive)",
}


@dataclass(frozen=True)
class Drift:
    """What changed, in parts, for a sentence in the user's language (``core.text.
    provider_drift``): the provider's label, the endpoint relied on, what it answered."""

    provider: str
    endpoint: str
    said: str


class ProviderError(Exception):
    """One clear line for the user (never the API key); ``kind`` says what went wrong;
    ``drift`` its parts when the kind is ``api_changed``."""

    def __init__(
        self,
        message: str,
        kind: ErrorKind = "failed",
        status: int | None = None,
        drift: Drift | None = None,
    ):
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.drift = drift


def drift(label: str, endpoint: str, said: str, status: int | None = None) -> ProviderError:
    """The provider's API no longer is what this adapter was written against: an endpoint it
    relies on answers 404/410, or an answer lacks the fields it reads. Said as such, never
    as a refused key or an outage: only a new gpufleet helps."""
    return ProviderError(
        f"{label}: the provider's API changed ({endpoint}: {said}); gpufleet needs an update",
        "api_changed",
        status,
        Drift(label, endpoint, said),
    )


def require(label: str, what: str, d: Mapping[str, Any], keys: Sequence[str]) -> None:
    """Drift when an object the adapter reads lacks one of the fields it cannot do without."""
    missing = [k for k in keys if d.get(k) is None]
    if missing:
        raise drift(label, what, f"no {', '.join(f'`{k}`' for k in missing)} in the answer")


@dataclass(frozen=True)
class Instance:
    """One rented instance as the provider reports it (None: not reported)."""

    provider: str
    id: str
    name: str
    state: str  # the provider's own word (running, stopped, EXITED, active, …)
    billing: BillingState | None  # None: the provider's state does not say
    ssh_host: str | None
    ssh_port: int | None
    ssh_user: str | None
    gpu_name: str | None
    gpu_count: int | None
    price_per_hour: float | None  # what it costs while running
    currency: str = "USD"
    storage_per_hour: float | None = None  # what it costs while stopped, where known

    @property
    def gpu_label(self) -> str | None:
        """``2x RTX 4090``; the name alone where the count is not reported."""
        if not self.gpu_name:
            return None
        return f"{self.gpu_count}x {self.gpu_name}" if self.gpu_count else self.gpu_name

    @property
    def ssh_command(self) -> str | None:
        if not self.ssh_host:
            return None
        port = f"-p {self.ssh_port} " if self.ssh_port and self.ssh_port != 22 else ""
        user = f"{self.ssh_user}@" if self.ssh_user else ""
        return f"ssh {port}{user}{self.ssh_host}"


class Provider(ABC):
    """A provider's API for one account. ``actions`` names what ``act`` accepts."""

    name: str = ""
    label: str = ""
    actions: frozenset[Action] = frozenset()

    @abstractmethod
    def list_instances(self) -> list[Instance]: ...

    @abstractmethod
    def get_instance(self, instance_id: str) -> Instance: ...

    # stop / resume / terminate: True when the provider's answer itself says the state
    # changed, False when it says nothing either way (``act_confirmed`` then re-reads the
    # instance); a ProviderError when it says the action did not happen.
    def stop(self, instance_id: str) -> bool:
        return self._unsupported("stop")

    def resume(self, instance_id: str) -> bool:
        return self._unsupported("resume")

    def terminate(self, instance_id: str) -> bool:
        return self._unsupported("terminate")

    def act(self, action: Action, instance_id: str) -> bool:
        return {"stop": self.stop, "resume": self.resume, "terminate": self.terminate}[action](
            instance_id
        )

    def act_confirmed(
        self,
        action: Action,
        instance_id: str,
        rereads: int = 3,
        wait_s: float = 3.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Run ``action`` and return only once the provider says it happened: its answer,
        else a re-read of the instance in the state the action leads to (a terminated
        instance that is gone counts). Otherwise ProviderError ``not_confirmed``: a 200 is
        not a stop (a locked pod answers 200 with an error and keeps billing)."""
        if self.act(action, instance_id):
            return
        said = "nothing in the answer said so"
        for i in range(max(1, rereads)):
            if i:
                sleep(wait_s)
            try:
                inst = self.get_instance(instance_id)
            except ProviderError as e:
                if e.kind == "not_found" and action == "terminate":
                    return
                if e.kind in ("api_changed", "auth", "account", "no_key"):
                    raise
                said = str(e)
                continue
            if inst.billing in LEADS_TO[action]:
                return
            said = f"the instance still says {inst.state!r}"
        raise ProviderError(
            f"{self.label}: {action} instance {instance_id}: not confirmed ({said})",
            "not_confirmed",
        )

    def _unsupported(self, action: Action) -> bool:
        other = ", ".join(sorted(self.actions)) or "none"
        raise ProviderError(
            f"{self.label} has no {action} action (it has: {other})", "not_supported"
        )


# The billing states an action leads to: what a re-read must show to count it as done.
LEADS_TO: dict[Action, frozenset[BillingState]] = {
    "stop": frozenset({"storage", "ended"}),
    "terminate": frozenset({"ended"}),
    "resume": frozenset({"running"}),
}
