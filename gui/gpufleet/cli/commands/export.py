"""``gpufleet export HOST``: a host's history as CSV or JSONL, or an evidence bundle (zip).

    gpufleet export HOST --since=-30m [--until now] --format csv|jsonl [--out FILE]
    gpufleet export HOST --around 2024-05-01T02:13 [--window 30m] --bundle out.zip

Reads the history store only (no connection to the host). ``--demo`` reads the demo fleet's
store. Every error is one line: unknown host (with the hosts that have history), an empty
window (with the range that has data), bad time syntax.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from gpufleet.cli.errors import EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import history_host, no_demo_history_hint, open_history
from gpufleet.core.history.audit import read_audit
from gpufleet.core.history.export import export_csv, export_jsonl
from gpufleet.core.history.store import Store, StoreError
from gpufleet.core.history.timeparse import TimeParseError, format_utc, parse_duration, parse_time
from gpufleet.core.verdicts.bundle import build_bundle


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="export a host's history (csv, jsonl) or an evidence bundle (zip)",
        description="Export what the history store holds for HOST. Times are ISO 8601 "
        "(local time unless they end in Z or +HH:MM), durations ago (30m, 2h, 1d, or -30m) "
        "or 'now'.",
    )
    p.add_argument("host", metavar="HOST", help="a host with history, or demo:<name>")
    p.add_argument("--since", metavar="T", help="start of the window")
    p.add_argument("--until", metavar="T", default="now", help="end of the window (default now)")
    p.add_argument("--around", metavar="T", help="centre of the window (e.g. a crash time)")
    p.add_argument(
        "--window",
        metavar="D",
        default="30m",
        help="with --around: how far before and after T (default 30m)",
    )
    p.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    p.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    p.add_argument(
        "--bundle", metavar="ZIP", help="write an evidence bundle (csv, plots, events...)"
    )
    p.add_argument(
        "--demo",
        action="store_true",
        default=argparse.SUPPRESS,
        help="read the demo fleet's history",
    )
    p.set_defaults(func=run)


def _window(args: argparse.Namespace) -> tuple[float, float]:
    try:
        if args.around is not None:
            if args.since is not None:
                raise CliError("give either --around or --since, not both", EXIT_USAGE)
            centre = parse_time(args.around)
            half = parse_duration(args.window)
            return centre - half, centre + half
        if args.since is None:
            raise CliError("say which window: --since T [--until T] or --around T", EXIT_USAGE)
        t0, t1 = parse_time(args.since), parse_time(args.until)
    except TimeParseError as e:
        raise CliError(str(e), EXIT_USAGE) from None
    if t1 <= t0:
        raise CliError(
            f"--until ({format_utc(t1)}) is not after --since ({format_utc(t0)})", EXIT_USAGE
        )
    return t0, t1


def _check_host(store: Store, host: str, t0: float, t1: float, demo: bool) -> None:
    hosts = store.hosts()
    if host not in hosts:
        known = ", ".join(hosts) if hosts else "none yet"
        raise CliError(
            f"no history for host {host!r} (hosts with history: {known})"
            + no_demo_history_hint(demo),
            EXIT_NOT_FOUND,
        )
    if next(iter(store.samples(host, t0, t1)), None) is None:
        span = store.time_range(host)
        have = "it has no samples stored"
        if span:
            a, b = format_utc(span[0], "seconds"), format_utc(span[1], "seconds")
            have = f"its history covers {a} to {b}"
        raise CliError(
            f"no samples of {host!r} between {format_utc(t0, 'seconds')} and "
            f"{format_utc(t1, 'seconds')}; {have}" + no_demo_history_hint(demo and not span),
            EXIT_NOT_FOUND,
        )


def _render() -> Any:
    # Imported here: Qt (for the offscreen plots) is heavy, and only the bundle needs it.
    from gpufleet.ui.offscreen.evidence import render_plots

    return render_plots


def _private(path: str) -> int:
    """A file descriptor of ``path`` truncated and private (0600) whatever the umask: an
    export holds the command lines of the host's processes."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def run(args: argparse.Namespace) -> int:
    t0, t1 = _window(args)
    host, demo, _cfg = history_host(args.host, bool(getattr(args, "demo", False)))
    args.host = host
    store = open_history(demo, "`gpufleet stream HOST` or the window records it")
    try:
        _check_host(store, args.host, t0, t1, demo)
        if args.bundle:
            report = build_bundle(
                store,
                args.host,
                t0,
                t1,
                Path(args.bundle),
                render_plots=_render(),
                audit=read_audit(demo=demo),
            )
            if report.plot_error:
                print(f"gpufleet: plots left out: {report.plot_error}", file=sys.stderr)
            print(
                f"wrote {report.path}: {report.rows} GPU-samples, {len(report.parts)} files",
                file=sys.stderr,
            )
            return EXIT_OK
        if args.format == "csv":
            if args.out:
                with open(_private(args.out), "w", encoding="utf-8", newline="") as f:
                    n = export_csv(store, args.host, t0, t1, f)
            else:
                n = export_csv(store, args.host, t0, t1, sys.stdout)
        elif args.out:
            with open(_private(args.out), "wb") as fb:
                n = export_jsonl(store, args.host, t0, t1, fb)
        else:
            n = export_jsonl(store, args.host, t0, t1, sys.stdout.buffer)
            sys.stdout.flush()
        if args.out:
            print(
                f"wrote {args.out}: {n} {'rows' if args.format == 'csv' else 'lines'}",
                file=sys.stderr,
            )
        return EXIT_OK
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        return EXIT_OK
    except OSError as e:
        raise CliError(f"cannot write: {e}") from None
    except StoreError as e:
        raise CliError(str(e), EXIT_NOT_FOUND) from None
    finally:
        store.close()
