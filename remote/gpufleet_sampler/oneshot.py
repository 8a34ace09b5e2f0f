"""``info`` and ``check``: one JSON object on stdout, then exit.

``info`` is the inventory (host facts and per-GPU static values, as in ``hello``). ``check``
is the start-of-rental health facts: driver and CUDA versions, and per GPU persistence mode,
P-state, enforced vs default power limit, temperatures vs slowdown, PCIe current vs max
generation and width, ECC counts, remapped rows, retired pages, processes present, reserved
vs total memory, virtualization mode. Facts only: the verdicts (pass / warn / fail and their
sentences) are made on the laptop.

Xids cannot be seen by a one-shot command (they are events, delivered while someone listens):
``xid.seen`` is ``"unknown"`` unless a running daemon of the same identity reports what it
saw, through ``gpufleet_sampler.daemon.client.xid_facts(args)``.

On failure the object is an ``error`` message (``{"kind": "error", ...}``) and the exit code
is non-zero, so the laptop always gets something it can parse.

Python 3.8, stdlib only.
"""

import argparse
import sys
import time
from typing import Any, Dict, List, Optional

from gpufleet_sampler import __version__, protocol, protocol_schema
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.daemon.client import xid_facts
from gpufleet_sampler.loop import host_facts
from gpufleet_sampler.stream import EXIT_BACKEND, EXIT_USAGE, backend_error, open_backend

KIND_INFO = protocol_schema.KIND_INFO
KIND_CHECK = protocol_schema.KIND_CHECK


def _print(obj: Dict[str, Any]) -> None:
    sys.stdout.write(protocol.encode(obj) + "\n")
    sys.stdout.flush()


def _fail(message: str, code: str) -> None:
    sys.stderr.write("gpufleet_sampler: {}\n".format(message))
    sys.stderr.flush()
    _print({"kind": protocol.KIND_ERROR, "message": message, "code": code})


def daemon_xid_facts(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """What a running daemon saw of Xids: ``{"seen": bool, "events": [...], "since": t}``,
    or None when no daemon answers."""
    try:
        facts = xid_facts(args)
    except Exception:  # a broken daemon state must not cost the user the whole check
        return None
    return facts if isinstance(facts, dict) else None


def _header(args: argparse.Namespace, backend_name: str) -> Dict[str, Any]:
    return {
        "protocol": protocol.PROTOCOL_VERSION,
        "sampler_version": __version__,
        "backend": backend_name,
        "scenario": args.scenario if args.backend == "sim" else None,
        "t": round(time.time(), 3),
    }


def _with_host(out: Dict[str, Any], facts: Dict[str, Any]) -> Dict[str, Any]:
    host = host_facts()
    host.update(facts.get("host") or {})
    merged = dict(facts)
    merged["host"] = host
    out.update(merged)
    return out


def _xid(args: argparse.Namespace, gpus: List[Dict[str, Any]]) -> Dict[str, Any]:
    """``check``'s ``xid``: what a running daemon saw (each GPU's ``xid_seen`` set from it),
    or unknown."""
    xid = daemon_xid_facts(args)
    if xid is None:
        return {"seen": "unknown", "source": "none", "events": []}
    events = list(xid.get("events") or [])
    out = {"seen": bool(xid.get("seen")), "source": "daemon", "since": xid.get("since")}
    out["events"] = events
    by_gpu = {}  # type: Dict[Any, bool]
    for ev in events:
        if isinstance(ev, dict):
            by_gpu[ev.get("gpu")] = True
    for g in gpus:
        g["xid_seen"] = by_gpu.get(g.get("index"), False)
    return out


def answer(args: argparse.Namespace, backend: Backend) -> Dict[str, Any]:
    """The ``info`` or ``check`` object of ``backend``, built through the protocol schema."""
    header = _header(args, backend.name)
    if args.command == KIND_INFO:
        return protocol_schema.info(_with_host(header, backend.info()))
    out = _with_host(header, backend.check())
    out["xid"] = _xid(args, out.get("gpus") or [])
    return protocol_schema.check(out)


def run(args: argparse.Namespace) -> int:
    if args.backend != "sim" and args.scenario:
        _fail("--scenario applies to --backend sim only", "usage")
        return EXIT_USAGE
    try:
        # No Xid event thread: a one-shot command cannot see events (``xid`` comes from a
        # running daemon), and stopping the thread cost up to one event wait (0.5 s) at exit.
        backend = open_backend(args, events=False)
    except Exception as e:  # one clear line, never a traceback
        _fail(backend_error(args, e), "backend")
        return EXIT_USAGE if isinstance(e, ValueError) else EXIT_BACKEND
    if args.backend == "sim" and not args.scenario:
        args.scenario = getattr(backend, "scenario", None)
    try:
        out = answer(args, backend)
    except Exception as e:  # the backend failed mid-way: say so as one parseable object
        _fail("{} failed: {}".format(args.command, e or e.__class__.__name__), "backend")
        return EXIT_BACKEND
    finally:
        backend.close()
    _print(out)
    return 0
