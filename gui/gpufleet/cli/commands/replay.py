"""``gpufleet replay FILE.jsonl``: a recorded sampler stream through rules, cost and diagnosis.

    gpufleet replay FILE.jsonl [--format text|json] [--host NAME] [--price-per-hour P]

Any recorded stream works: ``gpufleet_sampler stream`` output, ``gpufleet stream --format
jsonl`` or ``gpufleet export --format jsonl`` (``hello`` first). Time is the stream's own, so
the alerts come out at the times they would have fired live. Bad lines are counted and
reported, never fatal; ``-`` reads standard input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from gpufleet.cli.commands._analysis import (
    Analysis,
    add_cost_args,
    analyse,
    host_config,
    print_json,
    print_text,
)
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, CliError
from gpufleet.core.wire.messages import Message, StreamDecoder, VersionError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay",
        help="run a recorded stream through the alert rules, cost and diagnosis",
        description="Feed a recorded sampler stream (JSON lines, hello first) through the "
        "alert rules, the cost tracker and the diagnosis, and print the alerts with their "
        "times, the cost summary and the diagnosis.",
    )
    p.add_argument("file", metavar="FILE.jsonl", help="the recorded stream ('-' for stdin)")
    p.add_argument(
        "--host",
        metavar="NAME",
        help="the host's name (its config's price, allow-list and rule overrides apply)",
    )
    add_cost_args(p)
    p.set_defaults(func=run)


def _lines(f: IO[bytes], dec: StreamDecoder) -> Iterator[Message]:
    for line in f:
        m = dec.feed(line)
        if m is not None:
            yield m


def run(args: argparse.Namespace) -> int:
    if args.file == "-":
        default = "replay"
        stream: IO[bytes] = sys.stdin.buffer
    else:
        path = Path(args.file)
        default = path.stem
        try:
            stream = path.open("rb")
        except FileNotFoundError:
            raise CliError(f"{path}: no such file", EXIT_NOT_FOUND) from None
        except OSError as e:
            raise CliError(f"{path}: cannot read: {e.strerror}", EXIT_FAILURE) from None
    dec = StreamDecoder()
    try:
        with stream:
            res: Analysis = analyse(host_config(args, default), _lines(stream, dec))
    except VersionError as e:
        raise CliError(f"{args.file}: {e}", EXIT_FAILURE) from None
    res.bad_lines, res.last_error = dec.bad_lines, dec.last_error
    if dec.hello is None:
        raise CliError(
            f"{args.file}: no hello line: not a gpufleet stream "
            f"({dec.bad_lines} bad line(s){': ' + dec.last_error if dec.last_error else ''})",
            EXIT_FAILURE,
        )
    if args.format == "json":
        print_json(res)
    else:
        print_text(res)
    return EXIT_OK
