"""Command line of the sampler: ``python3 -m gpufleet_sampler`` or ``python3 sampler.pyz``.

Subcommands: stream (sample to stdout), daemon (detached sampler holding a ring), attach (stream
from a running daemon from a sequence number), check / info (one JSON object), bench (the
arrival benchmark), kill (safe kill keyed by pid and start time). Each lives in its own module;
this file only parses arguments.
"""

import argparse
import sys
from typing import List, Optional

from gpufleet_sampler import __version__
from gpufleet_sampler.backends import NAMES as BACKENDS


def _add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=BACKENDS, default="nvml")
    p.add_argument("--scenario", default=None, help="sim scenario name (sim only)")
    p.add_argument("--seed", type=int, default=0, help="sim random seed (sim only)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    p.add_argument(
        "--cpu-budget",
        type=float,
        default=None,
        metavar="PCT",
        help="nvml only: %% of one core per 8 GPUs at 1 Hz the sampler plans to (default 1, "
        "or $GPUFLEET_CPU_BUDGET_PCT)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpufleet_sampler", description="gpufleet's NVML sampler")
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command")
    sub.required = True

    p = sub.add_parser("stream", help="sample and print JSON lines to stdout")
    _add_backend_args(p)
    p.add_argument("--count", type=int, default=None, help="stop after N samples")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="sim only: emit as fast as possible with simulated timestamps",
    )
    p.add_argument("--procs-interval", type=float, default=2.0)

    p = sub.add_parser("daemon", help="start (or find) the detached per-user sampler daemon")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None, help="default ~/.cache/gpufleet")
    p.add_argument(
        "--idle-exit",
        type=float,
        default=24 * 3600.0,
        help="exit after this many seconds with no client attached",
    )
    p.add_argument("--foreground", action="store_true", help="do not detach (tests)")
    p.add_argument("--procs-interval", type=float, default=2.0)

    # Started by a daemon whose watchdog is armed (daemon/keeper.py), not by hand.
    p = sub.add_parser("keeper", help="restart the daemon while its watchdog is armed")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None)
    p.add_argument("--idle-exit", type=float, default=24 * 3600.0)
    p.add_argument("--procs-interval", type=float, default=2.0)

    p = sub.add_parser("attach", help="stream from the running daemon")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None)
    p.add_argument(
        "--from-seq",
        type=int,
        default=0,
        help="send every message after this sequence number, then live",
    )
    p.add_argument(
        "--run-id",
        default=None,
        help="the run the --from-seq number belongs to (from the hello the client had)",
    )
    p.add_argument("--start", action="store_true", help="start the daemon first if none runs")
    p.add_argument(
        "--watch-links",
        type=float,
        default=None,
        metavar="S",
        help="read the per-link NVLink values every 5 s for S seconds (the per-link view is "
        "open); renewed by writing a watch_links request line on stdin",
    )
    # Used only when --start starts the daemon.
    p.add_argument("--idle-exit", type=float, default=24 * 3600.0)
    p.add_argument("--procs-interval", type=float, default=2.0)

    p = sub.add_parser("stop", help="stop the running daemon")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None)

    p = sub.add_parser("watchdog", help="arm, disarm, cancel or show the on-instance watchdog")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None)
    p.add_argument("cmd", choices=("arm", "disarm", "status", "cancel"))
    p.add_argument("--action", choices=("provider", "shutdown", "command"), default=None)
    p.add_argument(
        "--command", dest="run_command", default=None, help="the command of --action command"
    )
    p.add_argument("--idle-s", type=float, default=None, help="idle this long, then warn")
    p.add_argument("--grace-s", type=float, default=None, help="then wait this long, then act")
    p.add_argument("--dry-run", action="store_true", default=None, help="only record")
    p.add_argument("--api-url", default=None, help="the provider's API base URL (tests)")

    p = sub.add_parser("info", help="print the inventory as one JSON object")
    _add_backend_args(p)

    p = sub.add_parser("check", help="print the start-of-rental health facts as JSON")
    _add_backend_args(p)
    p.add_argument("--state-dir", default=None)

    p = sub.add_parser("bench", help="measure what the GPUs deliver (JSON lines; about a minute)")
    _add_backend_args(p)
    from gpufleet_sampler.benchmark import supervisor  # small, stdlib only: argv lives there

    supervisor.add_args(p)

    p = sub.add_parser("kill", help="signal a process only if its start time matches")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument(
        "--start-time",
        type=int,
        required=True,
        help="field 22 of /proc/PID/stat (clock ticks since boot)",
    )
    p.add_argument("--signal", choices=("TERM", "KILL", "INT"), default="TERM")
    p.add_argument("--grace", type=float, default=5.0, help="seconds to wait for the exit")
    p.add_argument("--sudo", action="store_true", help="retry with sudo -n on EPERM")
    p.add_argument(
        "--tree",
        action="store_true",
        help="also signal its descendants and its process group (when it leads it or the "
        "leader is gone)",
    )
    p.add_argument(
        "--watch",
        type=float,
        default=0.0,
        help="then watch NVML up to this many seconds until its GPU memory is freed",
    )

    p = sub.add_parser("exporter", help="serve /metrics to Prometheus (dcgm-exporter's names)")
    _add_backend_args(p)
    p.add_argument(
        "--listen",
        default="127.0.0.1:9400",
        help="HOST:PORT to serve on (default loopback 127.0.0.1:9400; port 0 picks a free one)",
    )
    p.add_argument("--hostname", default=None, help="the Hostname label (default: the host's)")
    p.add_argument("--procs-interval", type=float, default=2.0)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    # Each subcommand imports only its own modules: a ``stream`` or ``daemon`` process lives
    # for days on the instance, and importing every subcommand's code (HTTP server, daemon,
    # simulator) into each of them costs 7-8 MiB of RSS (bench/sampler.py).
    if args.command == "stream":
        from gpufleet_sampler import stream

        return stream.run(args)
    if args.command in ("daemon", "attach", "stop"):
        from gpufleet_sampler.daemon import lifecycle

        return lifecycle.run(args)
    if args.command == "keeper":
        from gpufleet_sampler.daemon import keeper

        return keeper.run(args)
    if args.command in ("info", "check"):
        from gpufleet_sampler import oneshot

        return oneshot.run(args)
    if args.command == "bench":
        from gpufleet_sampler.benchmark import supervisor

        return supervisor.run(args)
    if args.command == "kill":
        from gpufleet_sampler.procs import kill

        return kill.run(args)
    if args.command == "watchdog":
        from gpufleet_sampler.daemon import watchdog_cmd

        return watchdog_cmd.run(args)
    if args.command == "exporter":
        from gpufleet_sampler import exporter

        return exporter.run(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
