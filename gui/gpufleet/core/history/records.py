"""How the store's records become JSON and back: the processes of a snapshot, alerts and
other duck-typed records, and the lenient number coercions of values read from JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import orjson
from gpufleet_sampler import protocol

from gpufleet.core.wire.messages import (
    Proc,
)


def dumps(obj: Any) -> bytes:
    def default(o: Any) -> Any:
        if isinstance(o, Mapping):
            return dict(o)
        if isinstance(o, (set, frozenset, tuple)):
            return list(o)
        if isinstance(o, float | np.floating):
            return float(o)
        return str(o)

    return orjson.dumps(obj, default=default, option=orjson.OPT_SERIALIZE_NUMPY)


def as_dict(obj: Any) -> dict[str, Any]:
    """Duck-typed records (helper dataclasses such as Alert, or plain dicts) as a dict."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return {k: v for k, v in vars(obj).items() if not k.startswith("_")}


def opt_float(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def proc_dict(p: Proc) -> dict[str, Any]:
    return {
        "gpu": p.gpu,
        "pid": p.pid,
        "start_ticks": p.start_ticks,
        "user": p.user,
        "name": p.name,
        "cmd": p.cmd,
        "mem_bytes": p.mem_bytes,
        "sm_pct": p.sm_pct,
        "type": p.type,
        # Only when the sampler told (a container's host PIDs): older rows have none.
        **(
            {
                "host_pid": p.host_pid,
                "mapping": p.mapping,
                "holds_device": p.holds_device,
                "orphan": p.orphan,
            }
            if p.mapping is not None
            else {}
        ),
    }


def proc_from(d: Mapping[str, Any]) -> Proc:
    return Proc(
        gpu=int(d["gpu"]),
        pid=int(d["pid"]),
        start_ticks=d.get("start_ticks"),
        user=d.get("user"),
        name=d.get("name"),
        cmd=d.get("cmd"),
        mem_bytes=d.get("mem_bytes"),
        sm_pct=d.get("sm_pct"),
        type=d.get("type"),
        host_pid=opt_int(d.get("host_pid")),
        mapping=d.get("mapping") if d.get("mapping") in protocol.MAPPINGS else None,
        holds_device=d.get("holds_device") if isinstance(d.get("holds_device"), bool) else None,
        orphan=d.get("orphan") is True,
    )
