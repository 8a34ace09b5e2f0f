"""How a detached sampler process is started: the command that runs this same sampler
(module, installed package, zipapp or a frozen laptop bundle), the daemon's options, and a
start in a session of its own with stdio to the daemon's log. Shared by ``daemon`` (its
start), the daemon (its watchdog's keeper) and the keeper (the daemon again).

Python 3.8, stdlib only.
"""

import argparse
import os
import sys
from typing import TYPE_CHECKING, List

import gpufleet_sampler
from gpufleet_sampler.state_dir import Paths

if TYPE_CHECKING:
    import subprocess


def sampler_prefix() -> List[str]:
    """The argv that runs this sampler's CLI."""
    if getattr(sys, "frozen", False):
        # A frozen laptop bundle runs the sampler through itself.
        return [sys.executable, "_sampler"]
    return [sys.executable or "python3", "-m", "gpufleet_sampler"]


def daemon_options(args: argparse.Namespace, p: Paths) -> List[str]:
    """The options that name (and configure) the daemon of ``args`` in ``p``."""
    argv = [
        "--backend",
        args.backend,
        "--seed",
        str(args.seed),
        "--interval",
        repr(float(args.interval)),
        "--state-dir",
        p.dir,
        "--idle-exit",
        repr(float(getattr(args, "idle_exit", 24 * 3600.0))),
        "--procs-interval",
        repr(float(getattr(args, "procs_interval", 2.0))),
    ]
    if args.scenario:
        argv += ["--scenario", args.scenario]
    if getattr(args, "cpu_budget", None) is not None:
        argv += ["--cpu-budget", repr(float(args.cpu_budget))]
    return argv


def daemon_argv(args: argparse.Namespace, p: Paths) -> List[str]:
    """How to run this same sampler as the daemon of ``args``, in the foreground (the caller
    detaches it)."""
    return [*sampler_prefix(), "daemon", "--foreground", *daemon_options(args, p)]


def detached(argv: List[str], log_path: str) -> "subprocess.Popen[bytes]":
    """Start ``argv`` in a new session, cwd /, stdio to ``log_path``; OSError if it cannot."""
    # Imported here: a daemon that watches for days need not carry subprocess for nothing.
    import subprocess

    # The package's parent is a sys.path entry that finds it again: a directory, or the
    # zipapp itself (…/gpufleet-sampler-x.pyz/gpufleet_sampler/__init__.py).
    root = os.path.dirname(os.path.dirname(os.path.abspath(gpufleet_sampler.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            close_fds=True,  # never a lock's fd: a child must not hold its parent's lock
            start_new_session=True,
            cwd="/",
            env=env,
        )
    finally:
        os.close(log)
