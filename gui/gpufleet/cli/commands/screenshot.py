"""``gpufleet screenshot``: render the main window on each tab to PNG, headless.

With ``--demo`` (the default when no history is given) it first runs every demo scenario's
real sampler loop in-process over ``--minutes`` of simulated time (faster than real time),
feeding the live buffers and the rule engine exactly as the fleet would, then grabs each tab.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from gpufleet.cli import argtypes
from gpufleet.cli.errors import EXIT_USAGE, CliError

# Which demo host each tab shows: the one whose scenario the tab explains best.
TAB_HOST = {
    "overview": "h100-a",
    "clocks": "h100-a",
    "thermal": "4090-x2",
    "memory": "a100-shared",
    "interconnect": "a100-train",
    "cost": "a100-eval",
    "compute": "h100-a",
}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "screenshot",
        help="render the main window on each tab to PNG (headless)",
        description="Render the main window on each tab to PNG files, headless (offscreen).",
    )
    p.add_argument("--demo", action="store_true", help="use the simulated demo fleet (default)")
    p.add_argument("--out", required=True, type=Path, help="directory for the PNG files")
    p.add_argument("--size", default="1600x1000", help="window size WxH (default 1600x1000)")
    p.add_argument(
        "--tab",
        default=None,
        choices=(*TAB_HOST, "bench"),
        metavar="TAB",
        help=f"only this tab ({', '.join(TAB_HOST)}) or the benchmark dialog (bench)",
    )
    p.add_argument(
        "--minutes",
        type=argtypes.non_negative,
        default=30.0,
        help="simulated history before the grab",
    )
    p.add_argument("--theme", choices=("dark", "light"), default="dark")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="render the Compare view of A and B instead (stream files or HOST:START/DURATION)",
    )
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise CliError(f"--size must look like 1600x1000, got {text!r}", EXIT_USAGE) from None
    if not (320 <= w <= 8000 and 240 <= h <= 8000):
        raise CliError(f"--size {text} is out of range (320x240 .. 8000x8000)", EXIT_USAGE)
    return w, h


def _render_compare(out: Path, size: tuple[int, int], args: argparse.Namespace) -> Path:
    # The windows are read as `gpufleet compare` reads them (its errors, its exit codes).
    from gpufleet.cli.commands.compare import read_windows
    from gpufleet.ui.offscreen.compare_shot import render_compare

    a, b = read_windows(args.compare[0], args.compare[1], bool(args.demo))
    return render_compare(out, size, a, b)


def run(args: argparse.Namespace) -> int:
    width, height = _size(args.size)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["GPUFLEET_THEME"] = args.theme
    # Qt is imported after QT_QPA_PLATFORM is set (it reads it as it loads), and only here.
    from gpufleet.ui.app import make_qapp, setup_theme
    from gpufleet.ui.offscreen.screenshots import render_tabs

    out: Path = args.out
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"cannot create {out}: {e}") from None
    t = time.monotonic()
    try:
        theme = setup_theme(make_qapp())  # the app's language and theme, as it would look
        if args.compare:
            files = [_render_compare(out, (width, height), args)]
        elif args.tab == "bench":  # the benchmark dialog on a demo host (runs the benchmark)
            from gpufleet.ui.offscreen.bench_shot import render_bench

            files = [render_bench(out, (width, height))]
        else:
            files = render_tabs(
                out, (width, height), args.tab, args.minutes * 60.0, TAB_HOST, theme
            )
    except ValueError as e:
        raise CliError(str(e), EXIT_USAGE) from None
    for f in files:
        print(f)
    print(f"{len(files)} screenshots in {time.monotonic() - t:.1f} s")
    return 0
