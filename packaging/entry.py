"""Entry point of the frozen (PyInstaller) gpufleet bundle.

The bundle's executable is the only program a user may have: there may be no ``python3`` on
the laptop. So besides ``gpufleet ...`` (the CLI and the GUI) it also has to stand in for the
interpreter where the app would otherwise start one:

* the local sampler runs as ``gpufleet _sampler ...`` (see ``gpufleet.cli.commands.
  sampler_entry``; the transport and the sampler daemon pick that form when ``sys.frozen``);
* the simulated workloads of the demo fleet are real child processes started with
  ``executable=sys.executable`` and a label argv such as ``python train.py --lr 3e-4`` (or a
  bare label with the code on stdin). Frozen, ``sys.executable`` is this bundle, so a process
  started with ``GPUFLEET_SIM_PARENT`` in its environment runs that script the way
  ``python`` would instead of parsing it as gpufleet arguments (which would fail, or worse,
  open a window).
"""

from __future__ import annotations

import os
import runpy
import sys


def _run_as_interpreter(argv: list[str]) -> int:
    """``python SCRIPT ARGS`` or ``python < code``: just enough for the sim's child script."""
    if len(argv) > 1 and argv[1].endswith(".py") and os.path.isfile(argv[1]):
        sys.argv = argv[1:]
        runpy.run_path(argv[1], run_name="__main__")
        return 0
    code = sys.stdin.read()
    exec(compile(code, "<stdin>", "exec"), {"__name__": "__main__"})
    return 0


def main() -> int:
    if getattr(sys, "frozen", False) and os.environ.get("GPUFLEET_SIM_PARENT"):
        return _run_as_interpreter(sys.argv)
    from gpufleet.cli.main import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
