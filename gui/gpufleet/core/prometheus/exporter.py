"""The app's Prometheus exporter: every connected host's latest values, plus cost and alerts.

``FleetMetrics`` is fed a Fleet's events by the pipeline hub (``core.pipeline.hub``, on the
hub's thread) and keeps, per host, the latest hello, sample and process list, the connection
state, the active alerts and cost summaries the hub's alerting stage hands it, and the
health-check findings. ``render()`` (any
thread) turns a snapshot of that into the Prometheus text format, under the same names and
labels as the sampler's own exporter (``gpufleet_sampler.metric_names``), with the
host's configured name as ``Hostname``. A scrape never waits for a host: it reads what the
consumer thread last stored.

``MetricsServer`` holds a FleetMetrics, the HTTP server and a health-check thread that runs the
start-of-rental check of each host once it first streams (``gpufleet serve-metrics``, and the
GUI's setting); it does not read the fleet's events itself: the hub feeds its metrics.

GPU series are exported only while a host streams: a host that is reconnecting shows in
``gpufleet_host_up`` = 0 rather than as frozen values.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from gpufleet_sampler import metric_names as pn
from gpufleet_sampler.listen_address import parse_listen
from gpufleet_sampler.metrics_http import make_server

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.fleet.events import (
    STREAMING,
    FleetEvent,
    HostMessage,
    HostStatus,
)
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.errors import SessionState
from gpufleet.core.model.findings import Finding
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet.core.wire.messages import Event, Hello, Links, Procs, Sample

log = logging.getLogger(__name__)

DEFAULT_LISTEN = f"127.0.0.1:{pn.DEFAULT_FLEET_PORT}"


def hello_gpus(hello: Hello) -> list[dict[str, Any]]:
    """hello's GPU entries as the renderer reads them."""
    return [
        {
            "index": g.index,
            "uuid": g.uuid,
            "name": g.name,
            "pci_bus_id": g.pci_bus_id,
            "nominal": dict(g.nominal),
        }
        for g in hello.gpus
    ]


@dataclass
class _Host:
    name: str
    hello: Hello | None = None
    gpus: list[dict[str, Any]] = field(default_factory=list)
    driver: str | None = None
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    last_t: float | None = None
    procs: list[pn.ProcRow] = field(default_factory=list)
    xids: dict[int, dict[int, tuple[int, float]]] = field(default_factory=dict)
    link_rows: list[list[Any]] = field(default_factory=list)  # latest per-link NVLink rows
    state: SessionState = "connecting"
    findings: tuple[Finding, ...] = ()
    bench: dict[str, Any] | None = None  # the latest judged arrival benchmark


class FleetMetrics:
    """Latest values of a fleet, for Prometheus (see the module docstring).

    ``feed``, ``set_alerts`` and ``set_cost`` from one thread; ``render`` and ``set_findings``
    from any. ``on_first_stream(host)`` is called (on the feeding thread) the first time a
    host streams."""

    def __init__(
        self,
        hosts: Sequence[HostConfig] = (),
        on_first_stream: Callable[[str], None] | None = None,
    ) -> None:
        self._on_first_stream = on_first_stream
        self._streamed: set[str] = set()
        self._lock = threading.Lock()
        self._hosts: dict[str, _Host] = {h.name: _Host(h.name) for h in hosts}
        self._alerts: tuple[Alert, ...] = ()
        self._cost: dict[str, CostSummary] = {}
        self._version = 0
        self._cache_version = -1
        self._cache = b""
        self.bad_events = 0

    # -- input (the consumer thread) -----------------------------------------------------------

    def feed(self, ev: FleetEvent) -> None:
        if isinstance(ev, HostMessage):
            self._message(ev.host, ev.msg)
        elif isinstance(ev, HostStatus):
            with self._lock:
                self._host(ev.host).state = ev.state
            if ev.state == STREAMING and ev.host not in self._streamed:
                self._streamed.add(ev.host)
                if self._on_first_stream is not None:
                    self._on_first_stream(ev.host)
        with self._lock:
            self._version += 1

    def _message(self, host: str, msg: Any) -> None:
        with self._lock:
            h = self._host(host)
            if isinstance(msg, Sample):
                h.columns, h.rows, h.last_t = msg.columns, msg.rows, msg.t
            elif isinstance(msg, Links):
                h.link_rows = [
                    [r.gpu, list(r.tx_bps), list(r.rx_bps), list(r.up), list(r.speed_bps)]
                    for r in msg.rows
                ]
            elif isinstance(msg, Procs):
                h.procs = [(p.gpu, p.pid, p.name, p.user, p.mem_bytes, p.sm_pct) for p in msg.procs]
            elif isinstance(msg, Hello):
                h.hello, h.gpus = msg, hello_gpus(msg)
                h.driver = msg.host.get("driver_version")
                h.columns = msg.columns
                h.rows, h.procs, h.link_rows = (), [], []
            elif (
                isinstance(msg, Event)
                and msg.type == "xid"
                and msg.gpu is not None
                and msg.code is not None
            ):
                seen = h.xids.setdefault(msg.gpu, {})
                seen[msg.code] = (seen.get(msg.code, (0, 0.0))[0] + 1, msg.t)

    def set_alerts(self, active: Sequence[Alert]) -> None:
        """The alerts active now (the hub's one rule engine, plus Alertmanager's)."""
        with self._lock:
            self._alerts = tuple(active)
            self._version += 1

    def set_cost(self, summaries: dict[str, CostSummary]) -> None:
        with self._lock:
            self._cost = dict(summaries)
            self._version += 1

    def set_findings(self, host: str, findings: Sequence[Finding]) -> None:
        with self._lock:
            self._host(host).findings = tuple(findings)
            self._version += 1

    def set_bench(self, host: str, result: dict[str, Any]) -> None:
        """The host's latest arrival benchmark (``core.verdicts.arrival.judge``'s dict)."""
        with self._lock:
            self._host(host).bench = result
            self._version += 1

    def _host(self, name: str) -> _Host:
        h = self._hosts.get(name)
        if h is None:
            h = self._hosts[name] = _Host(name)
        return h

    # -- output (any thread) -------------------------------------------------------------------

    def render(self) -> bytes:
        with self._lock:
            if self._cache_version == self._version:
                return self._cache
            exp = pn.Exposition()
            for h in self._hosts.values():
                self._render_host(exp, h)
            for a in self._alerts:
                exp.add("gpufleet_alerts", _alert_labels(a), 1)
            self._cache = exp.render().encode("utf-8")
            self._cache_version = self._version
            return self._cache

    def _render_host(self, exp: pn.Exposition, h: _Host) -> None:
        host_l = pn.labels(((pn.HOSTNAME_LABEL, h.name),))
        streaming = h.state == STREAMING
        exp.add("gpufleet_host_up", host_l, 1 if streaming else 0)
        exp.add("gpufleet_host_state", f'{host_l},state="{pn.escape(h.state)}"', 1)
        if streaming and h.hello is not None:
            pn.render_host(
                exp, h.name, h.gpus, h.columns, h.rows, h.procs, h.xids, h.driver or None
            )
            pn.render_links(exp, h.name, h.gpus, h.link_rows, h.driver or None)
            pn.render_host_info(exp, h.name, h.hello.raw, h.last_t)
        c = self._cost.get(h.name)
        if c is not None:
            cl = f'{host_l},currency="{pn.escape(c.currency)}"'
            exp.add("gpufleet_cost_total", cl, c.total)
            exp.add("gpufleet_cost_idle_total", cl, c.idle)
            exp.add("gpufleet_cost_rate_per_hour", cl, c.rate_per_h)
            exp.add("gpufleet_cost_budget_used_ratio", host_l, c.budget_used_frac)
            exp.add("gpufleet_effective_compute_ratio", host_l, c.effective_ratio)
        worst: dict[str, int] = {}  # one series per label set, the worst verdict wins
        for f in h.findings:
            fl = pn.labels(
                (
                    (pn.HOSTNAME_LABEL, h.name),
                    ("gpu", f.gpu),
                    ("check", f.id),
                    ("verdict", f.verdict),
                )
            )
            worst[fl] = max(worst.get(fl, 0), pn.VERDICT_VALUE.get(f.verdict, 0))
        for fl, value in worst.items():
            exp.add("gpufleet_health_check", fl, value)
        if h.bench is not None:
            _render_bench(exp, h.name, h.bench)


def _render_bench(exp: pn.Exposition, host: str, result: dict[str, Any]) -> None:
    """Per GPU the verdict, and per measured metric its ratio to a good card."""
    for g in result.get("gpus") or []:
        gpu = (pn.HOSTNAME_LABEL, host), ("gpu", g.get("index"))
        verdict = str(g.get("verdict"))
        value = pn.BENCH_VERDICT_VALUE.get(verdict)
        if value is not None:
            exp.add("gpufleet_bench_verdict", pn.labels((*gpu, ("verdict", verdict))), value)
        good = g.get("good_card") or {}
        for metric, measured in (g.get("measured") or {}).items():
            ref = good.get(metric)
            if isinstance(measured, (int, float)) and isinstance(ref, (int, float)) and ref > 0:
                ratio = round(measured / ref, 4)
                exp.add(
                    "gpufleet_bench_good_card_ratio", pn.labels((*gpu, ("metric", metric))), ratio
                )


def _alert_labels(a: Alert) -> str:
    return pn.labels(
        (
            ("alertname", pn.alert_name(a.rule_id)),
            ("alertstate", a.state),
            ("acknowledged", "true" if a.acked else None),
            ("severity", a.severity),
            (pn.HOSTNAME_LABEL, a.host),
            ("gpu", a.gpu),
            ("rule_id", a.rule_id),
            ("err_code", a.key or None) if a.condition == "xid" else ("key", a.key or None),
        )
    )


# --- the server ----------------------------------------------------------------------------


class MetricsServer:
    """A FleetMetrics served over HTTP ``/metrics``; health checks in the background.

    ``start()`` binds (raises ``OSError`` when the address is unusable) and starts the
    threads; the fleet is started and stopped by the caller, and its events reach
    ``self.metrics`` through the pipeline hub."""

    def __init__(
        self,
        fleet: Fleet,
        hosts: Sequence[HostConfig],
        listen: str = DEFAULT_LISTEN,
        *,
        health_check: bool = True,
        evaluate: Callable[[dict[str, Any], HostConfig | None], list[Finding]] | None = None,
        ready: Callable[[], bool] | None = None,
    ) -> None:
        self.fleet = fleet
        self._ready = ready  # answers /-/ready (absent without it)
        self._to_check: queue.Queue[str] = queue.Queue()
        self._health = health_check
        self.metrics = FleetMetrics(hosts, on_first_stream=self._queue_check)
        self.host, self.port = parse_listen(listen)
        self._evaluate = evaluate or evaluate_check
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def start(self) -> None:
        server = make_server(self.metrics, self.host, self.port, self._ready)
        self.port = int(server.server_address[1])
        self._server = server
        self._spawn(server.serve_forever, "metrics-http", daemon=True)
        if self._health:
            self._spawn(self._checks, "metrics-health")

    def _spawn(self, fn: Callable[[], None], name: str, daemon: bool = False) -> None:
        t = threading.Thread(target=fn, name=name, daemon=daemon)
        t.start()
        self._threads.append(t)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for t in self._threads:
            t.join(timeout)
        self._threads = []

    def _queue_check(self, host: str) -> None:
        if self._health:
            self._to_check.put(host)

    def _checks(self) -> None:
        """The start-of-rental check of each host, once it first streams (one at a time: a
        check is a one-shot remote command)."""
        evaluate = self._evaluate
        while not self._stop.is_set():
            try:
                host = self._to_check.get(timeout=0.2)
            except queue.Empty:
                continue
            cfg = next((h for h in self.fleet.hosts() if h.name == host), None)
            try:
                facts = self.fleet.check(host)
                self.metrics.set_findings(host, evaluate(facts, cfg))
            except Exception as e:  # a failed check is a missing metric, not a dead exporter
                log.warning("metrics: health check of %s failed: %s", host, e)
