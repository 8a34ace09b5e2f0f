"""What the card did while it was measured: clocks, power, temperature, clock reasons, PCIe
link, NVLink links, read through pynvml every half second, and summarised per GPU.

Why during the run and not before: an idle card downtrains its PCIe link and drops its
clocks, so only readings under load say whether a low figure came from a power limit, heat
or a link at x8. Also the benchmark's view of the GPUs (``NvmlHost``): inventory and the
processes of others on each GPU (a busy GPU is refused).

Python 3.8, stdlib + pynvml (imported when the host is opened).
"""

import contextlib
import os
import threading
from typing import Any, Callable, Dict, List, Optional

PERIOD_S = 0.5

# Clock-reason bits (nvmlClocksEventReason*), as protocol.reason_labels names them.
POWER_BITS = 0x4 | 0x80  # SW power cap, HW power brake
THERMAL_BITS = 0x20 | 0x40 | 0x8  # SW thermal, HW thermal, HW slowdown
IDLE_BIT = 0x1

SNAPSHOT_KEYS = (
    "sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_gpu_c", "reasons", "pcie_gen",
    "pcie_width", "util_gpu_pct",
)  # fmt: skip


def _median(xs: List[Any]) -> Optional[float]:
    ys = sorted(x for x in xs if x is not None)
    if not ys:
        return None
    mid = len(ys) // 2
    return float(ys[mid]) if len(ys) % 2 else (ys[mid - 1] + ys[mid]) / 2.0


class Telemetry(object):
    """A thread reading ``read(gpu)`` (a dict of SNAPSHOT_KEYS) for each GPU every period."""

    def __init__(
        self,
        gpus: List[int],
        read: Callable[[int], Dict[str, Any]],
        static: Dict[int, Dict[str, Any]],
    ) -> None:
        self._gpus = list(gpus)
        self._read = read
        self._static = static
        self._snaps = {g: [] for g in gpus}  # type: Dict[int, List[Dict[str, Any]]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-telemetry", daemon=True)

    def start(self) -> None:
        if self._gpus:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for g in self._gpus:
                # One failed read loses one point, never the run.
                with contextlib.suppress(Exception):
                    self._snaps[g].append(self._read(g))
            self._stop.wait(PERIOD_S)

    def summary(self, g: int) -> Dict[str, Any]:
        """Medians under load (the samples where the card was not idle), the worst and the
        OR of the reason bits seen, the link as it trained under load."""
        snaps = self._snaps.get(g, [])
        busy = [s for s in snaps if not (s.get("reasons") or 0) & IDLE_BIT] or snaps

        def col(key: str) -> List[Any]:
            return [s.get(key) for s in busy]

        reasons = 0
        counts = {}  # type: Dict[str, int]
        for s in busy:
            r = int(s.get("reasons") or 0)
            reasons |= r
            for name, bits in (("power", POWER_BITS), ("thermal", THERMAL_BITS)):
                if r & bits:
                    counts[name] = counts.get(name, 0) + 1
        out = dict(self._static.get(g, {}))
        out.update(
            samples=len(busy),
            sm_clock_mhz=_median(col("sm_clock_mhz")),
            mem_clock_mhz=_median(col("mem_clock_mhz")),
            power_w=_median(col("power_w")),
            temp_max_c=max([x for x in col("temp_gpu_c") if x is not None], default=None),
            reasons=reasons,
            power_share=round(counts.get("power", 0) / len(busy), 2) if busy else None,
            thermal_share=round(counts.get("thermal", 0) / len(busy), 2) if busy else None,
            pcie_gen=max([x for x in col("pcie_gen") if x is not None], default=None),
            pcie_width=max([x for x in col("pcie_width") if x is not None], default=None),
        )
        return out


def _try(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:
        return None


class NvmlHost(object):
    """The GPUs of a real instance through pynvml."""

    def __init__(self) -> None:
        import pynvml

        self.N = pynvml
        pynvml.nvmlInit()
        self._handles = [
            pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())
        ]
        self._own = {os.getpid(), os.getppid()}

    def _static(self, i: int) -> Dict[str, Any]:
        N, h = self.N, self._handles[i]
        limit = _try(N.nvmlDeviceGetEnforcedPowerLimit, h)
        default = _try(N.nvmlDeviceGetPowerManagementDefaultLimit, h)
        links = 0
        up = 0
        for link in range(18):
            state = _try(N.nvmlDeviceGetNvLinkState, h, link)
            if state is None:
                break
            links += 1
            up += 1 if state else 0
        return {
            "sm_clock_max_mhz": _try(N.nvmlDeviceGetMaxClockInfo, h, N.NVML_CLOCK_SM),
            "mem_clock_max_mhz": _try(N.nvmlDeviceGetMaxClockInfo, h, N.NVML_CLOCK_MEM),
            "power_limit_w": limit / 1000.0 if limit else None,
            "power_default_w": default / 1000.0 if default else None,
            "pcie_max_gen": _try(N.nvmlDeviceGetMaxPcieLinkGeneration, h),
            "pcie_max_width": _try(N.nvmlDeviceGetMaxPcieLinkWidth, h),
            "nvlink_links": links,
            "nvlink_up": up,
        }

    def inventory(self) -> List[Dict[str, Any]]:
        N = self.N
        out = []
        for i, h in enumerate(self._handles):
            mem = _try(N.nvmlDeviceGetMemoryInfo, h)
            name = _try(N.nvmlDeviceGetName, h)
            out.append({
                "index": i,
                "name": name.decode() if isinstance(name, bytes) else name,
                "uuid": _try(N.nvmlDeviceGetUUID, h),
                "mem_total_bytes": int(mem.total) if mem is not None else None,
                "mem_free_bytes": int(mem.free) if mem is not None else None,
            })  # fmt: skip
        return out

    def other_processes(self, i: int) -> List[Dict[str, Any]]:
        """Processes on GPU ``i`` that are not this benchmark (NVML's lists; names from
        /proc where the process is visible here)."""
        from gpufleet_sampler.procs import procfs

        h = self._handles[i]
        seen = {}  # type: Dict[int, Dict[str, Any]]
        for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            for p in _try(getattr(self.N, fn), h) or []:
                pid = int(p.pid)
                if pid in self._own:
                    continue
                mem = getattr(p, "usedGpuMemory", None)
                seen[pid] = {"pid": pid, "name": procfs.proc_name(pid), "mem_bytes": mem}
        return list(seen.values())

    def _read(self, i: int) -> Dict[str, Any]:
        N, h = self.N, self._handles[i]
        power = _try(N.nvmlDeviceGetPowerUsage, h)
        reasons = _try(N.nvmlDeviceGetCurrentClocksEventReasons, h)
        if reasons is None:
            reasons = _try(N.nvmlDeviceGetCurrentClocksThrottleReasons, h)
        util = _try(N.nvmlDeviceGetUtilizationRates, h)
        return {
            "sm_clock_mhz": _try(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM),
            "mem_clock_mhz": _try(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_MEM),
            "power_w": power / 1000.0 if power is not None else None,
            "temp_gpu_c": _try(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
            "reasons": reasons,
            "pcie_gen": _try(N.nvmlDeviceGetCurrPcieLinkGeneration, h),
            "pcie_width": _try(N.nvmlDeviceGetCurrPcieLinkWidth, h),
            "util_gpu_pct": getattr(util, "gpu", None),
        }

    def telemetry(self, gpus: List[int]) -> Telemetry:
        return Telemetry(gpus, self._read, {g: self._static(g) for g in gpus})

    def close(self) -> None:
        _try(self.N.nvmlShutdown)
