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
import time
from typing import Any

from gpufleet.cli.errors import EXIT_CONNECT, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import resolve_host, unknown_key_callback
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.history.timeparse import parse_duration

_EPILOG = "exit codes: 0 done, 1 refused or failed, 2 bad usage, 3 host unreachable"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "watchdog",
        help="arm, show or cancel the watchdog on an instance (stops the bill while you sleep)",
        description=__doc__.split("\n\n")[2] if __doc__ else None,
        epilog=_EPILOG,
    )
    p.add_argument("host", metavar="HOST")
    p.add_argument("cmd", choices=("arm", "disarm", "status", "cancel"))
    p.add_argument("--action", choices=("provider", "shutdown", "command"), default="provider")
    p.add_argument("--command", dest="run_command", metavar="CMD", help="for --action command")
    p.add_argument("--idle", default="15m", help="idle this long, then warn (default 15m)")
    p.add_argument("--grace", default="5m", help="then wait this long, then act (default 5m)")
    p.add_argument("--dry-run", action="store_true", help="only record what it would do")
    p.add_argument("--accept-new", action="store_true", help="accept an unknown host key")
    p.set_defaults(func=run)


def _seconds(text: str, what: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as e:
        raise CliError(f"{what}: {e}", EXIT_USAGE) from None


def _describe(host: str, st: dict[str, Any]) -> str:
    phase = st.get("phase", "?")
    if not st.get("armed"):
        line = f"{host}: watchdog disarmed"
    else:
        dry = " (dry run)" if st.get("dry_run") else ""
        line = (
            f"{host}: watchdog {phase}{dry}: action {st.get('action')}, idle "
            f"{st.get('idle_s', 0):g} s, grace {st.get('grace_s', 0):g} s"
        )
    if phase == "pending" and st.get("deadline_t"):
        left = float(st["deadline_t"]) - time.time()
        line += f"; acts in {max(0.0, left):.0f} s unless cancelled"
    acted = st.get("acted")
    if isinstance(acted, dict):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(acted.get("t") or 0)))
        line += f"\n  last action {when}: {acted.get('action')}: {acted.get('outcome')}"
    return line


def run(args: argparse.Namespace) -> int:
    host = resolve_host(args.host)
    options: list[str] = []
    if args.cmd == "arm":
        if args.action == "command" and not args.run_command:
            raise CliError("--action command needs --command CMD", EXIT_USAGE)
        options = [
            "--action",
            args.action,
            "--idle-s",
            f"{_seconds(args.idle, '--idle'):g}",
            "--grace-s",
            f"{_seconds(args.grace, '--grace'):g}",
        ]
        if args.run_command:
            options += ["--command", args.run_command]
        if args.dry_run:
            options.append("--dry-run")
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    try:
        reply = fleet.watchdog(host.name, args.cmd, options)
    except FleetError as e:
        raise CliError(str(e), EXIT_CONNECT if e.kind != "sampler" else EXIT_FAILURE) from None
    finally:
        fleet.stop()
    st = reply.get("watchdog") if isinstance(reply.get("watchdog"), dict) else {}
    if not reply.get("ok"):
        raise CliError(f"{host.name}: {reply.get('message', 'refused')}", EXIT_FAILURE)
    print(_describe(host.name, st or {}))
    if not reply.get("daemon", True):
        print("  (no sampler daemon runs there now: it takes this up when it starts)")
    return EXIT_OK
