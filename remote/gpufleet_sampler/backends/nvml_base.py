"""The state the parts of the NVML backend share (declared here, set by
``NvmlBackend.__init__``) and the guarded NVML calls they all make.

``NvmlBackend`` (nvml.py: the tiers and the per-tick hot path) builds on ``NvmlProcs``
(nvml_procs.py: the processes tier), on ``NvmlPlan`` (nvml_plan.py: the CPU plan), on
``NvmlProbe`` (nvml_probe.py: start-up probing, hello, info, check), on ``NvmlBase``.

Python 3.8, stdlib + pynvml only.
"""

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Tuple

from gpufleet_sampler.backends import nvml_lib as lib
from gpufleet_sampler.backends import nvml_mig
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.backends.nvml_gpu import (
    _G_ALL,
    _cpu,
    _Gpu,
    _Lost,
    _reason,
)
from gpufleet_sampler.procs import holders as gpu_holders
from gpufleet_sampler.procs import procfs


class NvmlBase(Backend):
    """What every part of the NVML backend reads; the hot path defines the stubs below."""

    interval: float
    medium_s: float
    links_interval: float
    slow_s: float
    cpu_budget_pct: float
    _needed: Dict[str, float]
    tiers: Dict[str, float]
    plan_facts: Dict[str, Any]
    _replan: bool
    _cost_scale: float
    # What a peer tool's refresh of these GPUs would cost (% of a core, the plan's timing):
    # what the plan aims below where the budget makes it give something up (nvml_plan).
    peer_pct: Optional[float]
    plan_version: int
    budget_check_s: float
    _measure_from: Optional[float]
    _pool: Optional[ThreadPoolExecutor]
    _workers: int
    _cpus: int
    _pool_all: bool
    _host: Dict[str, Any]
    _gpus: List[_Gpu]
    _where: Dict[str, Any]
    _last_mono: float
    _dev_dir: str
    _nvml_pids: Optional[Dict[str, int]]
    _mig: List[nvml_mig.MigSlice]
    _holders_host_s: float
    _last_scan: Optional[gpu_holders.Scan]
    _next_scan: float
    _proc_cache: procfs.ProcCache
    _scanner: gpu_holders.Scanner
    # Where the reads' CPU time is read (s): this thread's CPU clock unless NvmlBackend is
    # given another (a test gives the fake pynvml's virtual one, so the plan's logic is
    # tested on exact timings whatever the machine).
    _cpu_clock: Callable[[], float] = staticmethod(_cpu)

    def _cpu(self) -> float:
        return self._cpu_clock()

    def _us(self, t0: float) -> float:
        """µs of CPU this thread spent since ``t0`` (a reading of ``_cpu``)."""
        return (self._cpu_clock() - t0) * 1e6

    def _try(self, g: _Gpu, call: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Call once at start-up; on failure record why and return None. GpuIsLost -> _Lost."""
        try:
            return fn(g.h, *args)
        except lib.N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (lib.N.NVMLError, lib.N.NVMLLibraryMismatchError, AttributeError) as e:
            g.probes[call] = _reason(e, call)
            return None

    def _fn(self, name: str) -> Optional[Callable[..., Any]]:
        return getattr(lib.N, name, None)

    def _pick(
        self, g: _Gpu, column: Optional[str], choices: List[Tuple[str, Tuple[Any, ...]]]
    ) -> Tuple[Optional[Callable[..., Any]], Any]:
        """The first call of ``choices`` (name, extra args) that answers; its first value."""
        last = ""
        for name, args in choices:
            fn = self._fn(name)
            if fn is None:
                g.probes[name] = "FunctionNotFound: {} (not in this pynvml)".format(name)
                last = g.probes[name]
                continue
            try:
                v = fn(g.h, *args)
            except lib.N.NVMLError_GpuIsLost:
                raise _Lost() from None
            except (lib.N.NVMLError, lib.N.NVMLLibraryMismatchError) as e:
                g.probes[name] = _reason(e, name)
                last = g.probes[name]
                continue
            return fn, v
        if column:
            g.unsupported[column] = last
        return None, None

    def _call(self, g: _Gpu, name: str, fn: Callable[..., Any], *args: Any) -> Any:
        """A call in the medium/slow tiers: None on error, _Lost when the GPU is lost."""
        try:
            return fn(g.h, *args)
        except lib.N.NVMLError_GpuIsLost:
            raise _Lost() from None
        except (lib.N.NVMLError, lib.N.NVMLLibraryMismatchError, AttributeError) as e:
            if name not in g.probes:
                g.probes[name] = _reason(e, name)
            g.errors[name] = g.errors.get(name, 0) + 1
            return None

    # Parts of the hot path (nvml.py) that probing and the plan call: the start-up timing
    # reads through the same code the ticks run.

    def _row(self, g: _Gpu, mono: float, gpm: bool = True, mask: int = _G_ALL) -> List[Any]:
        raise NotImplementedError

    def _medium(self, g: _Gpu, first: bool = False) -> None:
        raise NotImplementedError

    def _slow(self, g: _Gpu, first: bool = False) -> None:
        raise NotImplementedError

    def _links_read(self, g: _Gpu) -> None:
        raise NotImplementedError

    def _use_gpm_throughput(self, g: _Gpu) -> bool:
        raise NotImplementedError

    def _clamp_schedule(self, g: _Gpu, mono: float) -> None:
        raise NotImplementedError

    def _time_reads(self, g: _Gpu) -> None:
        raise NotImplementedError  # the plan's (nvml_plan.py): probing ends by timing the reads

    def cpu_plan(self) -> Dict[str, Any]:
        raise NotImplementedError  # the plan's (nvml_plan.py), in hello

    def _due(self, mono: float, when: float) -> bool:
        raise NotImplementedError

    def _schedule(self, g: _Gpu, tier: str, mono: float, first: bool = False) -> None:
        raise NotImplementedError

    def _mark_lost(self, g: _Gpu, when: str) -> None:
        raise NotImplementedError

    def tick(self, mono: float) -> List[List[Any]]:
        raise NotImplementedError

    def events(self, mono: float) -> List[Dict[str, Any]]:
        raise NotImplementedError

    def procs(self, mono: float) -> List[Dict[str, Any]]:
        raise NotImplementedError
