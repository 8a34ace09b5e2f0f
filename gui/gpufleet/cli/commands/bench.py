"""``gpufleet bench HOST``: the arrival benchmark: is this the card I paid for?

    gpufleet bench HOST [--gpus 0,1] [--seconds 60] [--format text|json] [--force]

Runs a bounded measurement on the instance (about a minute for 8 GPUs) with what it already
has, and judges each GPU against its datasheet, a good card of its model and the offer's
advertised figures. Exits 1 when a GPU is below par. Ctrl-C cancels: the instance ends the
benchmark's processes. The JSON is a documented interface (docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from gpufleet.cli import argtypes
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, CliError
from gpufleet.cli.hostarg import (
    add_live_host_args,
    exit_code_for,
    hostkey_hint,
    resolve_host,
    unknown_key_callback,
)
from gpufleet.cli.termwrap import say
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.pipeline.bench import run_bench
from gpufleet.core.text.bench import bench_table, progress_line, verdict_line
from gpufleet.core.text.sanitize import clean


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "bench",
        help="measure what the GPUs deliver against their model (about a minute)",
        description="Is this the card I paid for? Measures matmul, memory, PCIe and peer "
        "bandwidth on the instance and judges each GPU against its datasheet, a good card "
        "of its model and the offer's advertised figures. Exits 1 when a GPU is below par.",
    )
    add_live_host_args(p)
    p.add_argument(
        "--gpus",
        type=argtypes.gpu_indices,
        default=None,
        help="comma-separated GPU indices (default: all)",
    )
    p.add_argument(
        "--seconds", type=argtypes.bench_seconds, default=60.0, help="time for the run (default 60)"
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--force", action="store_true", help="also run on GPUs others are using")
    p.set_defaults(func=run)


def run_for_cli(
    fleet: Fleet,
    host: HostConfig,
    text: bool,
    gpus: list[int] | None,
    seconds: float,
    force: bool = False,
) -> dict[str, Any]:
    """One benchmark with its progress (text mode) and side remarks on stderr; also for
    ``check --bench``."""

    def on_message(obj: Mapping[str, Any]) -> None:
        line = progress_line(obj) if text else None
        if line:
            print(line, file=sys.stderr, flush=True)

    def note(msg: str) -> None:
        print(f"gpufleet: {msg}", file=sys.stderr)

    history = paths.history_file(fleet.demo)
    try:
        return run_bench(fleet, host, history, on_message, note, gpus, seconds, force)
    except FleetError as e:
        raise CliError(f"{e}{hostkey_hint(e.kind)}", exit_code_for(e.kind)) from None


def run(args: argparse.Namespace) -> int:
    gpus = args.gpus
    host = resolve_host(args.host)
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    text = args.format == "text"
    result = run_for_cli(fleet, host, text, gpus, args.seconds, args.force)
    if result["status"] not in ("done",) and not any(g["measured"] for g in result["gpus"]):
        # The sampler's own word first ("no GPU [5] here (GPUs: [0, 1])"), escaped.
        why = clean(str(result.get("message") or result.get("reason")))
        raise CliError(f"{host.name}: the benchmark did not run: {why}")
    if text:
        say(verdict_line(result))
        say(bench_table(result))
    else:
        sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return EXIT_FAILURE if result["verdict"] == "below_par" else EXIT_OK
