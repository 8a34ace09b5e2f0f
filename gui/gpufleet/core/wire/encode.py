"""Parsed messages back to protocol objects: ``gpufleet stream --format jsonl`` prints what
the sampler sent (hello first), so that its output can be replayed or fed to other tools.

The round trip keeps every field the parser keeps; ``hello``, ``event`` and ``links`` carry
their raw object and come back unchanged."""

from __future__ import annotations

from typing import Any

import orjson
from gpufleet_sampler import protocol

from gpufleet.core.wire.messages import (
    ErrorMsg,
    Event,
    Hello,
    Links,
    Message,
    Proc,
    Procs,
    Sample,
)


def message_to_obj(msg: Message) -> dict[str, Any]:
    if isinstance(msg, Sample):
        return {
            "kind": protocol.KIND_SAMPLE,
            "seq": msg.seq,
            "t": msg.t,
            "mono": msg.mono,
            "gpus": [list(r) for r in msg.rows],
        }
    if isinstance(msg, Procs):
        return {
            "kind": protocol.KIND_PROCS,
            "seq": msg.seq,
            "t": msg.t,
            "procs": [_proc_obj(p) for p in msg.procs],
        }
    if isinstance(msg, (Hello, Event, ErrorMsg, Links)):
        return dict(msg.raw)
    raise TypeError(f"not a message: {type(msg).__name__}")


def _proc_obj(p: Proc) -> dict[str, Any]:
    obj = {k: getattr(p, k) for k in protocol.PROC_KEYS}
    if p.mapping is not None:
        obj.update({k: getattr(p, k) for k in protocol.PROC_MAP_KEYS})
    return obj


def encode_line(msg: Message) -> bytes:
    """One JSON line with its newline."""
    return orjson.dumps(message_to_obj(msg)) + b"\n"
