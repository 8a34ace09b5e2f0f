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

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

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
    "bad_response",  # an answer we cannot read
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


class ProviderError(Exception):
    """One clear line for the user (never the API key); ``kind`` says what went wrong."""

    def __init__(self, message: str, kind: ErrorKind = "failed", status: int | None = None):
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status


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

    def stop(self, instance_id: str) -> None:
        self._unsupported("stop")

    def resume(self, instance_id: str) -> None:
        self._unsupported("resume")

    def terminate(self, instance_id: str) -> None:
        self._unsupported("terminate")

    def act(self, action: Action, instance_id: str) -> None:
        {"stop": self.stop, "resume": self.resume, "terminate": self.terminate}[action](instance_id)

    def _unsupported(self, action: Action) -> None:
        other = ", ".join(sorted(self.actions)) or "none"
        raise ProviderError(
            f"{self.label} has no {action} action (it has: {other})", "not_supported"
        )
