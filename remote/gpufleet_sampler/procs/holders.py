"""Who holds the GPUs here: the processes that have ``/dev/nvidia*`` open, where the sampler
runs (the host's PID namespace or a container's own), and which of NVML's processes are which
of this machine's.

NVML reports PIDs as the host's init PID namespace numbers them; the driver does not translate
them into a container's namespace. Inside a container those numbers name nothing, or an
unrelated process that happens to have the same number. What a container can see for itself is
which of its processes hold a GPU's device file (``/proc/PID/fd/*`` -> ``/dev/nvidia<minor>``,
the minor number from ``nvmlDeviceGetMinorNumber``), their start times and their tree. So:

- in the host's PID namespace NVML's PID is the process (``mapping`` "exact");
- in a container of its own a PID that happens to resolve counts for nothing: NVML's entries
  of each GPU are matched to the holders of that GPU's device (the device files a holder has
  mapped, its CUDA contexts, where it has any: CUDA opens the files of every GPU it may use).
  "exact" where the match is forced (one entry and one holder left on a GPU, repeated across
  GPUs until nothing changes), "probable" where it rests on creation order (host PIDs and the
  container's start times both grow with time), "not_here" for entries left over (another
  tenant, or the host), and "no_memory" for holders with no entry (a dataloader worker that
  inherited the fd, a zombie keeping a context).

The scan reads every process's fd table: it belongs to the process tier (every few seconds),
never to the per-tick path. ``GPUFLEET_DEV_DIR`` names another device directory, for tests that
cannot create real NVIDIA device nodes.

Python 3.8, stdlib only.
"""

import os
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from gpufleet_sampler import protocol
from gpufleet_sampler.procs import procfs

DEV_DIR_ENV = "GPUFLEET_DEV_DIR"
DEFAULT_DEV_DIR = "/dev"
# "host" or "own": says which PID namespace NVML's PIDs are numbered in, instead of finding
# out. For test harnesses whose fake NVML reports the PIDs of the harness's own namespace,
# whatever namespace the test machine itself runs in.
PID_NAMESPACE_ENV = "GPUFLEET_PID_NAMESPACE"

MAP_EXACT = protocol.MAP_EXACT
MAP_PROBABLE = protocol.MAP_PROBABLE
MAP_NOT_HERE = protocol.MAP_NOT_HERE
MAP_NO_MEMORY = protocol.MAP_NO_MEMORY

WHERE_HOST = protocol.WHERE_HOST
WHERE_CONTAINER = protocol.WHERE_CONTAINER
WHERE_CONTAINER_HOST_PIDS = protocol.WHERE_CONTAINER_HOST_PIDS

# cgroup path words that name a container runtime.
_CONTAINER_CGROUP_WORDS = ("docker", "containerd", "kubepods", "lxc", "libpod", "crio", "podman")


def dev_dir() -> str:
    """The directory holding the NVIDIA device files (``/dev`` unless tests say otherwise)."""
    return os.environ.get(DEV_DIR_ENV) or DEFAULT_DEV_DIR


def device_path(minor: int, dev: Optional[str] = None) -> str:
    """The device file of the GPU with this minor number."""
    return "{}/nvidia{}".format((dev or dev_dir()).rstrip("/"), minor)


class Holder(object):
    """One process that has NVIDIA device files open."""

    __slots__ = ("mapped", "minors", "other", "pgid", "pid", "ppid", "start_ticks", "state")

    def __init__(
        self,
        pid: int,
        start_ticks: int,
        ppid: int,
        pgid: int,
        state: str,
        minors: FrozenSet[int],
        other: bool,
        mapped: FrozenSet[int] = frozenset(),
    ) -> None:
        self.pid = pid
        self.start_ticks = start_ticks
        self.ppid = ppid
        self.pgid = pgid
        self.state = state
        # Minor numbers of the /dev/nvidia<N> files it holds.
        self.minors = minors
        # It holds /dev/nvidiactl, /dev/nvidia-uvm or the like (the driver, no GPU in
        # particular).
        self.other = other
        # Minors of the /dev/nvidia<N> files it has mapped into memory: a CUDA context on a
        # GPU maps that GPU's device file, while CUDA opens the files of every GPU it may use.
        self.mapped = mapped

    def gpu_minors(self) -> FrozenSet[int]:
        """The minors of the GPUs it uses: the mapped ones where there are any, else the
        ones it has open."""
        return self.mapped or self.minors


class Scan(object):
    """The result of one scan: holders by pid, and how many fd tables could not be read."""

    __slots__ = ("holders", "processes", "unreadable")

    def __init__(self, holders: Dict[int, Holder], processes: int, unreadable: int) -> None:
        self.holders = holders
        self.processes = processes
        self.unreadable = unreadable


def _pids(proc: str) -> List[int]:
    try:
        names = os.listdir(proc)
    except OSError:
        return []
    return [int(n) for n in names if n.isdigit()]


def stat_tree(pid: int) -> Optional[Tuple[str, int, int, int]]:
    """(state, ppid, pgid, start ticks) from one read of /proc/PID/stat; None if gone."""
    fields = procfs.stat_fields(pid)
    if fields is None or len(fields) < 20:
        return None
    try:
        return fields[0], int(fields[1]), int(fields[2]), int(fields[19])
    except ValueError:
        return None


def _read_fds(fd_dir: str, fds: List[str], prefix: str) -> Tuple[FrozenSet[int], bool]:
    """The minors of the /dev/nvidia<N> files among ``fds``, and whether any other NVIDIA
    device file (nvidiactl, nvidia-uvm) is among them."""
    plen = len(prefix)
    minors: Set[int] = set()
    other = False
    for fd in fds:
        try:
            target = os.readlink(fd_dir + "/" + fd)
        except OSError:
            continue
        if not target.startswith(prefix):
            continue
        rest = target[plen:]
        if rest.isdigit():
            minors.add(int(rest))
        elif rest == "ctl" or rest.startswith("-"):
            other = True
    return frozenset(minors), other


# A process's memory map can be long (a PyTorch job maps thousands of libraries); only its
# device-file lines matter, and they come early enough.
MAPS_MAX_BYTES = 4 << 20


def _read_mapped(pid: int, prefix: str) -> FrozenSet[int]:
    """Minors of the /dev/nvidia<N> files mapped into the process (its /proc/PID/maps)."""
    try:
        with open("{}/{}/maps".format(procfs.PROC, pid), "rb") as f:
            raw = f.read(MAPS_MAX_BYTES)
    except OSError:
        return frozenset()
    want = prefix.encode("utf-8", "replace")
    plen = len(want)
    out: Set[int] = set()
    # Jump from one device-file line to the next: the thousands of others are not split.
    i = raw.find(want)
    while i >= 0:
        end = raw.find(b"\n", i)
        rest = raw[i + plen : end if end >= 0 else len(raw)].strip()
        if rest.isdigit():
            out.add(int(rest))
        i = raw.find(want, i + plen)
    return frozenset(out)


_Known = Tuple[int, int, FrozenSet[int], bool, FrozenSet[int]]


class Scanner(object):
    """Scans every process's fd table for NVIDIA device files, remembering per process what
    it found: a process whose number of open files has not changed since is not read again
    (opening a GPU opens several files at once: nvidiactl, nvidia-uvm, nvidia<N>), except on a
    full pass every ``full_s`` seconds. This keeps a host with thousands of processes cheap."""

    def __init__(self, dev: Optional[str] = None, full_s: float = 30.0) -> None:
        self.prefix = (dev or dev_dir()).rstrip("/") + "/nvidia"
        self.full_s = float(full_s)
        self._next_full = 0.0
        # pid -> (start ticks, number of fds, minors, other, mapped minors)
        self._known: Dict[int, _Known] = {}

    def scan(self, mono: Optional[float] = None) -> Scan:
        """Every process here that holds an NVIDIA device file of the device directory open.

        A process whose fd table cannot be read (another user's, without root) is counted
        in ``unreadable``: it may hold a GPU, we cannot say."""
        full = mono is None or mono >= self._next_full
        if full and mono is not None:
            self._next_full = mono + self.full_s
        proc = procfs.PROC
        holders: Dict[int, Holder] = {}
        pids = _pids(proc)
        known = self._known
        seen: Dict[int, _Known] = {}
        unreadable = 0
        none: FrozenSet[int] = frozenset()
        for pid in pids:
            fd_dir = "{}/{}/fd".format(proc, pid)
            try:
                fds = os.listdir(fd_dir)
            except OSError:
                unreadable += 1
                continue
            old = known.get(pid)
            fresh = True
            if old is not None and not full and old[1] == len(fds):
                fresh = False
                minors, other, mapped = old[2], old[3], old[4]
                st = stat_tree(pid) if (minors or other) else None
                if (minors or other) and (st is None or st[3] != old[0]):
                    fresh = True  # another process under a reused pid: read it afresh
            if fresh:
                minors, other = _read_fds(fd_dir, fds, self.prefix)
                st = stat_tree(pid) if (minors or other) else None
                # A context maps its GPU's device file, and creating one opens files too: the
                # maps of a holder are read again only when its fd count changes (or in full).
                mapped = _read_mapped(pid, self.prefix) if minors and st is not None else none
            # Without a holder's stat, the start ticks are needed only to notice a reused pid
            # on the next pass; a changed fd count does that too.
            ticks = st[3] if st is not None else (old[0] if old is not None else -1)
            seen[pid] = (ticks, len(fds), minors, other, mapped)
            if (minors or other) and st is not None:
                state, ppid, pgid, st_ticks = st
                holders[pid] = Holder(pid, st_ticks, ppid, pgid, state, minors, other, mapped)
        self._known = seen
        return Scan(holders, len(pids), unreadable)


def scan(dev: Optional[str] = None) -> Scan:
    """One full scan (every fd of every process) without memory of earlier ones."""
    return Scanner(dev).scan()


# ---- where the sampler runs ----------------------------------------------------------------


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read(65536).decode("utf-8", "replace")
    except OSError:
        return None


def _hidepid() -> bool:
    """/proc is mounted with hidepid: other users' processes (kthreadd too) are invisible."""
    text = _read_text(procfs.PROC + "/self/mountinfo") or ""
    for line in text.splitlines():
        parts = line.split(" - ")
        if len(parts) == 2 and " /proc " in " " + parts[0] + " " and "hidepid" in parts[1]:
            v = parts[1]
            return "hidepid=0" not in v and "hidepid=off" not in v
    return False


def detect_where() -> Dict[str, Any]:
    """Whether the sampler shares the host's PID namespace, from /proc alone.

    ``where``: "host" (bare metal or a VM: NVML's PIDs are ours), "container" (a container
    with its own PID namespace: NVML's PIDs are the host's and must be matched), or
    "container_host_pids" (a container that shares the host's PID namespace, as with
    ``--pid=host``). ``evidence`` lists what was seen, in words."""
    forced = os.environ.get(PID_NAMESPACE_ENV)
    if forced in ("host", "own"):
        own = forced == "own"
        return {
            "where": WHERE_CONTAINER if own else WHERE_HOST,
            "own_pid_namespace": own,
            "evidence": ["{}={} (set by the test harness)".format(PID_NAMESPACE_ENV, forced)],
        }
    proc = procfs.PROC
    evidence: List[str] = []
    own_ns: Optional[bool] = None
    # The kernel's threads (kthreadd is PID 2, parent 0) are visible in the host's namespace
    # only: a PID namespace of its own holds user processes alone.
    two = stat_tree(2)
    two_comm = procfs.proc_name(2) if two is not None else None
    if two is not None and two_comm == "kthreadd" and two[1] == 0:
        own_ns = False
        evidence.append("kernel threads are visible (kthreadd is PID 2)")
    elif _hidepid() and os.geteuid() != 0:
        evidence.append("/proc hides other users' processes (hidepid): kthreadd cannot be seen")
    else:
        own_ns = True
        evidence.append("no kernel threads are visible (PID 2 is not kthreadd)")
    # Old kernels leak the outer PID of PID 1 through /proc/1/sched.
    sched = (_read_text(proc + "/1/sched") or "").split("\n", 1)[0]
    if "(" in sched and "," in sched:
        try:
            outer = int(sched.rsplit("(", 1)[1].split(",", 1)[0])
        except ValueError:
            outer = 1
        if outer != 1:
            own_ns = True
            evidence.append("/proc/1/sched names PID 1 as {} outside".format(outer))
    pid1 = procfs.proc_name(1)
    if pid1:
        evidence.append("PID 1 is {!r}".format(pid1))
    marker = None
    for path in ("/.dockerenv", "/run/.containerenv"):
        if os.path.exists(path):
            marker = path
            evidence.append("{} exists".format(path))
    cgroup = _read_text(proc + "/1/cgroup") or ""
    runtime = next((w for w in _CONTAINER_CGROUP_WORDS if w in cgroup), None)
    if runtime is not None:
        evidence.append("PID 1's cgroup names {}".format(runtime))
    in_container = marker is not None or runtime is not None
    if own_ns is None:
        # Nothing said which namespace: a container marker is the best guess left.
        own_ns = in_container
    if own_ns:
        where = WHERE_CONTAINER
    elif in_container:
        where = WHERE_CONTAINER_HOST_PIDS
    else:
        where = WHERE_HOST
    return {"where": where, "own_pid_namespace": bool(own_ns), "evidence": evidence}


# ---- matching NVML's entries to the holders here ----------------------------------------------


class Entry(object):
    """One NVML process entry on one GPU: the host PID and what NVML says about it."""

    __slots__ = ("gpu", "host_pid", "kind", "mem", "sm")

    def __init__(
        self, gpu: int, host_pid: int, mem: Optional[int], kind: str, sm: Optional[int]
    ) -> None:
        self.gpu = gpu
        self.host_pid = host_pid
        self.mem = mem
        self.kind = kind
        self.sm = sm


class Row(object):
    """One line of the process table: an entry, a holder, or both."""

    __slots__ = ("entry", "gpu", "host_pid", "mapping", "pid")

    def __init__(
        self,
        gpu: int,
        pid: Optional[int],
        host_pid: Optional[int],
        mapping: str,
        entry: Optional[Entry],
    ) -> None:
        self.gpu = gpu
        # The PID in this namespace (what a kill addresses); None when not here.
        self.pid = pid
        self.host_pid = host_pid
        self.mapping = mapping
        self.entry = entry


def _holder_gpus(h: Holder, gpu_of_minor: Dict[int, int]) -> Set[int]:
    return {gpu_of_minor[m] for m in h.gpu_minors() if m in gpu_of_minor}


# Above this many (entries x holders) the creation-order matching is greedy, not optimal.
_ORDER_DP_MAX = 250000


def _in_order(
    es: List[int], hs: List[int], fits: "Callable[[int, int], bool]"
) -> List[Tuple[int, int]]:
    """The most (entry, holder) pairs that keep both orders (host PIDs ascending, start times
    ascending) and fit: a longest common subsequence. A holder that fits no entry in order is
    left out instead of shifting every pair after it."""
    n, m = len(es), len(hs)
    if n * m > _ORDER_DP_MAX:
        out, j = [], 0
        for p in es:
            while j < m and not fits(p, hs[j]):
                j += 1
            if j < m:
                out.append((p, hs[j]))
                j += 1
        return out
    ok = [[fits(p, q) for q in hs] for p in es]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            v = below[j] if below[j] > row[j + 1] else row[j + 1]
            if ok[i][j] and below[j + 1] + 1 > v:
                v = below[j + 1] + 1
            row[j] = v
    pairs: List[Tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if ok[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((es[i], hs[j]))
            i += 1
            j += 1
        elif best[i + 1][j] == best[i][j]:
            i += 1
        else:
            j += 1
    return pairs


def match(
    entries: Iterable[Entry],
    holders: Dict[int, Holder],
    gpu_of_minor: Dict[int, int],
    own_ns: bool,
) -> List[Row]:
    """The process table: NVML's entries matched to this namespace's holders (see the module
    docstring), plus the holders with no entry (``no_memory``, one row per GPU they hold)."""
    ents = list(entries)
    rows: List[Row] = []
    gpus_of: Dict[int, Set[int]] = {h.pid: _holder_gpus(h, gpu_of_minor) for h in holders.values()}
    if not own_ns:
        # One namespace: NVML's PID is the process.
        seen = set()
        for e in ents:
            rows.append(Row(e.gpu, e.host_pid, e.host_pid, MAP_EXACT, e))
            seen.add(e.host_pid)
        for pid in sorted(holders):
            if pid not in seen:
                for g in sorted(gpus_of[pid]):
                    rows.append(Row(g, pid, None, MAP_NO_MEMORY, None))
        return rows
    # A host PID is one process: on every GPU it shows on, it is the same holder here.
    on_gpus: Dict[int, Set[int]] = {}
    by_gpu: Dict[int, List[Entry]] = {}
    for e in ents:
        on_gpus.setdefault(e.host_pid, set()).add(e.gpu)
        by_gpu.setdefault(e.gpu, []).append(e)
    holders_of: Dict[int, List[int]] = {}
    for pid, gs in gpus_of.items():
        for g in gs:
            holders_of.setdefault(g, []).append(pid)
    host_to_local: Dict[int, int] = {}
    how: Dict[int, str] = {}
    used: Set[int] = set()

    def fits(host_pid: int, local: int) -> bool:
        # A process holds the device of every GPU it has memory on (it may hold more: CUDA
        # opens every device file it is allowed to).
        return on_gpus[host_pid] <= gpus_of[local]

    def left(g: int) -> Tuple[List[int], List[int]]:
        es = sorted({e.host_pid for e in by_gpu.get(g, ()) if e.host_pid not in host_to_local})
        hs = [q for q in holders_of.get(g, ()) if q not in used]
        return es, hs

    gpus = sorted(set(by_gpu) | set(holders_of))
    changed = True
    while changed:
        changed = False
        for g in gpus:
            es, hs = left(g)
            if len(es) == 1 and len(hs) == 1 and fits(es[0], hs[0]):
                host_to_local[es[0]] = hs[0]
                how[es[0]] = MAP_EXACT
                used.add(hs[0])
                changed = True
    # What is left goes by creation order, across all GPUs at once (one job per GPU, each
    # holding every GPU's file, is the common case).
    es = sorted({e.host_pid for e in ents if e.host_pid not in host_to_local})
    hs = [q for q in holders if q not in used and gpus_of[q]]
    if es and hs:
        if len(hs) > len(es):
            # Forked workers inherit their parent's device fds: when the count says so, the
            # processes that own the memory are the ones whose parent holds no such fd (a
            # trainer and its dataloader workers), or else exactly the children (a launcher
            # that opened the device before starting one worker per GPU).
            with_gpu = {q for q in holders if gpus_of[q]}
            roots = [q for q in hs if holders[q].ppid not in with_gpu]
            children = [q for q in hs if holders[q].ppid in with_gpu]
            if len(roots) >= len(es):
                hs = roots
            elif len(children) == len(es):
                hs = children
        hs.sort(key=lambda q: (holders[q].start_ticks, q))
        for p, q in _in_order(es, hs, fits):
            host_to_local[p] = q
            how[p] = MAP_PROBABLE
            used.add(q)
    for e in ents:
        local = host_to_local.get(e.host_pid)
        if local is None:
            rows.append(Row(e.gpu, None, e.host_pid, MAP_NOT_HERE, e))
        else:
            rows.append(Row(e.gpu, local, e.host_pid, how[e.host_pid], e))
    for pid in sorted(holders):
        if pid not in used:
            for g in sorted(gpus_of[pid]):
                rows.append(Row(g, pid, None, MAP_NO_MEMORY, None))
    return rows


def is_orphan(h: Holder, holders: Dict[int, Holder]) -> bool:
    """The holder outlived its job: its process group's leader is gone and it was handed to
    PID 1 (or is a zombie). Dataloader workers left behind by a killed trainer look like this,
    and keep the GPU memory taken until they end."""
    if h.state in ("Z", "X"):
        return True
    if h.pgid == h.pid or h.pid == 1:
        return False
    if h.ppid not in (0, 1):
        return False
    if h.pgid in holders:
        return False
    # A leader that is a zombie has ended; only its parent's wait is missing.
    st = stat_tree(h.pgid)
    return st is None or st[0] in ("Z", "X")


def nvml_pid_verdict(
    entries: Iterable[Entry], holders: Dict[int, Holder], gpu_of_minor: Dict[int, int]
) -> Dict[str, int]:
    """How NVML's PIDs look from here: how many resolve to a process here that holds that
    GPU's device, how many resolve to a process that does not hold it (a number that only
    collides), and how many resolve to nothing. Evidence for ``where``."""
    out = {"entries": 0, "holding": 0, "not_holding": 0, "unresolved": 0}
    for e in entries:
        out["entries"] += 1
        pid = e.host_pid
        h = holders.get(pid)
        if h is not None and e.gpu in _holder_gpus(h, gpu_of_minor):
            out["holding"] += 1
        elif procfs.start_ticks(pid) is not None:
            out["not_holding"] += 1
        else:
            out["unresolved"] += 1
    return out
