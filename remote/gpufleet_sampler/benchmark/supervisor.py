"""The ``bench`` subcommand: runs the measurement in a worker process of its own process group,
and ends that whole group when the laptop cancels, when the time bound passes, or on a signal.

Why a separate worker: a CUDA call in flight cannot be interrupted from Python, and PyTorch
may start helper processes; killing the worker's process group is the one way that leaves
nothing running on the instance. The laptop cancels by closing the SSH channel: with
``--cancel-on-eof`` the end of stdin is the cancel (a one-shot run from a shell passes
no flag and stdin is not watched).

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from gpufleet_sampler.bench_protocol import (
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_TIMEOUT,
    KIND_END,
)

# Beyond --seconds: start-up (importing torch takes 5-20 s on a cold disk), CUDA context
# creation per GPU, and the last measurement's slice running over.
SETUP_GRACE_S = 45.0
KILL_GRACE_S = 3.0

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from gpufleet_sampler.benchmark import worker; sys.exit(worker.main(sys.argv[2]))"
)


def add_args(p: argparse.ArgumentParser) -> None:
    """The subcommand's options (``__main__`` adds the backend ones)."""
    p.add_argument("--gpus", default=None, help="comma-separated GPU indices (default: all)")
    p.add_argument("--seconds", type=float, default=60.0, help="time for the whole run")
    p.add_argument("--force", action="store_true", help="also run on GPUs others are using")
    p.add_argument(
        "--engine",
        choices=("auto", "torch", "cuda", "none"),
        default="auto",
        help="what measures: PyTorch, the CUDA driver library, or auto (torch, else cuda)",
    )
    p.add_argument(
        "--mem-fraction",
        type=float,
        default=0.5,
        help="use at most this share of each GPU's free memory (default 0.5)",
    )
    p.add_argument(
        "--mem-max-gib", type=float, default=8.0, help="and never more than this per GPU"
    )
    p.add_argument("--cancel-on-eof", action="store_true", help="the end of stdin cancels the run")


def package_root() -> str:
    """What goes on the worker's sys.path: the source tree or the zipapp file itself."""
    import gpufleet_sampler

    return os.path.dirname(os.path.dirname(os.path.abspath(gpufleet_sampler.__file__)))


def worker_spec(args: argparse.Namespace) -> Dict[str, Any]:
    gpus: Optional[List[int]] = None
    if args.gpus:
        gpus = [int(x) for x in str(args.gpus).split(",") if x.strip()]
    return {
        "backend": args.backend,
        "scenario": args.scenario,
        "seed": args.seed,
        "gpus": gpus,
        "seconds": float(args.seconds),
        "force": bool(args.force),
        "engine": args.engine,
        "mem_fraction": float(args.mem_fraction),
        "mem_max_bytes": int(args.mem_max_gib * (1 << 30)),
    }


def _emit(obj: Dict[str, Any]) -> None:
    try:
        # A fresh line first: a worker killed mid-line leaves half a line, which the laptop
        # then counts as one bad line instead of spoiling this one.
        sys.stdout.write("\n" + json.dumps(obj, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # the laptop left (a cancel): nobody reads stdout any more


def _watch_stdin(cancel: threading.Event) -> None:
    try:
        while sys.stdin.buffer.readline():
            pass
    except (OSError, ValueError):
        pass
    cancel.set()


def _end_group(pgid: int, proc: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the worker's group, then SIGKILL to whatever of it is left."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if not _group_alive(pgid):
            break
    _reap_group(pgid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _reap_group(pgid: int) -> None:
    """Helpers the worker started (and left) die with it: nothing stays on the instance."""
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def run(args: argparse.Namespace) -> int:
    if args.seconds <= 0 or not 0 < args.mem_fraction <= 0.9:
        _emit({"kind": KIND_END, "status": "error", "message": "--seconds must be > 0 and "
               "--mem-fraction in (0, 0.9]"})  # fmt: skip
        return 2
    started = time.monotonic()
    cancel = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda *_: cancel.set())
    if args.cancel_on_eof:
        threading.Thread(target=_watch_stdin, args=(cancel,), daemon=True).start()
    argv = [sys.executable, "-c", _BOOT, package_root(), json.dumps(worker_spec(args))]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        _emit({"kind": KIND_END, "status": "error", "message": "cannot start: {}".format(e)})
        return EXIT_FAILED
    deadline = started + args.seconds + SETUP_GRACE_S
    status: Optional[str] = None
    while proc.poll() is None:
        if cancel.wait(0.2):
            status = "cancelled"
        elif time.monotonic() > deadline:
            status = "timeout"
        if status is not None:
            _end_group(proc.pid, proc)
            break
    _reap_group(proc.pid)
    elapsed = round(time.monotonic() - started, 2)
    if status == "cancelled":
        _emit({"kind": KIND_END, "status": "cancelled", "elapsed_s": elapsed,
               "message": "cancelled; the benchmark's processes were ended"})  # fmt: skip
        return EXIT_CANCELLED
    if status == "timeout":
        _emit({"kind": KIND_END, "status": "timeout", "elapsed_s": elapsed,
               "message": "did not finish within {:.0f} s; its processes were ended".format(
                   args.seconds + SETUP_GRACE_S)})  # fmt: skip
        return EXIT_TIMEOUT
    rc = proc.returncode
    if rc not in (0, None):
        _emit({"kind": KIND_END, "status": "error", "elapsed_s": elapsed,
               "message": "the benchmark worker died (exit status {})".format(rc)})  # fmt: skip
        return EXIT_FAILED
    return 0
