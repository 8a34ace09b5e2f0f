"""One arrival benchmark, start to end, the same for the CLI and the GUI: the offer's
advertised figures (where the provider publishes them), the run over the host's link with
its progress, the judgment, the record in the history, and the comparisons with earlier
runs. Here because it is the one place allowed to join fleet, providers, verdicts and
history (the layer contracts in pyproject.toml).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpufleet_sampler.bench_protocol import METRICS

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history import bench_results
from gpufleet.core.prometheus.exporter import FleetMetrics
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.providers.offers import fetch_advertised
from gpufleet.core.providers.registry import open_provider
from gpufleet.core.verdicts.arrival import BenchRun, feed_line, judge

log = logging.getLogger(__name__)


def advertised_for(host: HostConfig, note: Callable[[str], None]) -> dict[str, float] | None:
    """The offer's figures, or None (no provider, none published, or the API failed: said)."""
    if host.provider != "vast" or not host.provider_id:
        return None
    try:
        return fetch_advertised(open_provider(host.provider), host.provider_id)
    except ProviderError as e:
        note(f"the offer's advertised figures were not fetched: {e}")
        return None


def seed_bench(metrics: FleetMetrics, path: Path, hosts: list[str]) -> None:
    """Each host's latest recorded benchmark into the exporter (gpufleet_bench_*): a result
    stays true of the card after the run, until the next one."""
    for host in hosts:
        try:
            latest = bench_results.runs_of_host(path, host, limit=1)
        except Exception as e:  # a damaged file costs the gauge, not the exporter
            log.warning("benchmark results of %s unreadable: %s", host, e)
            continue
        if latest:
            metrics.set_bench(host, latest[0].result)


def compare(path: Path, result: dict[str, Any]) -> dict[str, Any]:
    """Medians of the host's earlier runs and of the user's other rentals of the model."""
    earlier = bench_results.runs_of_host(path, result["host"])
    model = bench_results.model_of(result)
    others = bench_results.runs_of_model(path, model, result["host"]) if model else []
    out: dict[str, Any] = {"host_runs": len(earlier), "other_rentals": len(others)}
    out["host_earlier"] = {m: v for m in METRICS if (v := bench_results.median_of(earlier, m))}
    out["same_model"] = {m: v for m in METRICS if (v := bench_results.median_of(others, m))}
    return out


def run_bench(
    fleet: Fleet,
    host: HostConfig,
    history: Path | None,
    on_message: Callable[[dict[str, Any]], None],
    note: Callable[[str], None],
    gpus: list[int] | None = None,
    seconds: float = 60.0,
    force: bool = False,
    metrics: FleetMetrics | None = None,
) -> dict[str, Any]:
    """Run, judge and keep one benchmark; ``on_message`` sees each decoded line (progress),
    ``note`` each side remark (an unfetched offer, an unrecorded result); a running exporter's
    ``metrics`` get the result."""
    advertised = advertised_for(host, note)
    run = BenchRun()

    def on_line(line: bytes) -> None:
        obj = feed_line(run, line)
        if obj is not None:
            on_message(obj)

    fleet.bench(host.name, on_line, gpus, seconds, force)
    result = judge(host.name, run, advertised)
    if history is not None:
        result["compare"] = compare(history, result)
        try:
            bench_results.record(history, result)
        except Exception as e:  # the answer matters more than its record
            note(f"the benchmark was not recorded in the history: {e}")
    if metrics is not None:
        metrics.set_bench(host.name, result)
    return result
