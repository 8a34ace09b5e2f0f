"""The demo fleet: one simulated host per sim scenario, run through the local transport.

It is the app's embedded default (``gpufleet --demo``, and the first run with no hosts), and
every CLI command accepts its hosts as ``demo:<name>`` or ``demo:<scenario>``. Its sampler
state, history and audit log live under ``paths.demo_data_dir()``, apart from real data.
"""

from __future__ import annotations

from pathlib import Path

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig

DEMO_PREFIX = "demo:"

# (host name, sim scenario, price per hour in USD): rates of the kind rental sites show.
DEMO_FLEET: tuple[tuple[str, str, float], ...] = (
    ("a100-train", "healthy-8xa100", 14.32),
    ("h100-a", "thermal-throttle-h100", 2.99),
    ("4090-x2", "power-capped-4090", 1.58),
    ("a100-eval", "crashed-idle", 1.89),
    ("a100-shared", "foreign-process", 3.79),
    ("a100-ecc", "ecc-xid", 5.96),
)


def demo_hosts() -> list[HostConfig]:
    """One local sim host per scenario, with plausible prices."""
    return [
        HostConfig(
            name=name,
            host="localhost",
            transport="local",
            backend="sim",
            scenario=scenario,
            seed=i + 1,
            price_per_hour=price,
            currency="USD",
            tags=("demo",),
        )
        for i, (name, scenario, price) in enumerate(DEMO_FLEET)
    ]


def demo_host(name: str) -> HostConfig | None:
    """A demo host by ``demo:<name>``, ``demo:<scenario>`` or its bare name."""
    key = name[len(DEMO_PREFIX) :] if name.startswith(DEMO_PREFIX) else name
    for h in demo_hosts():
        if key in (h.name, h.scenario):
            return h
    return None


def is_demo_host(host: HostConfig) -> bool:
    return host.transport == "local" and "demo" in host.tags


def demo_state_dir() -> Path:
    """Where the demo fleet's sampler daemons keep their lock, socket and ring."""
    return paths.ensure_private_dir(paths.demo_data_dir() / "sampler")
