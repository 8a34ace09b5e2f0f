"""The processes on each GPU, as the NVML backend lists them: NVML's compute and graphics
processes with their memory and SM share, matched to this host's /proc (or a container's)
through the holders of the device files, plus the MIG slices' own.

Python 3.8, stdlib + pynvml only.
"""

from typing import Any, Dict, List, Set

from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends import nvml_mig
from gpufleet_sampler.backends.nvml_gpu import (
    _Gpu,
    _gpus_held,
    _Lost,
)
from gpufleet_sampler.backends.nvml_plan import NvmlPlan
from gpufleet_sampler.procs import holders as gpu_holders


class NvmlProcs(NvmlPlan):
    """The processes tier (``procs``)."""

    # ------------------------------------------------------------------ processes

    def procs(self, mono: float) -> List[Dict[str, Any]]:
        """NVML's entries of every GPU, matched to the processes here that hold the GPUs'
        device files (gpu_holders: in a container NVML's PIDs are the host's), plus the
        holders NVML has no entry for."""
        self._last_mono = mono
        entries: List[gpu_holders.Entry] = []
        for g in self._gpus:
            if g.lost:
                continue
            # Per-process utilization (~1.8 ms a call on an H200) on its own tier: in between,
            # each process keeps the SM share last read.
            g.putil_due = self._due(mono, g.next_putil)
            if g.putil_due:
                self._schedule(g, "putil", mono, first=not g.next_putil)
            t0 = self._cpu()
            try:
                entries.extend(self._gpu_entries(g))
            except _Lost:
                self._mark_lost(g, "while listing processes")
            finally:
                g.spent += self._us(t0)
        gpu_of_minor = {g.minor: g.index for g in self._gpus if g.minor is not None}
        # The fd tables of every process: the process tier's extra cost, never per tick.
        own_ns = bool(self._where["own_pid_namespace"])
        found = self._last_scan
        if found is None or own_ns or mono >= self._next_scan:
            found = self._last_scan = self._scanner.scan(mono)
            self._next_scan = mono + self._holders_host_s
        holders = found.holders
        self._nvml_pids = gpu_holders.nvml_pid_verdict(entries, holders, gpu_of_minor)
        # Processes whose fds we may not read (another user's, without root) may hold a GPU
        # unseen: their NVML entries then look "not here".
        self._nvml_pids["unreadable"] = found.unreadable
        rows = gpu_holders.match(entries, holders, gpu_of_minor, own_ns)
        cache = self._proc_cache
        out: List[Dict[str, Any]] = []
        # One process can use several GPUs: read its stat once per snapshot.
        info_seen: Dict[int, Any] = {}
        for r in rows:
            e = r.entry
            st = user = name = cmd = None
            if r.pid is not None:
                info = info_seen.get(r.pid, False)
                if info is False:
                    info = info_seen[r.pid] = cache.lookup(r.pid)
                if info is not None:
                    st, user, name, cmd = info.start_ticks, info.user, info.name, info.cmd
            mapping = r.mapping
            if e is None and st is None:
                continue  # a holder of an earlier scan that has ended since
            if not own_ns and e is not None and st is None:
                # Same namespace and no such process: it has ended (or is hidden from us).
                mapping = gpu_holders.MAP_NOT_HERE
            h = holders.get(r.pid) if r.pid is not None else None
            out.append(
                {
                    "gpu": r.gpu,
                    # The PID here (what kill addresses); NVML's own where it is not here.
                    "pid": r.pid if r.pid is not None else r.host_pid,
                    "start_ticks": st,
                    "user": user,
                    "name": name,
                    "cmd": cmd,
                    "mem_bytes": e.mem if e is not None else None,
                    "sm_pct": e.sm if e is not None else None,
                    "type": e.kind if e is not None else None,
                    "host_pid": r.host_pid,
                    "mapping": mapping,
                    "holds_device": h is not None and r.gpu in _gpus_held(h, gpu_of_minor),
                    "orphan": h is not None and gpu_holders.is_orphan(h, holders),
                }
            )
        if self._mig:
            out = self._with_mig_procs(out, cache, info_seen)
        return out

    def _with_mig_procs(
        self, out: List[Dict[str, Any]], cache: Any, info_seen: Dict[int, Any]
    ) -> List[Dict[str, Any]]:
        """Processes of the MIG slices under the slices' indices; a process the parent GPU
        lists too is shown on its slice only."""

        def lookup(pid: int) -> Any:
            if pid not in info_seen:
                info_seen[pid] = cache.lookup(pid)
            return info_seen[pid]

        on_slice: Dict[int, Set[int]] = {}
        extra: List[Dict[str, Any]] = []
        for s in self._mig:
            mine = nvml_mig.procs(lib.N, s, lookup)
            on_slice.setdefault(s.parent, set()).update(p["pid"] for p in mine)
            extra.extend(mine)
        kept = [p for p in out if p["pid"] not in on_slice.get(p["gpu"], ())]
        return kept + extra

    def _gpu_entries(self, g: _Gpu) -> List[gpu_holders.Entry]:
        by_pid: Dict[int, List[Any]] = {}  # pid -> [mem, type]
        for fn, kind in ((g.f_procs_c, "C"), (g.f_procs_g, "G")):
            if fn is None:
                continue
            plist = self._call(g, getattr(fn, "__name__", "processes"), fn)
            for p in plist or ():
                pid = int(p.pid)
                mem = p.usedGpuMemory
                ent = by_pid.get(pid)
                if ent is None:
                    by_pid[pid] = [mem, kind]
                else:
                    if ent[1] != kind:
                        ent[1] = "C+G"
                    if mem is not None:
                        ent[0] = max(ent[0] or 0, mem)
        sm: Dict[int, int] = {}
        putil_ok = g.f_putil is not None
        if putil_ok and by_pid and not g.putil_due:
            sm = {pid: v for pid, v in g.putil_sm.items() if pid in by_pid}
        elif putil_ok and by_pid:
            try:
                samples = g.f_putil(g.h, g.putil_ts)  # type: ignore[misc]
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except lib.N.NVMLError_NotFound:
                samples = []
            except lib.N.NVMLError as e:
                samples = []
                if getattr(e, "value", None) != lib.N.NVML_SUCCESS:
                    putil_ok = False
                    g.errors["nvmlDeviceGetProcessUtilization"] = (
                        g.errors.get("nvmlDeviceGetProcessUtilization", 0) + 1
                    )
            newest = g.putil_ts
            best: Dict[int, int] = {}
            for s in samples:
                ts = int(s.timeStamp)
                pid = int(s.pid)
                if ts > newest:
                    newest = ts
                # The newest sample of each pid wins: it is what the process does now.
                if ts >= best.get(pid, -1):
                    best[pid] = ts
                    sm[pid] = int(s.smUtil)
            g.putil_ts = newest
            g.putil_sm = sm
        return [
            gpu_holders.Entry(
                g.index,
                pid,
                int(mem) if mem is not None else None,
                kind,
                sm.get(pid, 0) if putil_ok else None,
            )
            for pid, (mem, kind) in sorted(by_pid.items())
        ]
