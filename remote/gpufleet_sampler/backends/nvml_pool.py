"""GPUs read side by side: how many reader threads a host gets, and which GPUs of a tick go
to them.

NVML is thread-safe and its time is CPU time of the calling thread, spent without the GIL
(ctypes lets go of it for the call). Threads buy wall time only where a call is long enough
to overlap others: each call hands the GIL over twice, and a hand-over between threads costs
a wake-up on another core. Measured through the cost model on 2 cores (8 GPUs, the recorded
H200 call times): reading every GPU on a pool of 8 took 5.6-6.0 ms a steady tick and 7.1 ms
of CPU, one thread 5.2-5.7 ms and 5.3-5.9 ms of CPU; the per-tick calls (5-180 µs each)
gain nothing from threads there and cost a quarter more CPU. What does gain is the long
read of a tier that is due (a 4 ms field read, the per-link counters, the slow tier's
totals): it overlaps the other GPUs' short reads instead of adding to the tick.

So: with more usable cores than reader threads, every GPU of a tick goes to the pool (the
calls of different GPUs overlap on their own cores); otherwise only the GPUs with a long
read due do, and the loop's thread reads the others meanwhile.
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


def pool_size(gpus: int, workers: Optional[int]) -> int:
    """Threads to read ``gpus`` GPUs with: ``workers`` if given, else one per GPU up to
    MAX_WORKERS (not bounded by the cores: which GPUs use them is, see ``every_gpu``)."""
    if workers is not None:
        return max(1, min(int(workers), gpus))
    return max(1, min(gpus, MAX_WORKERS))


def every_gpu(workers: int, cpus: int) -> bool:
    """Whether a tick's every GPU goes to the pool: only where each reader thread and the
    loop's own can run at once."""
    return workers > 1 and cpus > workers


def one_malloc_arena() -> None:
    """Have the reader threads share the main malloc arena (glibc's M_ARENA_MAX = 1): each
    thread would otherwise get one of its own, most of a MiB of RSS apiece, on a machine
    someone pays for. Nothing to do where the C library is not glibc."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-8, 1)  # M_ARENA_MAX (malloc.h); NVML's calls allocate little
