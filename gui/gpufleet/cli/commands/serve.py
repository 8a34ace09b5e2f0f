"""``gpufleet serve`` (also ``serve-metrics``): the whole pipeline without a window.

    gpufleet serve [--listen 127.0.0.1:9464] [--demo] [--accept-new] [--no-health-check]

Connects to every configured host (or the simulated demo fleet with ``--demo``) as the app
does and runs what the window runs, through the same builders (``core.pipeline``): the
history store, the rules with their persisted lifecycle (an alert notified or acted on before
a restart is not notified or acted on again), the webhooks of the settings and rules.toml,
the rule actions (local, remote, provider), and ``/metrics``: each streaming host's latest GPU
values under dcgm-exporter's names with the host's name as ``Hostname``, plus cost, active
alerts (``gpufleet_alerts``), health-check verdicts and connection states. ``/-/ready``
answers 200 while the pipeline works (503 otherwise). Runs until SIGINT / SIGTERM; what the
webhooks and actions did is printed, one line each. Binds to loopback by default: there is no
authentication. With ``--demo`` it stops, when it exits, the demo's local sampler daemons
that it started; those that were running already (the desktop app's) are left running.

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
from gpufleet.cli.hostarg import add_live_host_args, configured_hosts, unknown_key_callback
from gpufleet.core.alerts.actions import ActionRun
from gpufleet.core.alerts.rules import RulesError
from gpufleet.core.config import instance_lock, paths
from gpufleet.core.config.configfile import ConfigError, load_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import Settings, load_settings
from gpufleet.core.cost.billing import BillingState
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.notify.webhooks import Delivery
from gpufleet.core.pipeline.alerting import Alerting
from gpufleet.core.pipeline.build import (
    Pipeline,
    build_pipeline,
    demo_daemons_running,
    stop_demo_daemons,
)
from gpufleet.core.pipeline.consumers import LatestHellos, build_action_runner, build_webhooks
from gpufleet.core.pipeline.prom_consumers import PromSources, start_am_receiver
from gpufleet.core.prometheus.am_receiver import AlertmanagerReceiver
from gpufleet.core.prometheus.exporter import DEFAULT_LISTEN
from gpufleet.core.wire.messages import Hello


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        aliases=["serve-metrics"],
        help="run the fleet without a window: history, alerts, webhooks, actions, /metrics",
        description="Run the fleet without a window, as the app does: record the history, "
        "judge the rules, send the webhooks and run the rule actions, and serve /metrics in "
        "the Prometheus format (dcgm-exporter's names; Hostname = the host's name in "
        "gpufleet) and /-/ready.",
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
    add_live_host_args(p, host=False)
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


def _settings() -> Settings:
    """The saved settings (webhooks, retention); defaults, said on stderr, when unreadable."""
    try:
        s, problems = load_settings()
    except ConfigError as e:
        print(f"gpufleet: settings not read ({e}); the defaults apply", file=sys.stderr)
        return Settings()
    for problem in problems:
        print(f"gpufleet: {problem}", file=sys.stderr)
    return s


def _say_action(run: ActionRun) -> None:
    """One line per rule action scheduled and per outcome (the journal's record)."""
    what = f"{run.spec.type} action “{run.spec.command}” of {run.rule_id} on {run.host}"
    detail = f": {run.output.strip().splitlines()[-1]}" if run.output.strip() else ""
    print(f"action {run.state}: {what}{detail}", flush=True)


def _say_delivery(d: Delivery) -> None:
    if not d.ok:
        print(
            f"gpufleet: webhook {d.webhook} not delivered after {d.attempts} attempts: "
            f"{d.error or '?'}",
            file=sys.stderr,
            flush=True,
        )


def build_headless(fleet: Fleet, demo: bool, settings: Settings) -> tuple[Pipeline, _Outputs]:
    """The window's pipeline without the window: the same builders (one rule engine, the
    store, the alert lifecycle, webhooks, rule actions), its hub's outputs keeping only the
    hellos the provider actions ask for. Raises RulesError for a broken rules.toml."""
    hellos = _Outputs()
    holder: list[Pipeline] = []

    def set_billing(host: str, state: BillingState) -> None:
        pipeline = holder[0]
        cost = pipeline.engine.cost
        pipeline.hub.post(lambda: cost.set_billing(host, state))

    runner = build_action_runner(
        fleet, demo=demo, hello_of=hellos.hello, on_done=_say_action, set_billing=set_billing
    )
    pipeline = build_pipeline(
        fleet,
        demo=demo,
        settings=settings,
        runner=runner,
        on_scheduled=_say_action,
        strict_rules=True,
    )
    holder.append(pipeline)
    hooks = build_webhooks(settings, _say_delivery)
    for problem in hooks.problems:
        print(f"gpufleet: webhook not used: {problem}", file=sys.stderr)
    pipeline.alerting.set_webhooks(hooks.notifier, hooks.subscribed)  # before the hub runs
    return pipeline, hellos


class _Outputs(LatestHellos):
    """The hub's outputs in ``serve``: the latest hellos, and a Prometheus instance seen for
    the first time becomes a host of the rules and the cost (priced from its group)."""

    def __init__(self) -> None:
        super().__init__()
        self.prom: PromSources | None = None
        self.alerting: Alerting | None = None

    def on_hello(self, host: str, hello: Hello) -> None:
        super().on_hello(host, hello)
        hc = self.prom.new_instance(host) if self.prom is not None else None
        if hc is not None and self.alerting is not None:
            self.alerting.set_host(hc)  # on the hub's thread, which owns the engine


def _start_prometheus(
    pipeline: Pipeline, outputs: _Outputs, demo: bool
) -> tuple[PromSources | None, AlertmanagerReceiver | None]:
    """The host groups and the Alertmanager receiver of config.toml (none for the demo); a
    piece that cannot start is said on stderr and the rest runs on."""
    if demo:
        return None, None
    try:
        cfg = load_config()
    except ConfigError:  # already said by the host list; nothing more to start
        return None, None
    prom = receiver = None
    if cfg.prometheus:
        try:
            prom = PromSources.from_tables(pipeline.hub, cfg.prometheus)
        except ValueError as e:
            print(f"gpufleet: Prometheus host groups not read: {e}", file=sys.stderr)
        else:
            outputs.prom, outputs.alerting = prom, pipeline.alerting
            prom.start()
    listen = (cfg.settings or {}).get("alertmanager_listen")
    if listen:
        try:
            receiver = start_am_receiver(pipeline.hub, str(listen))
        except Exception as e:  # ReceiverError, or a keyring that cannot be read
            print(f"gpufleet: Alertmanager receiver not started: {e}", file=sys.stderr)
    return prom, receiver


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
        pipeline, hellos = build_headless(fleet, args.demo, _settings())
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
    prom, receiver = _start_prometheus(pipeline, hellos, args.demo)
    groups = [g.name for g in prom.groups()] if prom is not None else []
    try:
        pipeline.hub.start(hellos, hosts=[*(h.name for h in hosts), *groups])
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
        if prom is not None:
            prom.stop()
        if receiver is not None:
            receiver.stop()
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
