"""Do NVML calls from two threads overlap on this driver? Prints JSON.

A device-check helper for the reader pool (remote/gpufleet_sampler/backends/nvml_pool.py):
under the cost model the calls overlap wherever the GIL lets them, but a real driver may
serialise them inside (a lock in the kernel module, one GSP channel per GPU). This times
``--rounds`` rounds of the sampler's per-tick calls on GPU 0 (utilization, three clocks,
temperature, memory, power, GPM sample where there is GPM) from one thread, then the same
number of rounds from each of two threads at once, and the one long call (the per-tick field
read) the same way. ``ratio`` near 1.0: two threads finish in one thread's time (the calls
overlap); near 2.0: the driver runs them one after the other. Each figure also gives the
threads' CPU time (``time.thread_time``), which says whether NVML's time is CPU time there.

Run with ``PYTHONPATH=remote`` on a host with an NVIDIA driver. Stdlib + pynvml only.
"""

import argparse
import json
import threading
import time
from typing import Any, Callable, Dict, List


def _mix(nvml: Any, h: Any, gpm: Any) -> Callable[[], None]:
    """The per-tick calls this GPU answers (one that raises here is left out)."""
    temp = getattr(nvml, "nvmlDeviceGetTemperatureV", None)
    candidates: List[Any] = [
        (nvml.nvmlDeviceGetUtilizationRates, (h,)),
        (nvml.nvmlDeviceGetClockInfo, (h, nvml.NVML_CLOCK_SM)),
        (nvml.nvmlDeviceGetClockInfo, (h, nvml.NVML_CLOCK_MEM)),
        (nvml.nvmlDeviceGetClockInfo, (h, nvml.NVML_CLOCK_GRAPHICS)),
        (temp, (h, nvml.NVML_TEMPERATURE_GPU)) if temp is not None else None,
        (nvml.nvmlDeviceGetTemperature, (h, nvml.NVML_TEMPERATURE_GPU)),
        (nvml.nvmlDeviceGetMemoryInfo, (h,)),
        (nvml.nvmlDeviceGetPowerUsage, (h,)),
        (nvml.nvmlGpmSampleGet, (h, gpm)) if gpm is not None else None,
    ]
    calls = []
    for c in candidates:
        if c is None:
            continue
        try:
            c[0](*c[1])
        except Exception:  # NotSupported, FunctionNotFound: not part of this GPU's tick
            continue
        calls.append(c)

    def once() -> None:
        for fn, a in calls:
            fn(*a)

    return once


def _fields(nvml: Any, h: Any) -> Callable[[], None]:
    ids = [83, 82, 197, 198, 74, 269, 270, 271]  # the per-tick counters on an H200

    def once() -> None:
        nvml.nvmlDeviceGetFieldValues(h, ids)

    return once


def _timed(fn: Callable[[], None], rounds: int, threads: int) -> Dict[str, float]:
    cpu: List[float] = [0.0] * threads

    def run(k: int) -> None:
        c0 = time.thread_time()
        for _ in range(rounds):
            fn()
        cpu[k] = time.thread_time() - c0

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    return {"wall_ms": round(wall * 1e3, 2), "cpu_ms": round(sum(cpu) * 1e3, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    import pynvml as nvml

    nvml.nvmlInit()
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(0)
        gpm = None
        try:
            if nvml.nvmlGpmQueryDeviceSupport(h).isSupportedDevice:
                gpm = nvml.nvmlGpmSampleAlloc()
        except (nvml.NVMLError, AttributeError):
            gpm = None
        out: Dict[str, Any] = {"gpm": gpm is not None, "rounds": args.rounds}
        for name, fn, rounds in (
            ("per_tick_calls", _mix(nvml, h, gpm), args.rounds),
            ("field_read", _fields(nvml, h), max(5, args.rounds // 10)),
        ):
            fn()  # warm: first calls pay one-off costs
            one = _timed(fn, rounds, 1)
            two = _timed(fn, rounds, 2)
            out[name] = {
                "one_thread": one,
                "two_threads": two,
                "ratio": round(two["wall_ms"] / one["wall_ms"], 2) if one["wall_ms"] else None,
            }
        if gpm is not None:
            nvml.nvmlGpmSampleFree(gpm)
    finally:
        nvml.nvmlShutdown()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
