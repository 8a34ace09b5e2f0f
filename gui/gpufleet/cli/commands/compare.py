"""``gpufleet compare A B``: is B slower than A because of the platform or the job?

    gpufleet compare A B [--format text|json] [--bundle FILE.zip] [--demo]

A (the reference, "yesterday") and B (the run in question) are each a recorded stream file
(``gpufleet stream HOST --format jsonl`` or an export) or a window of the history store,
``HOST:START/DURATION`` (``h100-a:2026-11-30T10:00/2h``, ``h100-a:-1d/2h``), possibly of two
hosts; ``demo:h100-a:-30m/30m`` is a window of a demo host's own history. Prints the
verdict, how much slower B ran by the hardware data, and the causes with A's and B's values
(``core/verdicts/compare``); ``--bundle`` writes the evidence zip.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import no_demo_history_hint, open_history, resolve_host
from gpufleet.core.fleet.demo import DEMO_PREFIX
from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.compare import compare
from gpufleet.core.verdicts.compare.report import as_json, text_lines
from gpufleet.core.verdicts.compare.spec import SpecError, parse_spec, read_window
from gpufleet.core.verdicts.compare_bundle import write_compare_bundle
from gpufleet.core.verdicts.window import RunWindow, WindowError, WindowMissing


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="B slower than A: the platform or the job?",
        description="Compare run B with reference run A (each a stream file or "
        "HOST:START/DURATION of the history, e.g. h100-a:-1d/2h) and say whether B lost "
        "GPU throughput to the card or host (platform) or whether the hardware ran the "
        "same (job), with the causes and their numbers.",
    )
    p.add_argument("a", metavar="A", help="the reference: FILE.jsonl or HOST:START/DURATION")
    p.add_argument("b", metavar="B", help="the run in question, the same forms")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--bundle", metavar="FILE.zip", help="also write the evidence bundle")
    p.add_argument("--demo", action="store_true", help="read the demo fleet's history")
    p.set_defaults(func=run)


class _LazyStore:
    """Opens the history store on first use (two file specs never touch it)."""

    def __init__(self, demo: bool) -> None:
        self.demo = demo
        self.store: Store | None = None

    def __call__(self) -> Store:
        if self.store is None:
            self.store = open_history(self.demo, "give stream files instead")
        return self.store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def demo_spec(text: str) -> tuple[str, bool]:
    """``demo:HOST:START/DURATION`` → (``HOST:START/DURATION`` of the demo host, True): a
    window of the demo's own history; any other spec unchanged."""
    if not text.startswith(DEMO_PREFIX):
        return text, False
    host, sep, tail = text[len(DEMO_PREFIX) :].partition(":")
    if not sep:
        return text, False  # a file that happens to be called demo:something
    return f"{resolve_host(DEMO_PREFIX + host).name}:{tail}", True


def read_windows(spec_a: str, spec_b: str, demo: bool) -> tuple[RunWindow, RunWindow]:
    """Both windows, each a stream file or a window of the history (one "now" for both);
    a ``demo:`` window reads the demo's store whatever ``--demo`` says."""
    now = time.time()
    stores = {demo: _LazyStore(demo), True: _LazyStore(True)}
    try:
        out = []
        for label, given in (("A", spec_a), ("B", spec_b)):
            text, in_demo = demo_spec(given)
            store = stores[in_demo or demo]
            try:
                spec = parse_spec(text, now)
                out.append(read_window(spec, store))
            except SpecError as e:
                raise CliError(f"{label}: {e}", EXIT_USAGE) from None
            except WindowMissing as e:
                hint = "" if isinstance(spec, Path) else no_demo_history_hint(in_demo or demo)
                raise CliError(f"{label}: {e}{hint}", EXIT_NOT_FOUND) from None
            except WindowError as e:  # a file that is no gpufleet stream: as `replay` says
                raise CliError(f"{label}: {e}", EXIT_FAILURE) from None
        return out[0], out[1]
    finally:
        for st in stores.values():
            st.close()


def run(args: argparse.Namespace) -> int:
    a, b = read_windows(args.a, args.b, bool(args.demo))
    result = compare(a, b)
    if args.bundle:
        try:
            write_compare_bundle(Path(args.bundle), a, b, result)
        except OSError as e:
            raise CliError(f"{args.bundle}: cannot write: {e.strerror}", EXIT_FAILURE) from None
    if args.format == "json":
        print(json.dumps(as_json(result), ensure_ascii=False, indent=2))
    else:
        print("\n".join(text_lines(result)))
    return EXIT_OK
