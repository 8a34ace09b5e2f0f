"""``stream``: sample and print protocol lines on stdout until stopped or ``--count`` samples.

Ticks are scheduled on absolute deadlines (start + k * interval), so the sampling period does
not drift with the cost of each tick; a tick that falls more than an interval behind skips
the missed deadlines rather than bursting to catch up. ``--no-wait`` (sim only) does not sleep
at all and stamps each tick with simulated times one interval apart, which records an hour of
a scenario in seconds.

Stopping: SIGTERM, SIGINT or a closed pipe end the stream quietly (exit 0); the backend is
closed either way, so simulated processes never outlive the sampler.

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import os
import signal
import sys
import time
from types import FrameType
from typing import Any, Dict, List, Optional

from gpufleet_sampler import protocol
from gpufleet_sampler.backends import make_backend
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.loop import Sampler

EXIT_USAGE = 2
EXIT_BACKEND = 3


class _Stop(Exception):
    """Raised from the signal handler to leave the loop (also out of a sleep)."""


def _on_signal(signum: int, frame: Optional[FrameType]) -> None:
    raise _Stop()


def _say(message: str) -> None:
    sys.stderr.write("gpufleet_sampler: {}\n".format(message))
    sys.stderr.flush()


def _error_line(out: Any, message: str, code: str) -> None:
    """An ``error`` message on the stream, so the laptop sees why there is no data."""
    try:
        msg = {"kind": protocol.KIND_ERROR, "message": message, "code": code}
        out.write((protocol.encode(msg) + "\n").encode("utf-8"))
        out.flush()
    except OSError:
        pass


def validate(args: argparse.Namespace) -> Optional[str]:
    """The reason the arguments cannot work, or None."""
    if getattr(args, "no_wait", False) and args.backend != "sim":
        return (
            "--no-wait works only with --backend sim: real GPUs cannot be sampled faster "
            "than time passes"
        )
    if not args.interval > 0:
        return "--interval must be > 0 seconds (got {})".format(args.interval)
    if args.backend == "nvml" and args.interval < 0.05:
        return "--interval below 0.05 s is not useful with NVML (its counters update slower)"
    count = getattr(args, "count", None)
    if count is not None and count < 0:
        return "--count must be >= 0 (got {})".format(count)
    procs_interval = getattr(args, "procs_interval", 2.0)
    if not procs_interval > 0:
        return "--procs-interval must be > 0 seconds (got {})".format(procs_interval)
    if args.backend != "sim" and args.scenario:
        return "--scenario applies to --backend sim only"
    return None


def open_backend(args: argparse.Namespace, events: bool = True) -> Backend:
    """Build the backend; raises ``ValueError`` / ``RuntimeError`` / ``ImportError`` /
    ``OSError`` with a readable message when it cannot start."""
    return make_backend(
        args.backend,
        scenario=args.scenario,
        seed=args.seed,
        interval=args.interval,
        events=events,
        cpu_budget_pct=getattr(args, "cpu_budget", None),
    )


def backend_error(args: argparse.Namespace, e: BaseException) -> str:
    """One line saying why the backend could not start."""
    if isinstance(e, ImportError) and args.backend == "nvml":
        return "cannot start the nvml backend: the pynvml module is missing ({})".format(e)
    text = str(e) or e.__class__.__name__
    if isinstance(e, ValueError):
        return text
    return "cannot start the {} backend: {}".format(args.backend, text)


def _write(out: Any, msgs: List[Dict[str, Any]]) -> None:
    enc = protocol.encode
    out.write("".join([enc(m) + "\n" for m in msgs]).encode("utf-8"))
    out.flush()


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush does
    not print a BrokenPipeError traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run(args: argparse.Namespace) -> int:
    problem = validate(args)
    if problem is not None:
        _say(problem)
        return EXIT_USAGE
    out = sys.stdout.buffer
    try:
        backend = open_backend(args)
    except Exception as e:  # any backend failure must become one clear line, not a trace
        message = backend_error(args, e)
        _say(message)
        _error_line(out, message, "backend")
        return EXIT_USAGE if isinstance(e, ValueError) else EXIT_BACKEND

    old = {}
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        # ValueError off the main thread: then the caller handles signals.
        with contextlib.suppress(ValueError, OSError):
            old[sig] = signal.signal(sig, _on_signal)
    sampler = Sampler(backend, args.interval, procs_interval=args.procs_interval)
    rc = 0
    try:
        _loop(sampler, out, args.interval, args.count, bool(getattr(args, "no_wait", False)))
    except (_Stop, KeyboardInterrupt):
        pass
    except BrokenPipeError:
        _silence_stdout()
    except Exception as e:  # a backend that breaks mid-run: one clear line, not a trace
        message = "the {} backend failed: {}".format(args.backend, e or e.__class__.__name__)
        _say(message)
        _error_line(out, message, "backend")
        rc = EXIT_BACKEND
    finally:
        # Closing can take a moment (simulated processes); a second signal must not turn
        # it into a traceback.
        for sig in old:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, signal.SIG_IGN)
        try:
            backend.close()
        finally:
            for sig, handler in old.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(sig, handler)
    return rc


def _loop(sampler: Sampler, out: Any, interval: float, count: Optional[int], no_wait: bool) -> None:
    _write(out, [sampler.hello()])
    mono0 = time.monotonic()
    wall0 = time.time()
    k = 0  # deadline index
    n = 0  # samples written
    while count is None or n < count:
        if no_wait:
            # Simulated times one interval apart; multiplication, not accumulation, so that
            # an hour of ticks does not drift by float error.
            mono = mono0 + k * interval
            wall = wall0 + k * interval
        else:
            deadline = mono0 + k * interval
            now = time.monotonic()
            if now < deadline:
                time.sleep(deadline - now)
                now = time.monotonic()
            elif now - deadline > interval:
                # Fell behind (a stalled driver call, a suspended VM): skip to the current
                # deadline rather than emitting a burst of late samples, and count the
                # skipped ticks (each sample says how many so far).
                k_now = int((now - mono0) / interval)
                sampler.skip(k_now - k)
                k = k_now
            mono = now
            wall = time.time()
        _write(out, sampler.step(mono, wall))
        k += 1
        n += 1
