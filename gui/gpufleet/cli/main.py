"""Entry point of ``gpufleet``: opens the GUI without a subcommand, else runs one.

Subcommands live one per module in ``gpufleet.cli.commands``; each module defines
``register(subparsers)`` that adds its parser and sets ``func`` (taking the parsed args and
returning an exit code). Discovery keeps this file free of per-command edits.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from gpufleet import __version__
from gpufleet.cli import commands
from gpufleet.cli.errors import CliError
from gpufleet.core.text.sanitize import clean_text


class _Parser(argparse.ArgumentParser):
    """argparse lists every subcommand in "invalid choice" errors, the hidden ones too."""

    def error(self, message: str) -> NoReturn:
        super().error(re.sub(r", '_[a-z_]+'", "", message))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpufleet",
        description="Watch every GPU you rent, from your laptop. Without a subcommand, "
        "opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"gpufleet {__version__}")
    parser.add_argument(
        "--demo", action="store_true", help="open the app on the simulated demo fleet"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"gpufleet.cli.commands.{info.name}")
        module.register(sub)
    return parser


# Options whose value is a time or a duration: "-2h" (two hours ago) is a value there, but
# argparse takes anything that starts with "-" and is no negative number for an option.
_TIME_OPTIONS = frozenset({"--since", "--until", "--around", "--window"})
_AGO = re.compile(r"-\d")


def _times_attached(argv: Sequence[str]) -> list[str]:
    """``--since -2h`` as ``--since=-2h``, which argparse reads as the option's value."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":  # what follows is positional: left as it is
            out.extend(argv[i:])
            break
        if a in _TIME_OPTIONS and i + 1 < len(argv) and _AGO.match(argv[i + 1]):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_times_attached(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # paramiko logs tracebacks of routine disconnects; keep them out of the user's terminal.
    logging.getLogger("paramiko").setLevel(logging.CRITICAL if not args.verbose else logging.DEBUG)
    func = getattr(args, "func", None)
    try:
        if func is None:
            # Qt loads only to open the window: the subcommands start without it.
            from gpufleet.ui.app import run_app

            return run_app(demo=args.demo)
        rc: int = func(args) or 0
        return rc
    except CliError as e:
        # Errors quote what hosts said (sampler stderr, bad lines, kill messages): escaped.
        print(f"gpufleet: {clean_text(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `gpufleet ... | head`: the reader left, a normal end. Point stdout at /dev/null so
        # that the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
