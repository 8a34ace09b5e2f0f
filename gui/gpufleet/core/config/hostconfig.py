"""The description of one monitored host, as stored in config.toml (no secrets here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

AuthMethod = Literal["auto", "agent", "key", "password"]
BackendName = Literal["nvml", "sim"]
TransportName = Literal["ssh", "local"]
CollectorName = Literal["auto", "sampler", "nvidia-smi"]


@dataclass(frozen=True)
class HostConfig:
    """One rented instance (or a simulated one).

    ``transport`` is ``ssh`` for real hosts and ``local`` for localhost and the demo fleet.
    ``backend``/``scenario`` choose what the remote sampler reads: ``nvml`` on a real GPU,
    ``sim`` with a scenario for the demo and the tests (which run the whole path over SSH).
    Prices are per hour in ``currency``; ``billing_start`` is an epoch time or None (then the
    first connection counts as the start). ``collector`` says what reads the GPUs there:
    ``sampler`` (the NVML sampler, needs python3 >= 3.8), ``nvidia-smi`` (its CSV and XML
    output, for minimal images; no offline ring, no kill), or ``auto``: the sampler, and
    nvidia-smi when the host has no python3 >= 3.8. ``provider``/``provider_id`` tie an
    imported host to its instance at the provider (for billing state and stop/terminate
    actions).
    """

    name: str
    host: str = "localhost"
    port: int = 22
    user: str | None = None
    auth: AuthMethod = "auto"
    key_path: str | None = None
    jump: str | None = None
    transport: TransportName = "ssh"
    backend: BackendName = "nvml"
    scenario: str | None = None
    seed: int = 0
    interval_s: float = 1.0
    # The sampler's CPU budget on the host: % of one core per 8 GPUs at 1 Hz, NVML's own time
    # included (None: the sampler's default, 1 %); it reads its slow tiers less often to fit.
    sampler_cpu_pct: float | None = None
    price_per_hour: float | None = None
    currency: str = "USD"
    billing_start: float | None = None
    budget: float | None = None
    tags: tuple[str, ...] = ()
    allowed_processes: tuple[str, ...] = ()
    allow_sudo_kill: bool = False
    rule_overrides: dict[str, dict[str, object]] = field(default_factory=dict)
    collector: CollectorName = "auto"
    # Imported from a provider's API (core.providers): its name ("vast", "runpod", "lambda")
    # and the instance's id there; what a stopped instance keeps costing per hour (storage).
    provider: str | None = None
    provider_id: str | None = None
    storage_per_hour: float | None = None

    @property
    def label(self) -> str:
        if self.transport == "local":
            scenario = f"/{self.scenario}" if self.scenario else ""
            return f"{self.name} (local {self.backend}{scenario})"
        who = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.name} ({who}{self.host}{port})"
