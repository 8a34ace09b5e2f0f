"""MIG slices (Multi-Instance GPU) as GPUs of their own, through NVML's MIG device handles.

A GPU in MIG mode is split into GPU instances; each process sees only its slice, with its own
memory and SMs. Judging a slice's memory against the whole card hides a slice that is about to
run out (10 GB of a 1g.10gb slice used is 12 % of the 80 GB card). So each MIG device of a GPU
in MIG mode becomes one more entry of ``hello["gpus"]`` and one more sample row:

- index ``protocol.mig_index(parent, k)`` (k = the MIG device's index under its parent);
- ``mig``: ``{"parent", "slot", "gpu_instance_id", "compute_instance_id", "profile",
  "sm_count", "sm_share"}`` (SMs of the slice, and their share of the parent's);
- ``nominal.mem_total_bytes`` the slice's own memory; its rows carry ``mem_used_bytes``
  (memory info v2 of the MIG handle), every other column is the parent's and ``null`` here;
- ``procs`` lists each slice's processes under the slice's index.

Probed once at start; memory every tick (one cheap call per slice); processes with the
others. Python 3.8, stdlib + pynvml only.
"""

from typing import Any, Callable, Dict, List, Optional

from gpufleet_sampler import protocol, protocol_schema

# Every column but these is the parent GPU's (clocks, power, temperature...): null on a slice.
_SLICE_COLUMNS = ("mem_used_bytes", "lost")
PER_CARD = "NotSupported: a MIG slice reports memory and processes; this is GPU {parent}'s"


class MigSlice(object):
    """One MIG device: its handle, identity and static facts."""

    __slots__ = ("ci", "gi", "h", "index", "mem_total", "name", "parent", "profile", "slot",
                 "sm_count", "sm_share", "uuid", "v2")  # fmt: skip

    def __init__(self, parent: int, slot: int, h: Any) -> None:
        self.parent = parent
        self.slot = slot
        self.index = protocol.mig_index(parent, slot)
        self.h = h
        self.uuid = ""
        self.name = "MIG"
        self.gi: Optional[int] = None
        self.ci: Optional[int] = None
        self.sm_count: Optional[int] = None
        self.sm_share: Optional[float] = None
        self.mem_total: Optional[int] = None
        self.profile: Optional[str] = None
        self.v2 = True


def _call(N: Any, name: str, *args: Any) -> Any:
    """``N.name(*args)``, or None when it fails or this pynvml lacks it (the fact stays
    unknown; MIG facts are informative, never a reason to stop)."""
    fn = getattr(N, name, None)
    if fn is None:
        return None
    try:
        return fn(*args)
    except Exception:
        return None


def probe(N: Any, parent: int, h: Any) -> List[MigSlice]:
    """The MIG devices of GPU ``parent`` (none when MIG is off or not supported)."""
    mode = _call(N, "nvmlDeviceGetMigMode", h)
    if not mode or int(mode[0]) != 1:
        return []
    count = _call(N, "nvmlDeviceGetMaxMigDeviceCount", h)
    if not count:
        return []
    attrs = _call(N, "nvmlDeviceGetAttributes_v2", h)
    parent_sms = int(attrs.multiprocessorCount) if attrs is not None else None
    out: List[MigSlice] = []
    for k in range(int(count)):
        mh = _call(N, "nvmlDeviceGetMigDeviceHandleByIndex", h, k)
        if mh is None:
            continue  # NotFound: that slot holds no MIG device
        s = MigSlice(parent, len(out), mh)
        s.uuid = str(_call(N, "nvmlDeviceGetUUID", mh) or "")
        s.name = str(_call(N, "nvmlDeviceGetName", mh) or "MIG")
        # "NVIDIA H100 80GB HBM3 MIG 1g.10gb": the profile is the last word.
        s.profile = s.name.rsplit(" ", 1)[-1] if " MIG " in s.name else None
        s.gi = _call(N, "nvmlDeviceGetGpuInstanceId", mh)
        s.ci = _call(N, "nvmlDeviceGetComputeInstanceId", mh)
        a = _call(N, "nvmlDeviceGetAttributes_v2", mh)
        if a is not None:
            s.sm_count = int(a.multiprocessorCount)
            if parent_sms:
                s.sm_share = round(s.sm_count / float(parent_sms), 4)
        mem = _call(N, "nvmlDeviceGetMemoryInfo", mh, getattr(N, "nvmlMemory_v2", None))
        if mem is None:
            s.v2 = False
            mem = _call(N, "nvmlDeviceGetMemoryInfo", mh)
        if mem is not None:
            s.mem_total = int(mem.total)
        out.append(s)
    return out


def hello(s: MigSlice, parent_hello: Dict[str, Any]) -> Dict[str, Any]:
    """The slice's entry of ``hello["gpus"]``."""
    why = PER_CARD.format(parent=s.parent)
    entry = {
        "index": s.index,
        "uuid": s.uuid,
        "name": s.name,
        "pci_bus_id": parent_hello.get("pci_bus_id") or "",
        "nominal": {"mem_total_bytes": s.mem_total},
        "unsupported": {c: why for c in protocol.COLUMN_NAMES if c not in _SLICE_COLUMNS},
        "mig": {
            "parent": s.parent,
            "slot": s.slot,
            "gpu_instance_id": s.gi,
            "compute_instance_id": s.ci,
            "profile": s.profile,
            "sm_count": s.sm_count,
            "sm_share": s.sm_share,
        },
        protocol.LINKS_UNSUPPORTED_KEY: "NotSupported: NVLink belongs to the parent GPU",
    }
    return protocol_schema.hello_slice(entry)


def row(N: Any, s: MigSlice) -> List[Any]:
    """The slice's sample row: its memory used; the rest null (the parent's)."""
    out: List[Any] = [s.index] + [None] * len(protocol.COLUMN_NAMES)
    try:
        mem = (
            N.nvmlDeviceGetMemoryInfo(s.h, N.nvmlMemory_v2)
            if s.v2
            else (N.nvmlDeviceGetMemoryInfo(s.h))
        )
        out[protocol.ROW_POS["mem_used_bytes"]] = int(mem.used)
        out[protocol.ROW_POS["lost"]] = 0
    except N.NVMLError_GpuIsLost:
        out[protocol.ROW_POS["lost"]] = 1
    except N.NVMLError:
        out[protocol.ROW_POS["lost"]] = 0
    return out


def pids(N: Any, s: MigSlice) -> Dict[int, Optional[int]]:
    """pid -> memory used, of the compute processes on this slice."""
    out: Dict[int, Optional[int]] = {}
    for name in (
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2",
        "nvmlDeviceGetComputeRunningProcesses",
    ):
        fn = getattr(N, name, None)
        if fn is None:
            continue
        try:
            plist = fn(s.h)
        except Exception:  # an older variant answers, or none does
            continue
        for p in plist or ():
            mem = p.usedGpuMemory
            out[int(p.pid)] = int(mem) if mem is not None else None
        return out
    return out


def procs(N: Any, s: MigSlice, lookup: Callable[[int], Any]) -> List[Dict[str, Any]]:
    """The slice's ``procs`` entries; ``lookup(pid)`` gives the /proc facts (or None)."""
    out: List[Dict[str, Any]] = []
    for pid, mem in sorted(pids(N, s).items()):
        info = lookup(pid)
        out.append(
            {
                "gpu": s.index,
                "pid": pid,
                "start_ticks": info.start_ticks if info is not None else None,
                "user": info.user if info is not None else None,
                "name": info.name if info is not None else None,
                "cmd": info.cmd if info is not None else None,
                "mem_bytes": mem,
                "sm_pct": None,  # per-process utilization is not reported inside MIG
                "type": "C",
            }
        )
    return out
