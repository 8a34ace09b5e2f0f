"""``gpufleet diagnose HOST --window 30m``: explain a slowdown or a crash from the data.

    gpufleet diagnose HOST [--window 30m] [--until T] [--file FILE.jsonl] [--format text|json]

Reads the history store (``gpufleet.core.history.store``) for the window ending at ``--until``
(default now), or a recorded stream with ``--file`` (then the window ends at the stream's last
sample unless ``--until`` says otherwise). Prints what the rules saw in the window, the cost
of the window, and the diagnosis: clocks vs nominal with the reason, power, temperature,
another process, PCIe, data starvation, and what came before a crash.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpufleet.cli.commands._analysis import (
    add_cost_args,
    analyse,
    host_config,
    print_json,
    print_text,
)
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import history_host, no_demo_history_hint, open_history
from gpufleet.core.history.timeparse import TimeParseError, parse_duration, parse_time
from gpufleet.core.wire.messages import Message, Sample, StreamDecoder, VersionError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diagnose",
        help="explain a slowdown or a crash over a time window",
        description="Explain a slowdown or a crash of HOST from its recorded data: clocks "
        "vs nominal and why, power, temperature, other processes, PCIe, data starvation, "
        "and the memory temperature / ECC / Xid history before a crash.",
    )
    p.add_argument("host", metavar="HOST", help="a host with history, or demo:<name>")
    p.add_argument("--window", default="30m", metavar="D", help="how far back (default 30m)")
    p.add_argument("--until", metavar="T", help="end of the window (default now / end of file)")
    p.add_argument("--file", metavar="FILE.jsonl", help="a recorded stream instead of history")
    p.add_argument("--demo", action="store_true", help="read the demo fleet's history")
    add_cost_args(p)
    p.set_defaults(func=run)


def _times(args: argparse.Namespace) -> tuple[float, float | None]:
    try:
        window = parse_duration(args.window)
        until = parse_time(args.until) if args.until else None
    except TimeParseError as e:
        raise CliError(str(e), EXIT_USAGE) from None
    return window, until


def _from_file(
    path: Path, window: float, until: float | None
) -> tuple[list[Message], int, str | None]:
    dec = StreamDecoder()
    msgs: list[Message] = []
    try:
        with path.open("rb") as f:
            for line in f:
                m = dec.feed(line)
                if m is not None:
                    msgs.append(m)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file", EXIT_NOT_FOUND) from None
    except OSError as e:
        raise CliError(f"{path}: cannot read: {e.strerror}", EXIT_FAILURE) from None
    except VersionError as e:
        raise CliError(f"{path}: {e}", EXIT_FAILURE) from None
    if dec.hello is None:
        raise CliError(f"{path}: no hello line: not a gpufleet stream", EXIT_FAILURE)
    last = max((m.t for m in msgs if isinstance(m, Sample)), default=None)
    if last is None:
        raise CliError(f"{path}: no samples", EXIT_NOT_FOUND)
    t1 = until if until is not None else last
    t0 = t1 - window
    # The whole stream goes through the rules (their for-durations need the run-up); the
    # diagnosis looks at the window.
    keep = [m for m in msgs if getattr(m, "t", t0) <= t1]
    return keep, dec.bad_lines, dec.last_error


def _from_store(host: str, t0: float, t1: float, demo: bool) -> list[Message]:
    store = open_history(demo, "try --file FILE.jsonl")
    try:
        if host not in store.hosts():
            known = ", ".join(store.hosts()) or "none yet"
            raise CliError(
                f"no history for host {host!r} (hosts with history: {known})"
                + no_demo_history_hint(demo),
                EXIT_NOT_FOUND,
            )
        hello = store.hello(host)
        samples: list[Message] = list(store.samples(host, t0, t1))
        if not samples or hello is None:
            raise CliError(
                f"no samples of {host!r} in the window" + no_demo_history_hint(demo),
                EXIT_NOT_FOUND,
            )
        rest: list[Message] = [*store.procs(host, t0, t1), *store.events(host, t0, t1)]
    finally:
        store.close()
    merged = sorted(samples + rest, key=lambda m: getattr(m, "t", 0.0))
    return [hello, *merged]


def run(args: argparse.Namespace) -> int:
    import time

    window, until = _times(args)
    bad, last_error = 0, None
    base = None
    if args.file:
        msgs, bad, last_error = _from_file(Path(args.file), window, until)
        t1 = until if until is not None else max(m.t for m in msgs if isinstance(m, Sample))
    else:
        t1 = until if until is not None else time.time()
        name, demo, demo_cfg = history_host(args.host, bool(args.demo))
        args.host = name
        msgs = _from_store(name, t1 - window, t1, demo)
        base = demo_cfg
    res = analyse(host_config(args, args.host, base), msgs, t1 - window, t1)
    res.bad_lines, res.last_error = bad, last_error
    if args.format == "json":
        print_json(res)
    else:
        print_text(res)
    return EXIT_OK
