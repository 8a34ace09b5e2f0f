"""``gpufleet serve-metrics``: run the fleet headless and serve it to Prometheus.

    gpufleet serve-metrics [--listen 127.0.0.1:9464] [--demo] [--accept-new]
                           [--no-health-check]

Connects to every configured host (or the simulated demo fleet with ``--demo``) as the app
does, and serves ``/metrics``: each streaming host's latest GPU values under dcgm-exporter's
names with the host's name as ``Hostname``, plus cost, active alerts (``gpufleet_alerts``, in
the shape of Prometheus' ``ALERTS``), health-check verdicts and connection states. Runs until
SIGINT / SIGTERM. Binds to loopback by default: there is no authentication. With ``--demo``
it stops, when it exits, the demo's local sampler daemons that it started; those that were
running already (the desktop app's) are left running.

Exit codes: 0 stopped; 1 no hosts / bad config or rules; 2 the address cannot be used.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from typing import Any

from gpufleet_sampler.listen_address import LOOPBACK

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import configured_hosts, unknown_key_callback
from gpufleet.core.alerts.rules import RulesError
from gpufleet.core.config import instance_lock, paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.pipeline.build import build_pipeline, demo_daemons_running, stop_demo_daemons
from gpufleet.core.prometheus.exporter import DEFAULT_LISTEN


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve-metrics",
        help="serve the fleet's metrics, cost and alerts to Prometheus",
        description="Run the fleet without a window and serve /metrics in the Prometheus "
        "format (dcgm-exporter's names; Hostname = the host's name in gpufleet).",
        epilog="exit codes: 0 stopped, 1 no hosts or a bad config/rules file, "
        "2 the address cannot be used",
    )
    p.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where to serve (default {DEFAULT_LISTEN}: loopback only; port 0 = any free port)",
    )
    p.add_argument("--demo", action="store_true", help="serve the simulated demo fleet")
    p.add_argument(
        "--accept-new", action="store_true", help="trust unknown host keys (first connection)"
    )
    p.add_argument(
        "--no-health-check",
        action="store_true",
        help="do not run the start-of-rental check of each host (gpufleet_health_check)",
    )
    p.set_defaults(func=run)


def _hosts(demo: bool) -> list[HostConfig]:
    if demo:
        paths.ensure_private_dir(paths.demo_data_dir())
        return demo_hosts()
    hosts = configured_hosts()
    if not hosts:
        raise CliError(
            "no hosts configured: add one with `gpufleet hosts add`, or serve the demo fleet "
            "with --demo",
            EXIT_FAILURE,
        )
    return hosts


def run(args: argparse.Namespace) -> int:
    hosts = _hosts(args.demo)
    try:
        lock = instance_lock.for_fleet(args.demo, instance_lock.ROLE_SERVE).acquire()
    except instance_lock.InstanceBusy as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    try:
        return _serve(args, hosts)
    finally:
        lock.release()


def _serve(args: argparse.Namespace, hosts: list[HostConfig]) -> int:
    fleet = Fleet(hosts, on_unknown_key=unknown_key_callback(args.accept_new), demo=args.demo)
    try:
        # The same pipeline as the window's, without one: one rule engine, the exporter fed
        # by the hub (no live buffers; the store records as the window's does).
        pipeline = build_pipeline(fleet, demo=args.demo, strict_rules=True)
    except RulesError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    try:
        url = pipeline.start_metrics(fleet, args.listen, health_check=not args.no_health_check)
    except ValueError as e:
        pipeline.stop()
        raise CliError(str(e), EXIT_USAGE) from None
    except OSError as e:
        pipeline.stop()
        raise CliError(f"cannot listen on {args.listen}: {e.strerror or e}", EXIT_USAGE) from None
    running_before = demo_daemons_running(hosts) if args.demo else None
    stop = threading.Event()
    old = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError):
            old[sig] = signal.signal(sig, lambda _s, _f: stop.set())
    try:
        pipeline.hub.start(hosts=[h.name for h in hosts])
        fleet.start()
        print(f"serving {url} ({len(hosts)} hosts)", flush=True)
        server = pipeline.metrics_server
        if server is not None and server.host not in LOOPBACK:
            print(
                f"gpufleet: warning: serving on {server.host} without authentication",
                file=sys.stderr,
            )
        while not stop.wait(0.5):
            pass
    finally:
        fleet.stop()
        if args.demo:
            for name, problem in stop_demo_daemons(fleet, running_before).items():
                print(
                    f"gpufleet: could not stop the demo sampler of {name}: {problem}",
                    file=sys.stderr,
                )
        pipeline.stop()
        for sig, handler in old.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
    return EXIT_OK
