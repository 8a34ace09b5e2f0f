"""One factory for the pieces every front end shares: the rule engine, the history store, the
pipeline hub and the demo daemons' shutdown. The GUI, ``serve-metrics`` and the CLI analyses
(``replay``, ``diagnose``) build them here, so each process has exactly one rule engine, loaded
the same way, whatever is enabled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpufleet.core.alerts.actions import ActionRun, ActionRunner
from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.alerts.rules import RuleEngine, RulesError, load_rules
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import Settings
from gpufleet.core.fleet.demo import demo_state_dir
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.fleet.localdaemons import running_local_daemons, started_here
from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.pipeline.alerting import Alerting
from gpufleet.core.pipeline.bench import seed_bench
from gpufleet.core.pipeline.hub import PipelineHub
from gpufleet.core.prometheus.exporter import MetricsServer

log = logging.getLogger(__name__)


def load_rule_engine(hosts: Sequence[HostConfig], *, strict: bool = True) -> RuleEngine:
    """The shipped rules overridden by the user's rules.toml, for these hosts.

    ``strict``: a broken rules.toml raises ``RulesError`` (the CLI says why and exits);
    otherwise it is logged and the shipped rules alone are used, so the window still alerts.
    """
    user = paths.rules_file()
    try:
        return RuleEngine(load_rules(user if user.exists() else None), hosts)
    except RulesError as e:
        if strict:
            raise
        log.warning("rules.toml not used: %s; the shipped rules apply", e)
        return RuleEngine(load_rules(None, include_user=False), hosts)


def retention_days(settings: Settings | None) -> tuple[float, float]:
    """The history retention chosen in the settings: (raw days, rollup days)."""
    s = settings or Settings()
    return float(s.retention_raw_days), float(s.retention_rollup_days)


def retention_bytes(settings: Settings | None) -> int:
    """The history's size limit chosen in the settings."""
    return int((settings or Settings()).history_max_gb * 2**30)


def open_store(demo: bool, settings: Settings | None = None) -> Store | None:
    """The history store of this fleet (the demo has its own); None, logged, when the file
    cannot be opened (the app runs on with its live window only)."""
    raw, rollup = retention_days(settings)
    try:
        return Store(
            paths.history_file(demo),
            retention_raw_days=raw,
            retention_rollup_days=rollup,
            max_bytes=retention_bytes(settings),
        )
    except Exception as e:  # sqlite3.Error, OSError: a damaged or unwritable file
        log.warning("history store unavailable: %s", e)
        return None


@dataclass
class Pipeline:
    """What a running front end holds: the fleet's one consumer and the stages it feeds."""

    hub: PipelineHub
    alerting: Alerting
    store: Store | None
    live: LiveBuffers | None
    metrics_server: MetricsServer | None

    @property
    def engine(self) -> RuleEngine:
        return self.alerting.engine

    def ready(self) -> bool:
        """Whether the pipeline works: its hub's thread runs and the history (where there is
        one) is open and committing (``/-/ready``)."""
        store_ok = self.store is None or self.store.writing()
        return self.hub.running() and store_ok

    def start_metrics(self, fleet: Fleet, listen: str, *, health_check: bool = True) -> str:
        """Serve ``/metrics`` (and ``/-/ready``) from this pipeline's hub (raises OSError /
        ValueError when the address cannot be used); returns the URL. Call before
        ``hub.start``."""
        server = MetricsServer(
            fleet, fleet.hosts(), listen, health_check=health_check, ready=self.ready
        )
        server.start()
        self.metrics_server = server
        self.hub.metrics = server.metrics
        if self.store is not None:
            seed_bench(server.metrics, self.store.path, [h.name for h in fleet.hosts()])
        return server.url

    def stop(self) -> None:
        """Hub first (nothing more is fed), then the exporter, the alerting's threads and
        the store (its last batch flushed)."""
        self.hub.stop()
        if self.metrics_server is not None:
            self.metrics_server.stop()
        self.alerting.stop()
        if self.store is not None:
            self.store.close()


def build_pipeline(
    fleet: Fleet,
    *,
    demo: bool,
    settings: Settings | None = None,
    live: LiveBuffers | None = None,
    with_store: bool = True,
    runner: ActionRunner | None = None,
    on_scheduled: Callable[[ActionRun], None] | None = None,
    strict_rules: bool = False,
    yield_between_messages: bool = False,
) -> Pipeline:
    """The hub on a new subscription of ``fleet``, with one rule engine."""
    hosts = fleet.hosts()
    engine = load_rule_engine(hosts, strict=strict_rules)
    store = open_store(demo, settings) if with_store else None
    alerting = Alerting(engine, runner, on_scheduled, AlertLifecycle(store))
    events = fleet.subscribe()
    hub = PipelineHub(
        events,
        live=live,
        store=store,
        alerting=alerting,
        history_path=paths.history_file(demo) if store is not None else None,
        dropped=lambda: fleet.dropped(events),
        yield_between_messages=yield_between_messages,
        watch_links=fleet.watch_links,
    )
    return Pipeline(hub, alerting, store, live, None)


def demo_daemons_running(hosts: Sequence[HostConfig]) -> set[str] | None:
    """The demo hosts whose local daemon runs already (someone else's: left running)."""
    return running_local_daemons(hosts, demo_state_dir())


def stop_demo_daemons(fleet: Fleet, running_before: set[str] | None) -> dict[str, str]:
    """Stop the demo daemons this process started (they would otherwise sample for 24 h);
    returns host -> problem for those that would not stop. Best effort: an idle daemon exits
    by itself later."""
    names = started_here(fleet.hosts(), running_before)
    if not names:
        return {}
    try:
        results = fleet.stop_samplers(names)
    except Exception as e:  # the transport itself failed: one reason for all
        return dict.fromkeys(names, str(e))
    return {name: problem for name, problem in results.items() if problem is not None}
