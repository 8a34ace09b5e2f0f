"""GPUs read side by side: how many reader threads a host gets, and which GPUs of a tick go
to them.

NVML is thread-safe and its time is CPU time of the calling thread, spent without the GIL
(ctypes lets go of it for the call). Threads buy wall time only where a call is long enough
to overlap others: each call hands the GIL over twice, and a hand-over between threads costs
a wake-up on another core. Measured through the cost model on 2 cores under the recorded
H200 call times (``bench/sampler.py --only scaling``, docs/benchmarks.md): the per-tick calls
(5-180 µs each) gain nothing from threads, not even 2 GPUs on 2 threads on 2 cores (2.1x one
GPU's tick, against 1.9x read by one thread), and every GPU on a pool costs 15-20 % more CPU
(8 GPUs: 10.6x one GPU's median tick, one thread 8.3x). What does gain is the long read of a
tier that is due (a 4 ms field read, the per-link counters, the slow tier's totals): on the
pool it overlaps the other GPUs' short reads instead of adding to the tick (8 GPUs: mean
tick 7.2 ms, p99 20 ms, against one thread's 8.0 and 23.5 ms).

So only the GPUs with a long read due go to the pool, and the loop's thread reads the others
meanwhile; ``every GPU`` stays a choice (``NvmlBackend(pool_every=True)``) for a machine where
it measures better.
"""

import ctypes
import os
from typing import Optional

# GPUs read side by side: at most this many threads.
MAX_WORKERS = 8
# A GPU's tick whose due tiers add at least this much to its per-tick calls (µs of CPU, from
# the start-up timing) is long enough to be worth a thread of its own.
LONG_READ_US = 300.0


def usable_cpus() -> int:
    """The cores this process may run on: its CPU affinity, bounded by a container's CPU
    quota (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``): rented instances are often
    containers that see the host's 128 cores and may use 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = cgroup_quota()
    if quota is not None:
        n = min(n, max(1, int(quota + 0.999)))
    return max(1, n)


def cgroup_quota(root: str = "/sys/fs/cgroup") -> Optional[float]:
    """The CPU quota in cores, None where none is set or none can be read."""
    try:
        with open(os.path.join(root, "cpu.max")) as f:
            parts = f.read().split()
        if len(parts) == 2 and parts[0] != "max":
            return float(parts[0]) / float(parts[1])
        return None
    except (OSError, ValueError, ZeroDivisionError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us")) as f:
            quota = float(f.read().strip())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us")) as f:
            period = float(f.read().strip())
        return quota / period if quota > 0 and period > 0 else None
    except (OSError, ValueError):
        return None


def pool_size(gpus: int, workers: Optional[int], cpus: Optional[int] = None) -> int:
    """Threads to read ``gpus`` GPUs with: ``workers`` if given, else one per GPU up to
    MAX_WORKERS and the usable cores (a long read is CPU work: more of them at once than
    cores run no faster)."""
    if workers is not None:
        return max(1, min(int(workers), gpus))
    return max(1, min(gpus, MAX_WORKERS, cpus if cpus is not None else usable_cpus()))


def one_malloc_arena() -> None:
    """Have the reader threads share the main malloc arena (glibc's M_ARENA_MAX = 1): each
    thread would otherwise get one of its own, most of a MiB of RSS apiece, on a machine
    someone pays for. Nothing to do where the C library is not glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-8, 1)  # M_ARENA_MAX (malloc.h); NVML's calls allocate little
