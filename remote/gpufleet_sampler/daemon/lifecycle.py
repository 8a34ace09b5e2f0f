"""Starting and stopping daemons: the ``daemon``, ``attach`` and ``stop`` subcommands, a
detached start in a session of its own, and the reason a start failed.

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from typing import Any, Dict, Optional, Tuple

from gpufleet_sampler import protocol, stream
from gpufleet_sampler.daemon import spawn
from gpufleet_sampler.daemon.client import EXIT_NO_DAEMON, connect, error_line, relay, request
from gpufleet_sampler.daemon.server import EXIT_BACKEND, EXIT_USAGE, say, serve_foreground
from gpufleet_sampler.state_dir import (
    Paths,
    lock_holder,
    paths_for,
)

# How long ``daemon`` / ``attach --start`` wait for a fresh daemon to answer.
START_TIMEOUT_S = 30.0


STOP_TIMEOUT_S = 15.0


LOG_MAX_BYTES = 1 << 20


def _print_json(obj: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _rotate_log(path: str) -> None:
    try:
        if os.path.getsize(path) > LOG_MAX_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass


def start_detached(args: argparse.Namespace, p: Paths) -> Tuple[Optional[Dict[str, Any]], str]:
    """Start a daemon in its own session and wait until it answers.

    Returns (its status, "") or (None, why it did not start)."""
    _rotate_log(p.log)
    try:
        log_start = os.path.getsize(p.log)
    except OSError:
        log_start = 0
    try:
        child = spawn.detached(spawn.daemon_argv(args, p), p.log)
    except OSError as e:
        return None, "cannot run the sampler daemon: {}".format(e)
    deadline = time.monotonic() + START_TIMEOUT_S
    delay = 0.01
    while time.monotonic() < deadline:
        status = request(p, {"op": "status"}, timeout=2.0)
        if status is not None:
            # The child may have lost a start race to another daemon, which answered.
            child.poll()
            return status, ""
        rc = child.poll()
        if rc is not None and rc != 0:
            why = _log_reason(p.log, log_start)
            return None, why or "the daemon exited with status {}".format(rc)
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    return None, "the daemon did not answer within {:.0f} s (see {})".format(START_TIMEOUT_S, p.log)


def _log_reason(path: str, start: int) -> str:
    """Why the daemon just failed: its last complaint in the log since ``start``."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            lines = f.read(65536).decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    prefix = "gpufleet_sampler: "
    said = [x[len(prefix) :] for x in lines if x.startswith(prefix)]
    if said:
        return said[-1]
    return lines[-1] if lines else ""


def _validate(args: argparse.Namespace) -> Optional[str]:

    problem = stream.validate(args)
    if problem is not None:
        return problem
    idle = getattr(args, "idle_exit", None)
    if idle is not None and not idle > 0:
        return "--idle-exit must be > 0 seconds (got {})".format(idle)
    return None


def cmd_daemon(args: argparse.Namespace) -> int:
    problem = _validate(args)
    if problem is not None:
        say(problem)
        return EXIT_USAGE
    p = paths_for(args)
    if args.foreground:
        return serve_foreground(args, p)
    status = request(p, {"op": "status"})
    if status is not None:
        status["status"] = "running"
        _print_json(status)
        return 0
    status, why = start_detached(args, p)
    if status is None:
        say(why)
        return EXIT_BACKEND
    status["status"] = "started"
    _print_json(status)
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    p = paths_for(args)
    reply = request(p, {"op": "stop"})
    pid = lock_holder(p)
    if reply is None and pid is None:
        _print_json({"stopped": False, "message": "no sampler daemon is running for " + p.key})
        return 0
    if reply is None and pid is not None and pid > 0:
        # Holding the lock but not answering: ask it with a signal.
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and lock_holder(p) is not None:
        time.sleep(0.02)
    if lock_holder(p) is not None:
        _print_json({"stopped": False, "pid": pid, "message": "the daemon did not stop"})
        return 1
    out: Dict[str, Any] = {"stopped": True, "pid": (reply or {}).get("pid", pid)}
    if reply is not None:
        out["run_id"] = reply.get("run_id")
    _print_json(out)
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    problem = _validate(args)
    if problem is not None:
        say(problem)
        error_line(problem, "usage")
        return EXIT_USAGE
    p = paths_for(args)
    sock = connect(p)
    if sock is None and args.start:
        status, why = start_detached(args, p)
        if status is None:
            say(why)
            error_line(why, "backend")
            return EXIT_BACKEND
        sock = connect(p)
    if sock is None:
        why = "no sampler daemon is running for {} (use attach --start)".format(p.key)
        say(why)
        error_line(why, "no_daemon")
        return EXIT_NO_DAEMON
    try:
        req: Dict[str, Any] = {"op": "attach", "from_seq": int(args.from_seq)}
        if getattr(args, "run_id", None):
            req["run_id"] = str(args.run_id)
        if getattr(args, "watch_links", None):
            req[protocol.WATCH_LINKS_KEY] = float(args.watch_links)
        sock.sendall((json.dumps(req) + "\n").encode())
        sock.setblocking(False)
        return relay(sock)
    except BrokenPipeError:
        return 0
    finally:
        sock.close()


def run(args: argparse.Namespace) -> int:
    """The ``daemon``, ``attach`` and ``stop`` subcommands."""
    try:
        if args.command == "daemon":
            return cmd_daemon(args)
        if args.command == "attach":
            return cmd_attach(args)
        if args.command == "stop":
            return cmd_stop(args)
    except KeyboardInterrupt:
        return 0
    except OSError as e:
        # A state dir we cannot create or use: one line, not a traceback.
        say("{}: {}".format(e.filename or "state dir", e.strerror or e))
        return EXIT_USAGE
    say("unknown command {!r}".format(args.command))
    return EXIT_USAGE
