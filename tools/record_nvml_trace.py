"""Record what NVML answers on a real GPU host, in the fake pynvml's profile format.

Run on the instance (Python >= 3.8, the NVIDIA driver, nvidia-ml-py's ``pynvml`` importable),
from a checkout (or a copy of ``remote/`` and this file)::

    PYTHONPATH=remote python3 tools/record_nvml_trace.py --seconds 60 --out trace.json

Two phases:

1. measure: the real nvml backend and loop (``gpufleet_sampler.loop.Sampler``) sample at
   ``--interval`` for ``--seconds`` with nothing wrapped; the process's CPU % (utime+stime
   over wall time, event thread included), VmRSS and VmHWM are written under
   ``"measurements"``, with the mean sampler CPU time per tick per GPU.
2. record: the same run again with every pynvml function wrapped; each call's raw result (or
   its error class) is written per GPU, per tick, under the key the fake uses
   (``nvmlDeviceGetClockInfo:1``, ``field:138:4294967295``, ``gpm:2`` ...). Calls made while
   the backend starts go to ``"gpus"`` (constants), calls made in tick k to ``"ticks"[k]``,
   functions the driver lacks to ``"missing"``, events to ``"events"``.

The output drives ``tests/fakes/pynvml.py`` as is (``GPUFLEET_FAKE_NVML=trace.json``): commit
it under ``tests/fixtures/nvml/`` and the test suite replays it.

First run on a real GPU: an H200 with driver 580 (tests/fixtures/nvml/h200x1.json), replayed
by tests/remote/backends/nvml/test_nvml_h200_trace.py. Process ids in a trace are the recording
host's: a replay must map them onto live processes of its own (that test does) or /proc answers for
whatever has that pid there. NaN answers (GPM) are written as the string "NaN".
"""

import argparse
import ctypes
import json
import os
import socket
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

# Results the fake keys under another name than the function that produced them.
_KEY_ALIASES = {
    "nvmlDeviceGetComputeRunningProcesses_v3": "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetComputeRunningProcesses_v2": "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetGraphicsRunningProcesses_v3": "nvmlDeviceGetGraphicsRunningProcesses",
    "nvmlDeviceGetGraphicsRunningProcesses_v2": "nvmlDeviceGetGraphicsRunningProcesses",
    "nvmlDeviceGetTemperatureV1": "nvmlDeviceGetTemperatureV",
}
# Calls whose first argument is not a device handle.
_NO_HANDLE = (
    "nvmlInit",
    "nvmlInitWithFlags",
    "nvmlShutdown",
    "nvmlSystem",
    "nvmlDeviceGetCount",
    "nvmlDeviceGetHandleByIndex",
    "nvmlEventSet",
    "nvmlGpmSampleAlloc",
    "nvmlGpmSampleFree",
    "nvmlGpmMetricsGet",
    "nvmlErrorString",
)


def _status() -> Dict[str, int]:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, rest = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(rest.split()[0]) * 1024
    return out


def _addr(obj: Any) -> Optional[int]:
    try:
        return ctypes.cast(obj, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


def _run(
    seconds: float, interval: float, on_tick: Optional[Callable[[int], None]]
) -> Dict[str, Any]:
    """Sample like ``stream`` does for ``seconds``; returns CPU and memory figures."""
    from gpufleet_sampler import protocol
    from gpufleet_sampler.backends.nvml import NvmlBackend
    from gpufleet_sampler.loop import Sampler

    if on_tick is not None:
        on_tick(-1)
    backend = NvmlBackend(interval=interval)
    try:
        sampler = Sampler(backend, interval=interval, procs_interval=2.0)
        protocol.encode(sampler.hello())
        gpus = len(backend.hello()["gpus"])
        start = time.monotonic()
        c0 = os.times()
        tick_cpu = 0.0
        k = 0
        while True:
            due = start + k * interval
            now = time.monotonic()
            if now - start >= seconds:
                break
            if due > now:
                time.sleep(due - now)
            if on_tick is not None:
                on_tick(k)
            t0 = time.thread_time()
            for m in sampler.step(time.monotonic(), time.time()):
                protocol.encode(m)
            tick_cpu += time.thread_time() - t0
            k += 1
        c1 = os.times()
        wall = time.monotonic() - start
    finally:
        backend.close()
    st = _status()
    cpu = (c1.user - c0.user) + (c1.system - c0.system)
    return {
        "seconds": round(wall, 3),
        "interval_s": interval,
        "ticks": k,
        "gpu_count": gpus,
        "cpu_pct": round(100.0 * cpu / wall, 3) if wall > 0 else None,
        "sampler_us_per_gpu_tick": round(tick_cpu / max(1, k * gpus) * 1e6, 1),
        "rss_mib": round(st.get("VmRSS", 0) / 1048576.0, 2),
        "hwm_mib": round(st.get("VmHWM", 0) / 1048576.0, 2),
    }


class Recorder:
    """Wraps every pynvml function and files each answer where the fake will look for it."""

    def __init__(self, nvml: Any) -> None:
        self.n = nvml
        self.tick = -1
        self.system: Dict[str, Any] = {}
        self.missing: List[str] = []
        self.static: List[Dict[str, Any]] = []
        self.ticks: List[List[Dict[str, Any]]] = []
        self.events: List[Dict[str, Any]] = []
        self.field_types: Dict[str, int] = {}
        self.by_id: Dict[int, int] = {}
        self.by_addr: Dict[int, int] = {}
        self.gpm_gpu: Dict[int, int] = {}
        self._saved: Dict[str, Any] = {}

    def install(self) -> None:
        for name in dir(self.n):
            fn = getattr(self.n, name)
            if name.startswith("nvml") and callable(fn) and not isinstance(fn, type):
                self._saved[name] = fn
                setattr(self.n, name, self._wrap(name, fn))

    def uninstall(self) -> None:
        for name, fn in self._saved.items():
            setattr(self.n, name, fn)

    def on_tick(self, k: int) -> None:
        self.tick = k
        while k >= 0 and len(self.ticks) <= k:
            self.ticks.append([{} for _ in self.static])

    def _gpu(self, h: Any) -> Optional[int]:
        g = self.by_id.get(id(h))
        if g is None:
            a = _addr(h)
            g = self.by_addr.get(a) if a is not None else None
        return g

    def _store(self, gpu: int, key: str, value: Any) -> None:
        while len(self.static) <= gpu:
            self.static.append({})
        if self.tick < 0:
            self.static[gpu][key] = value
        else:
            row = self.ticks[self.tick]
            while len(row) <= gpu:
                row.append({})
            row[gpu][key] = value
            # A key first seen in a tick still needs a start-up value for the fake's probes.
            self.static[gpu].setdefault(key, value)

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        n = self.n

        def call(*args: Any, **kw: Any) -> Any:
            try:
                res = fn(*args, **kw)
            except n.NVMLError as e:
                self._file(name, args, kw, None, e)
                raise
            except n.NVMLLibraryMismatchError:
                raise
            self._file(name, args, kw, res, None)
            return res

        call.__name__ = name
        return call

    def _file(
        self,
        name: str,
        args: Tuple[Any, ...],
        kw: Dict[str, Any],
        res: Any,
        err: Optional[BaseException],
    ) -> None:
        n = self.n
        if err is not None and type(err).__name__ == "NVMLError_FunctionNotFound":
            if name not in self.missing:
                self.missing.append(name)
            return
        if name == "nvmlDeviceGetHandleByIndex" and err is None:
            self.by_id[id(res)] = int(args[0])
            a = _addr(res)
            if a is not None:
                self.by_addr[a] = int(args[0])
            while len(self.static) <= int(args[0]):
                self.static.append({})
            return
        if name.startswith("nvmlSystem"):
            if err is None:
                self.system[name] = res
            return
        if name == "nvmlEventSetWait":  # (its _v2 answers the same wait: not twice)
            g = self._gpu(res.device) if err is None else None
            if g is not None:
                self.events.append(
                    {
                        "gpu": g,
                        "tick": max(0, self.tick),
                        "type": int(res.eventType),
                        "data": int(res.eventData),
                    }
                )
            return
        if name == "nvmlGpmSampleGet" and err is None:
            g = self._gpu(args[0])
            a = _addr(args[1])
            if g is not None and a is not None:
                self.gpm_gpu[a] = g
            return
        if name == "nvmlGpmMetricsGet" and err is None:
            req = args[0]
            g = self.gpm_gpu.get(_addr(req.sample2) or 0)
            if g is not None:
                for i in range(int(req.numMetrics)):
                    m = req.metrics[i]
                    key = f"gpm:{int(m.metricId)}"
                    if int(m.nvmlReturn) == 0:
                        self._store(g, key, float(m.value))
                    else:
                        self._store(g, key, {"error": _errname(n, int(m.nvmlReturn))})
            return
        if name.startswith(_NO_HANDLE) or not args:
            return
        g = self._gpu(args[0])
        if g is None:
            return
        if name == "nvmlGpmQueryDeviceSupport":
            self._store(g, "gpm", bool(err is None and int(res.isSupportedDevice)))
            return
        if name == "nvmlDeviceGetFieldValues":
            if err is not None:
                if type(err).__name__ == "NVMLError_FunctionNotFound":
                    self.missing.append(name)
                return
            for r in res:
                fid, scope = int(r.fieldId), int(r.scopeId)
                key = f"field:{fid}" if scope == 0 else f"field:{fid}:{scope}"
                ret = int(r.nvmlReturn)
                if ret != 0:
                    self._store(g, key, {"error": _errname(n, ret)})
                    continue
                vt = int(r.valueType)
                self.field_types[str(fid)] = vt
                self._store(g, key, {"v": _fv(r), "type": vt})
            return
        key = _KEY_ALIASES.get(name, name)
        rest = list(args[1:])
        if name == "nvmlDeviceGetMemoryInfo":
            version = rest[0] if rest else kw.get("version")
            key = "nvmlDeviceGetMemoryInfo_v2" if version else "nvmlDeviceGetMemoryInfo"
            rest = []
        if name == "nvmlDeviceGetProcessUtilization":
            rest = []  # the last-seen timestamp is the caller's, not part of the answer
        for a in rest:
            key += f":{int(a)}" if isinstance(a, int) else ""
        value = {"error": _errname_exc(err)} if err is not None else _jsonable(res)
        if name == "nvmlDeviceGetProcessUtilization" and isinstance(value, list):
            # The fake stamps samples with its own clock, so replays keep producing new ones.
            for sample in value:
                sample.pop("timeStamp", None)
        self._store(g, key, value)


def _errname(n: Any, code: int) -> str:
    cls = n.NVMLError._valClassMapping.get(code)
    name = getattr(cls, "__name__", "NVMLError_Unknown")
    return name[len("NVMLError_") :] if name.startswith("NVMLError_") else "Unknown"


def _errname_exc(e: BaseException) -> str:
    name = type(e).__name__
    return name[len("NVMLError_") :] if name.startswith("NVMLError_") else "Unknown"


def _fv(r: Any) -> Any:
    t = int(r.valueType)
    v = r.value
    return [v.dVal, v.uiVal, v.ulVal, v.ullVal, v.sllVal, v.siVal, v.usVal][t] if 0 <= t <= 6 else 0


def _jsonable(res: Any) -> Any:
    """A pynvml result as JSON: structs as {field: value}, lists item by item."""
    if res is None or isinstance(res, (bool, int, float, str)):
        return res
    if isinstance(res, bytes):
        return res.decode("utf-8", "replace")
    if isinstance(res, (list, tuple)):
        return [_jsonable(x) for x in res]
    if hasattr(res, "busId"):  # nvmlPciInfo_t: the fake takes the bus id string
        return _jsonable(res.busId)
    fields = getattr(res, "_fields_", None)
    if fields:
        return {f[0]: _jsonable(getattr(res, f[0])) for f in fields if f[0] != "version"}
    if hasattr(res, "__dict__"):  # nvmlFriendlyObject (process lists)
        return {k: _jsonable(v) for k, v in vars(res).items()}
    return str(res)


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN / infinity as the string Python's float() reads back."""
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return "NaN" if obj != obj else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Record NVML's answers in the fake's profile format")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip-measure", action="store_true", help="record only")
    args = ap.parse_args(argv)
    try:
        import pynvml
    except ImportError as e:
        sys.stderr.write(f"record_nvml_trace: pynvml is not importable: {e}\n")
        return 2
    measurements = None
    try:
        if not args.skip_measure:
            measurements = _run(args.seconds, args.interval, None)
        rec = Recorder(pynvml)
        rec.install()
        try:
            _run(args.seconds, args.interval, rec.on_tick)
        finally:
            rec.uninstall()
    except Exception as e:  # one clear line: this runs on someone's rented GPU
        sys.stderr.write(f"record_nvml_trace: {type(e).__name__}: {e}\n")
        return 3
    prof = {
        "format": "gpufleet-nvml-profile",
        "version": 1,
        "description": "Recorded on {} ({} s at {} s) by {}".format(
            socket.gethostname(), args.seconds, args.interval, "tools/record_nvml_trace.py"
        ),
        "source": "recorded",
        "tick_s": args.interval,
        "count": len(rec.static),
        "system": rec.system,
        "missing": sorted(set(rec.missing)),
        "field_types": rec.field_types,
        "defaults": {},
        "gpus": rec.static,
        "ticks": rec.ticks,
        "events": rec.events,
        "inject": [],
        "measurements": measurements,
    }
    with open(args.out, "w") as f:
        # Strict JSON: GPM answers NaN for a metric it has no interval for yet (the H200 did
        # for DRAM bandwidth on its first sample); the fake reads "NaN" back as float("NaN").
        json.dump(_finite(prof), f, separators=(",", ":"), allow_nan=False)
    sys.stdout.write(
        json.dumps(
            {
                "out": args.out,
                "ticks": len(rec.ticks),
                "gpus": len(rec.static),
                "measurements": measurements,
            }
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
