"""The hidden ``gpufleet _sampler ...`` entry: the sampler run through the app itself.

A frozen bundle (PyInstaller) may find no python3 on the laptop, so the local transport runs
the sampler as ``<the app's executable> _sampler <sampler argv>``. The subparser is added
without ``help`` so that it stays out of ``gpufleet --help`` (``help=argparse.SUPPRESS`` still
lists it on Python 3.11), and it takes every following argument as it is.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    # prefix_chars that no argument uses: "-x" options pass through to the sampler unparsed.
    p = subparsers.add_parser("_sampler", add_help=False, prefix_chars="\x00")
    p.add_argument("sampler_args", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # The sampler's CLI is loaded only when a frozen bundle runs its own sampler.
    from gpufleet_sampler.__main__ import main

    return main(list(args.sampler_args))
