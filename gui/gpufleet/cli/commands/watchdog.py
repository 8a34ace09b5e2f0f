"""``gpufleet watchdog HOST arm|disarm|status|cancel``: the watchdog on the instance.

    gpufleet watchdog HOST arm [--action provider|shutdown|command] [--command CMD]
                               [--idle 15m] [--grace 5m] [--dry-run]
    gpufleet watchdog HOST status | cancel | disarm

Armed, the instance's sampler daemon watches for the idle rule itself (all GPUs under 5 %
utilization and 10 % memory), warns, waits the grace period, then acts once: the
provider's stop with the instance's own scoped key (RunPod, vast.ai), `shutdown -h now`, or
your command. The laptop app then leaves that alert's provider action to it.

Exit codes: 0 done; 1 refused (nothing to cancel) or failed; 2 bad usage; 3 unreachable.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpufleet.cli.errors import EXIT_CONNECT, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import add_live_host_args, resolve_host, unknown_key_callback
from gpufleet.core.config import instance_lock
from gpufleet.core.fleet.demo import DEMO_PREFIX
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.history.timeparse import parse_duration
from gpufleet.core.providers.watchdog import arm_options, describe

_EPILOG = "exit codes: 0 done, 1 refused or failed, 2 bad usage, 3 host unreachable"


_ACTIONS = ("arm", "disarm", "status", "cancel")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "watchdog",
        help="arm, show or cancel the watchdog on an instance (stops the bill while you sleep)",
        description=__doc__.split("\n\n")[2] if __doc__ else None,
        epilog=_EPILOG,
    )
    add_live_host_args(p)
    p.add_argument(
        "cmd", choices=_ACTIONS, metavar="{" + ",".join(_ACTIONS) + "}", help="what to do"
    )
    p.add_argument("--action", choices=("provider", "shutdown", "command"), default="provider")
    p.add_argument("--command", dest="run_command", metavar="CMD", help="for --action command")
    p.add_argument("--idle", default="15m", help="idle this long, then warn (default 15m)")
    p.add_argument("--grace", default="5m", help="then wait this long, then act (default 5m)")
    p.add_argument("--dry-run", action="store_true", help="only record what it would do")
    p.set_defaults(func=run)


def _seconds(text: str, what: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as e:
        raise CliError(f"{what}: {e}", EXIT_USAGE) from None


def run(args: argparse.Namespace) -> int:
    host = resolve_host(args.host)
    options: list[str] = []
    if args.cmd == "arm":
        if args.action == "command" and not args.run_command:
            raise CliError("--action command needs --command CMD", EXIT_USAGE)
        try:
            options = arm_options(
                args.action,
                args.run_command,
                _seconds(args.idle, "--idle"),
                _seconds(args.grace, "--grace"),
                args.dry_run,
            )
        except ValueError as e:
            raise CliError(str(e), EXIT_USAGE) from None
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    try:
        reply = fleet.watchdog(host.name, args.cmd, options)
    except FleetError as e:
        raise CliError(str(e), EXIT_CONNECT if e.kind != "sampler" else EXIT_FAILURE) from None
    finally:
        fleet.stop()
    if host.transport == "local" and reply.get("ok"):
        _demo_daemon_after(fleet, host.name, args.cmd)
    st = reply.get("watchdog") if isinstance(reply.get("watchdog"), dict) else {}
    if not reply.get("ok"):
        raise CliError(f"{host.name}: {reply.get('message', 'refused')}", EXIT_FAILURE)
    print(describe(host.name, st or {}))
    if not reply.get("daemon", True):
        print("  (no sampler daemon runs there now: it takes this up when it starts)")
    return EXIT_OK


def _demo_daemon_after(fleet: Fleet, name: str, cmd: str) -> None:
    """A demo host's daemon that arming started samples on for a day: the user is told,
    and ``disarm`` stops it again unless the window or ``serve`` uses the demo (theirs)."""
    if cmd == "arm":
        print(
            f"gpufleet: {name}: the demo's sampler daemon runs on to watch; "
            f"`gpufleet watchdog {DEMO_PREFIX}{name} disarm` stops it",
            file=sys.stderr,
        )
        return
    if cmd != "disarm":
        return
    try:
        with instance_lock.for_fleet(True, instance_lock.ROLE_SERVE):
            pass  # free: no window or serve runs on the demo, so the daemon is nobody's
    except instance_lock.InstanceBusy:
        return
    problem = fleet.stop_samplers([name]).get(name)
    if problem:
        print(f"gpufleet: could not stop the demo sampler of {name}: {problem}", file=sys.stderr)
