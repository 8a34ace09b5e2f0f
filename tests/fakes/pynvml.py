"""A fake ``pynvml`` for tests and benchmarks: the real module's names, structs, constants and
error classes, answered from a JSON profile instead of a GPU.

How it is built: the real ``pynvml.py`` of the installed nvidia-ml-py is executed into this
module's namespace (so every constant, ctypes struct, ``NVMLError`` subclass and helper is the
real one, created the way the real module creates them), then the functions that would call
into ``libnvidia-ml.so`` are replaced by Python that reads the profile. A function the fake does
not implement fails as the real one does on a driver that lacks the symbol:
``NVMLError_FunctionNotFound`` (from ``_nvmlGetFunctionPointer``).

Use it by putting ``tests/fakes`` first on ``sys.path`` / ``PYTHONPATH`` (subprocesses) with
``GPUFLEET_FAKE_NVML=<profile.json>``, or in-process through ``tests/support/nvml_fake.py``.
Calls answer instantly: benchmarks through it measure the sampler's own Python work.

Profile format (``tests/fixtures/nvml/README.md`` has the full description):
``{"format": "gpufleet-nvml-profile", "version": 1, "tick_s": 1.0, "count": N,
"system": {call: value}, "missing": [function names], "field_types": {id: valueType},
"defaults": {key: spec}, "gpus": [{key: spec}, ...], "events": [...], "inject": [...],
"ticks": [[{key: raw value} per GPU] per tick]}``. Keys are the pynvml function name plus its
arguments after the handle, colon-separated (``nvmlDeviceGetClockInfo:1``), ``field:ID`` or
``field:ID:SCOPE`` for field values and ``gpm:ID`` for GPM metrics. A key a GPU lacks raises
``NVMLError_NotSupported``. A spec is a plain value, ``{"error": "NoPermission"}``,
``{"seq": [...]}`` (one per tick, cycled), ``{"ramp": [start, per_second], "mod": M}``
(a counter; ``mod`` makes it wrap), ``{"wave": [mean, amplitude, period_ticks]}``, or a list /
object of specs. Strings may use ``{i}`` for the GPU index; pid ``"$self"`` is this process.

The cost model (off unless asked; ``pynvml_cost.py`` beside this file): with
``GPUFLEET_FAKE_NVML_COST=h200`` (or ``_fake.set_cost("h200")``) every call the fake answers
costs the CPU time the recorded H200 run gave that pynvml function. With
``_fake.virtual_cpu`` on, a charge burns nothing: it advances this
thread's virtual CPU clock (``_fake.cpu_clock``) instead, which a test hands the backend as
its CPU clock, so the plan is made from exact timings whatever the machine's speed or load.

The fake clock: ``now()`` is seconds since load (or the time set with ``_fake.set_time``);
tick = ``int(now / tick_s)``. NVML timestamps (field values, process-utilization samples) are
the start of the current tick in *profile* time: tick × the profile's own ``tick_s``, in µs.
A ramp grows by ``per_second`` per second of that same time, so counter rates computed by the
sampler equal a ramp's ``per_second`` exactly, and a recorded trace replayed faster
(``GPUFLEET_FAKE_NVML_TICK_S`` < its ``tick_s``) still gives the rates it was recorded with. A
second read within one tick gets the same value and timestamp (a cached answer), as NVML
serves one between its own updates.
"""

import ctypes
import importlib.machinery
import json
import math
import os
import struct as _struct
import sys
import threading
import time
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

_HERE = os.path.dirname(os.path.abspath(__file__))
_ABSENT = object()


def _find_real_source() -> str:
    paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("pynvml", paths)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ImportError("the fake pynvml needs the real nvidia-ml-py installed beside it")
    return spec.origin


REAL_PYNVML_PATH = _find_real_source()
# Through the loader, so the real module's cached bytecode is used: compiling 8000 lines
# from source would cost ~15 MiB of RSS that the real import does not, and skew benchmarks.
_code = importlib.machinery.SourceFileLoader("pynvml", REAL_PYNVML_PATH).get_code("pynvml")
exec(_code, globals())

# Names below come from the real module executed above; the linters cannot see them.
_g = globals()
NVMLError = _g["NVMLError"]
_NOT_FOUND = _g["NVML_ERROR_NOT_FOUND"]


def _err(name: str) -> BaseException:
    """An instance of the real error class for a short name ("NotSupported")."""
    cls = _g.get("NVMLError_" + name)
    if cls is None:
        raise ValueError(f"unknown NVML error name {name!r} in profile")
    return cls()  # type: ignore[no-any-return]


def _compile(spec: Any, i: int) -> Any:
    """A profile spec turned into ``f(tick) -> value`` once, so answering a call is cheap
    (benchmarks measure the sampler through this fake)."""
    if isinstance(spec, dict):
        if "error" in spec:
            name = spec["error"]
            _err(name)  # an unknown name fails at load, not at the first call

            def raiser(t: int) -> Any:
                raise _err(name)

            return raiser
        if "seq" in spec:
            items = [_compile(v, i) for v in spec["seq"]]
            n = len(items)
            if spec.get("cycle", True):
                return lambda t: items[t % n](t)
            return lambda t: items[min(t, n - 1)](t)
        if "ramp" in spec:
            # A counter: ``step`` per second of profile time, the time NVML's timestamps
            # count, so a profile means the same rate whatever tick length drives it.
            start, step = spec["ramp"]
            mod = spec.get("mod")
            whole = isinstance(start, int) and isinstance(step, int)

            def ramp(t: int) -> Any:
                v = start + step * t * _fake.profile_tick_s
                v = round(v) if whole else v
                return v % mod if mod else v

            return ramp
        if "wave" in spec:
            mean, amp, period = spec["wave"]
            w = 2 * math.pi / float(period)
            if isinstance(mean, int):
                return lambda t: round(mean + amp * math.sin(w * (t + i)))
            return lambda t: mean + amp * math.sin(w * (t + i))
        parts = [(k, _compile(v, i)) for k, v in spec.items()]
        if all(getattr(f, "const", False) for _, f in parts):
            return _const({k: f(0) for k, f in parts})
        return lambda t: {k: f(t) for k, f in parts}
    if isinstance(spec, list):
        fns = [_compile(v, i) for v in spec]
        if all(getattr(f, "const", False) for f in fns):
            return _const([f(0) for f in fns])
        return lambda t: [f(t) for f in fns]
    if isinstance(spec, str):
        if spec == "$self":
            return _const(os.getpid())
        if spec == "$parent":
            return _const(os.getppid())
        return _const(spec.replace("{i}", str(i)))
    return _const(spec)


def _const(v: Any) -> Any:
    def f(t: int) -> Any:
        return v

    f.const = True  # type: ignore[attr-defined]
    return f


# The fake's own index space for MIG device handles (never a row of a recorded trace).
MIG_INDEX_BASE = 1000


class _FakeGpu:
    __slots__ = ("addr", "buf", "compiled", "handle", "index", "injects", "mask", "spec")

    def __init__(self, index: int, spec: Dict[str, Any], injects: List[Dict[str, Any]]) -> None:
        self.index = index
        self.spec = spec
        self.buf = (ctypes.c_char * 16)()
        self.addr = ctypes.addressof(self.buf)
        self.handle = ctypes.cast(self.addr, _g["c_nvmlDevice_t"])
        self.injects = injects
        self.mask = 0
        self.compiled: Dict[str, Any] = {}


class FakeNvml:
    """State of the fake library: the loaded profile, the clock, and what was called."""

    def __init__(self) -> None:
        self.profile: Optional[Dict[str, Any]] = None
        self.gpus: List[_FakeGpu] = []
        self.by_id: Dict[int, _FakeGpu] = {}
        self.by_addr: Dict[int, _FakeGpu] = {}
        self.missing: set = set()
        self.field_types: Dict[int, int] = {}
        self.tick_s = 1.0
        self.profile_tick_s = 1.0
        self.t0 = time.monotonic()
        self.fixed_t: Optional[float] = None
        self.fixed_tick = 0
        self.field_keys: Dict[Tuple[int, int, int], str] = {}
        self._tick_keys: Dict[int, set] = {}
        self.initialized = 0
        self.calls: Counter = Counter()
        self.putil_args: Dict[int, List[int]] = {}
        self.events: List[Dict[str, Any]] = []
        self.cond = threading.Condition()
        self.event_sets: Dict[int, Any] = {}
        self.gpm_samples: Dict[int, Tuple[int, float]] = {}
        self.gpm_bufs: Dict[int, Any] = {}
        self.ticks: List[List[Dict[str, Any]]] = []
        self.ts_base_us = 1700000000000000
        self.mig_children: Dict[int, List[_FakeGpu]] = {}
        self.mig_parent: Dict[int, _FakeGpu] = {}
        self.cost: Optional[CostModel] = None
        self.charged_us: Counter = Counter()  # µs charged per function (cost model on)
        self.charged_n: Counter = Counter()  # calls charged per function
        # Charged calls per (function, "main" or "pool"): which thread made them.
        self.charged_on: Counter = Counter()
        self.init_seen: set = set()
        self.c_entry_points = False
        # Charges advance a per-thread virtual CPU clock (cpu_clock) instead of burning CPU:
        # tests of the sampler's plan give it that clock, and exact timings on any machine.
        self.virtual_cpu = False

    # -- set-up ----------------------------------------------------------------------------

    def load(self, profile: Any) -> "FakeNvml":
        """Load a profile (dict or path); resets the clock and the call log."""
        if not isinstance(profile, dict):
            with open(str(profile), encoding="utf-8") as f:
                profile = json.load(f)
        self.profile = profile
        # tick_s paces the replay; profile_tick_s is what one tick means to NVML's clock.
        self.profile_tick_s = float(profile.get("tick_s", 1.0))
        self.tick_s = float(os.environ.get("GPUFLEET_FAKE_NVML_TICK_S") or self.profile_tick_s)
        self.missing = set(profile.get("missing", ()))
        self.field_types = {int(k): int(v) for k, v in profile.get("field_types", {}).items()}
        defaults = profile.get("defaults", {})
        per = profile.get("gpus", [])
        count = int(profile.get("count", len(per)))
        injects = profile.get("inject", [])
        self.gpus = []
        for i in range(count):
            spec = dict(defaults)
            if i < len(per):
                spec.update(per[i])
            mine = [dict(x) for x in injects if x.get("gpu", i) == i]
            self.gpus.append(_FakeGpu(i, spec, mine))
        self.by_id = {id(g.handle): g for g in self.gpus}
        self.by_addr = {g.addr: g for g in self.gpus}
        # MIG: a GPU's "mig_devices" are MIG device handles of their own (answered from
        # their own keys), reached through nvmlDeviceGetMigDeviceHandleByIndex.
        self.mig_children = {}
        self.mig_parent = {}
        for g in self.gpus:
            specs = g.spec.get("mig_devices")
            if not isinstance(specs, list):
                continue
            kids = []
            for k, child_spec in enumerate(specs):
                child = _FakeGpu(MIG_INDEX_BASE + 16 * g.index + k, dict(child_spec), [])
                kids.append(child)
                self.by_id[id(child.handle)] = child
                self.by_addr[child.addr] = child
                self.mig_parent[child.addr] = g
            self.mig_children[g.index] = kids
        self.ticks = profile.get("ticks", [])
        self.field_keys = {}
        self._tick_keys = {}
        self.events = [dict(e, delivered=False) for e in profile.get("events", [])]
        self.t0 = time.monotonic()
        self.fixed_t = None
        self.calls = Counter()
        self.putil_args = {}
        self.gpm_samples = {}
        self.virtual_cpu = False
        return self

    def set_cost(self, spec: Any, scale: float = 1.0) -> Optional["CostModel"]:
        """Charge every call from now on what ``spec`` gives it (see load_cost), times
        ``scale`` (a driver whose calls are cheaper or dearer); None: free."""
        self.cost = load_cost(spec)
        if self.cost is not None and scale != 1.0:
            self.cost = CostModel.scaled(self.cost, scale)
        self.charged_us = Counter()
        self.charged_n = Counter()
        self.charged_on = Counter()
        self.init_seen = set()
        return self.cost

    def cpu_clock(self) -> float:
        """This thread's virtual CPU clock (s): what the calls it made were charged while
        ``virtual_cpu`` was on, and nothing else (the fake's own Python is free)."""
        return _cost.cpu_clock()

    def tick_keys(self, index: int) -> set:
        """Keys a recorded trace gives this GPU at some tick."""
        keys = self._tick_keys.get(index)
        if keys is None:
            keys = set()
            for row in self.ticks:
                if index < len(row):
                    keys.update(row[index])
            self._tick_keys[index] = keys
        return keys

    def set_time(self, t: float) -> None:
        """Freeze the fake clock at ``t`` seconds (tests and benchmarks drive it)."""
        with self.cond:
            self.fixed_t = float(t)
            self.fixed_tick = int(self.fixed_t / self.tick_s + 1e-9)
            self.cond.notify_all()

    def now(self) -> float:
        if self.fixed_t is not None:
            return self.fixed_t
        return time.monotonic() - self.t0

    def tick(self) -> int:
        if self.fixed_t is not None:
            return self.fixed_tick
        return int((time.monotonic() - self.t0) / self.tick_s + 1e-9)

    def ts_us(self) -> int:
        """NVML's timestamp now: the start of this tick in profile time (see the docstring)."""
        return self.ts_base_us + round(self.tick() * self.profile_tick_s * 1e6)

    def inject_event(self, gpu: int, etype: int, data: int) -> None:
        """Deliver an event at once (as if the driver raised it now)."""
        with self.cond:
            self.events.append(
                {"gpu": gpu, "tick": -1, "type": etype, "data": data, "delivered": False}
            )
            self.cond.notify_all()

    # -- lookups ---------------------------------------------------------------------------

    def dev(self, h: Any, fname: str) -> _FakeGpu:
        self.calls[fname] += 1
        if fname in self.missing:
            raise _err("FunctionNotFound")
        if not self.initialized:
            raise _err("Uninitialized")
        g = self.by_id.get(id(h))
        if g is None:
            addr = ctypes.cast(h, ctypes.c_void_p).value
            g = self.by_addr.get(addr or 0)
            if g is None:
                raise _err("InvalidArgument")
        if g.injects:
            t = self.tick()
            for inj in g.injects:
                key = inj.get("key", "*")
                if (key == "*" or key == fname) and inj.get("from_tick", 0) <= t < (
                    inj.get("until_tick") if inj.get("until_tick") is not None else 1 << 60
                ):
                    raise _err(inj["error"])
        return g

    def value(self, g: _FakeGpu, key: str) -> Any:
        """The resolved value of ``key`` for this GPU now; raises the error a spec names."""
        t = self.tick()
        if self.ticks:
            row = self.ticks[t % len(self.ticks)]
            if g.index < len(row) and key in row[g.index]:
                return _compile(row[g.index][key], g.index)(t)
        if g.injects:
            for inj in g.injects:
                k = inj.get("key", "*")
                if (
                    k != "*"
                    and k == key
                    and inj.get("from_tick", 0)
                    <= t
                    < (inj.get("until_tick") if inj.get("until_tick") is not None else 1 << 60)
                ):
                    raise _err(inj["error"])
        fn = g.compiled.get(key)
        if fn is None:
            spec = g.spec.get(key, _ABSENT)
            if spec is _ABSENT:
                # "name:*" answers every argument (e.g. all NVLink links) unless one is listed.
                head, sep, _ = key.rpartition(":")
                spec = g.spec.get(head + ":*", _ABSENT) if sep else _ABSENT
            fn = _compile({"error": "NotSupported"} if spec is _ABSENT else spec, g.index)
            g.compiled[key] = fn
        return fn(t)

    def system(self, fname: str) -> Any:
        self.calls[fname] += 1
        if fname in self.missing:
            raise _err("FunctionNotFound")
        if not self.initialized:
            raise _err("Uninitialized")
        sysvals = (self.profile or {}).get("system", {})
        if fname not in sysvals:
            raise _err("NotSupported")
        return _compile(sysvals[fname], 0)(self.tick())


# -- cost model: pynvml_cost.py, loaded beside this file ------------------------------------


def _sibling(name: str) -> Any:
    """A module beside this file, loaded by its path: the fake itself is loaded by path
    in-process (tests/support/nvml_fake.py), where tests/fakes is not on ``sys.path``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, name + ".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_cost = _sibling("pynvml_cost")
CostModel = _cost.CostModel
COST_PROFILES = _cost.COST_PROFILES
load_cost = _cost.load_cost


def _charged(fname: str, fn: Any) -> Any:
    """``fn`` costing what the cost model gives ``fname`` (see pynvml_cost.charged)."""
    return _cost.charged(fname, fn, lambda: _fake)


_fake = FakeNvml()


# -- library loading ------------------------------------------------------------------------


def _nvmlGetFunctionPointer(name: str) -> Any:
    """Every symbol the fake does not implement is missing from this "driver"; with
    ``_fake.c_entry_points`` set (benchmarks of other tools), the few C entry points that
    nvitop calls through ctypes directly answer from the profile too."""
    if not _fake.initialized:
        raise _err("Uninitialized")
    if _fake.c_entry_points:
        fn = _C_ENTRY.get(name)
        if fn is not None:
            return fn
    raise _err("FunctionNotFound")


def _c_procs(fname: str, key: str) -> Any:
    """``nvmlReturn_t fname(device, unsigned *count, nvmlProcessInfo_t *infos)``."""

    def c_call(handle: Any, count_ref: Any, infos: Any) -> int:
        try:
            plist = _fake.value(_fake.dev(handle, fname), key)
        except NVMLError as e:
            return int(e.value)
        count = count_ref._obj
        if infos is None or count.value < len(plist):
            count.value = len(plist)
            return 0 if not plist else int(_g["NVML_ERROR_INSUFFICIENT_SIZE"])
        na = _g["NVML_VALUE_NOT_AVAILABLE_ulonglong"].value
        for k, p in enumerate(plist):
            infos[k].pid = int(p["pid"])
            mem = p.get("usedGpuMemory")
            infos[k].usedGpuMemory = na if mem is None else int(mem)
            infos[k].gpuInstanceId = 0xFFFFFFFF
            infos[k].computeInstanceId = 0xFFFFFFFF
        count.value = len(plist)
        return 0

    return c_call


def _c_memory(fname: str, key: str) -> Any:
    """``nvmlReturn_t fname(device, nvmlMemory[_v2]_t *memory)``."""

    def c_call(handle: Any, mem_ref: Any) -> int:
        try:
            v = _fake.value(_fake.dev(handle, fname), key)
        except NVMLError as e:
            return int(e.value)
        m = mem_ref._obj
        total, used = int(v["total"]), int(v["used"])
        reserved = int(v.get("reserved", 0))
        if hasattr(m, "reserved"):
            m.reserved = reserved
            m.used = used
            m.free = int(v.get("free", total - reserved - used))
        else:
            m.used = used + reserved
            m.free = total - used - reserved
        m.total = total
        return 0

    return c_call


def nvmlInitWithFlags(flags: int) -> None:
    _fake.calls["nvmlInit"] += 1
    if _fake.profile is None:
        path = os.environ.get("GPUFLEET_FAKE_NVML")
        if not path:
            raise _err("LibraryNotFound")
        _fake.load(path)
    _fake.initialized += 1


def nvmlInit() -> None:
    nvmlInitWithFlags(0)


def nvmlShutdown() -> None:
    _fake.calls["nvmlShutdown"] += 1
    if not _fake.initialized:
        raise _err("Uninitialized")
    _fake.initialized -= 1


def nvmlErrorString(result: int) -> str:
    return f"NVML error {result}"


# -- system ---------------------------------------------------------------------------------


def nvmlSystemGetDriverVersion() -> str:
    return str(_fake.system("nvmlSystemGetDriverVersion"))


def nvmlSystemGetNVMLVersion() -> str:
    return str(_fake.system("nvmlSystemGetNVMLVersion"))


def nvmlSystemGetCudaDriverVersion() -> int:
    return int(_fake.system("nvmlSystemGetCudaDriverVersion"))


def nvmlSystemGetCudaDriverVersion_v2() -> int:
    return int(_fake.system("nvmlSystemGetCudaDriverVersion_v2"))


def nvmlDeviceGetCount() -> int:
    _fake.calls["nvmlDeviceGetCount"] += 1
    if not _fake.initialized:
        raise _err("Uninitialized")
    return len(_fake.gpus)


def nvmlDeviceGetHandleByIndex(index: int) -> Any:
    _fake.calls["nvmlDeviceGetHandleByIndex"] += 1
    if not _fake.initialized:
        raise _err("Uninitialized")
    if not 0 <= index < len(_fake.gpus):
        raise _err("InvalidArgument")
    g = _fake.gpus[index]
    _fake.dev(g.handle, "nvmlDeviceGetHandleByIndex")
    return g.handle


def nvmlDeviceGetIndex(handle: Any) -> int:
    return _fake.dev(handle, "nvmlDeviceGetIndex").index


# -- simple device getters: (handle) -> value, or (handle, arg) -> value --------------------


def _simple(fname: str, conv: Any = int) -> Any:
    def getter(handle: Any) -> Any:
        g = _fake.dev(handle, fname)
        return conv(_fake.value(g, fname))

    getter.__name__ = fname
    return getter


def _with_arg(fname: str, conv: Any = int) -> Any:
    def getter(handle: Any, arg: Any) -> Any:
        g = _fake.dev(handle, fname)
        return conv(_fake.value(g, f"{fname}:{int(arg)}"))

    getter.__name__ = fname
    return getter


for _name in (
    "nvmlDeviceGetArchitecture",
    "nvmlDeviceGetBrand",
    "nvmlDeviceGetPersistenceMode",
    "nvmlDeviceGetComputeMode",
    "nvmlDeviceGetVirtualizationMode",
    "nvmlDeviceGetPerformanceState",
    "nvmlDeviceGetPowerState",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetPowerManagementDefaultLimit",
    "nvmlDeviceGetPowerManagementLimit",
    "nvmlDeviceGetFanSpeed",
    "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkWidth",
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
    "nvmlDeviceGetPcieReplayCounter",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrentClocksThrottleReasons",
    "nvmlDeviceGetSupportedClocksEventReasons",
    "nvmlDeviceGetSupportedClocksThrottleReasons",
    "nvmlDeviceGetSupportedEventTypes",
    "nvmlDeviceGetRetiredPagesPendingStatus",
):
    _g[_name] = _simple(_name)


def nvmlDeviceGetMinorNumber(handle: Any) -> int:
    """N of /dev/nvidiaN: the profile's value, else the GPU's index (as on a host that shows
    all its GPUs; a container given GPUs 2 and 3 sees indices 0 and 1 with minors 2 and 3)."""
    g = _fake.dev(handle, "nvmlDeviceGetMinorNumber")
    if "nvmlDeviceGetMinorNumber" not in g.spec:
        return g.index
    return int(_fake.value(g, "nvmlDeviceGetMinorNumber"))


for _name in (
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetSerial",
    "nvmlDeviceGetVbiosVersion",
):
    _g[_name] = _simple(_name, str)

for _name in (
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetApplicationsClock",
    "nvmlDeviceGetDefaultApplicationsClock",
    "nvmlDeviceGetMaxCustomerBoostClock",
    "nvmlDeviceGetTemperature",
    "nvmlDeviceGetTemperatureThreshold",
    "nvmlDeviceGetNvLinkState",
    "nvmlDeviceGetNvLinkVersion",
    "nvmlDeviceGetFanSpeed_v2",
):
    _g[_name] = _with_arg(_name)


def nvmlDeviceGetTemperatureV1(handle: Any, sensor: int) -> int:
    # The real nvmlDeviceGetTemperatureV calls this one; the C symbol is nvmlDeviceGetTemperatureV.
    g = _fake.dev(handle, "nvmlDeviceGetTemperatureV")
    return int(_fake.value(g, f"nvmlDeviceGetTemperatureV:{int(sensor)}"))


def nvmlDeviceGetCudaComputeCapability(handle: Any) -> Tuple[int, int]:
    g = _fake.dev(handle, "nvmlDeviceGetCudaComputeCapability")
    v = _fake.value(g, "nvmlDeviceGetCudaComputeCapability")
    return (int(v[0]), int(v[1]))


def _pair(fname: str) -> Any:
    def getter(handle: Any) -> List[int]:
        g = _fake.dev(handle, fname)
        v = _fake.value(g, fname)
        return [int(v[0]), int(v[1])]

    getter.__name__ = fname
    return getter


for _name in (
    "nvmlDeviceGetMigMode",
    "nvmlDeviceGetEccMode",
    "nvmlDeviceGetPowerManagementLimitConstraints",
):
    _g[_name] = _pair(_name)


def nvmlDeviceGetRemappedRows(device: Any) -> Tuple[int, int, int, int]:
    g = _fake.dev(device, "nvmlDeviceGetRemappedRows")
    v = _fake.value(g, "nvmlDeviceGetRemappedRows")
    return (int(v[0]), int(v[1]), int(v[2]), int(v[3]))


def nvmlDeviceGetTotalEccErrors(handle: Any, errorType: int, counterType: int) -> int:
    g = _fake.dev(handle, "nvmlDeviceGetTotalEccErrors")
    return int(_fake.value(g, f"nvmlDeviceGetTotalEccErrors:{errorType}:{counterType}"))


def nvmlDeviceGetPciInfo_v3(handle: Any) -> Any:
    g = _fake.dev(handle, "nvmlDeviceGetPciInfo_v3")
    bus = str(_fake.value(g, "nvmlDeviceGetPciInfo_v3"))
    info = _g["nvmlPciInfo_t"]()
    info.busId = bus.encode()
    info.busIdLegacy = bus[-12:].encode()
    return info


def nvmlDeviceGetUtilizationRates(handle: Any) -> Any:
    g = _fake.dev(handle, "nvmlDeviceGetUtilizationRates")
    v = _fake.value(g, "nvmlDeviceGetUtilizationRates")
    u = _g["c_nvmlUtilization_t"]()
    u.gpu = int(v["gpu"])
    u.memory = int(v["memory"])
    return u


def nvmlDeviceGetMemoryInfo(handle: Any, version: Any = None) -> Any:
    if version:
        g = _fake.dev(handle, "nvmlDeviceGetMemoryInfo_v2")
        v = _fake.value(g, "nvmlDeviceGetMemoryInfo_v2")
        m = _g["c_nvmlMemory_v2_t"]()
        m.version = version
        m.total = int(v["total"])
        m.reserved = int(v.get("reserved", 0))
        m.used = max(0, int(v["used"]) - _gone_mem(g))
        m.free = int(v.get("free", m.total - m.reserved - m.used))
        return m
    g = _fake.dev(handle, "nvmlDeviceGetMemoryInfo")
    try:
        v = _fake.value(g, "nvmlDeviceGetMemoryInfo")
    except NVMLError:
        # A driver with v2 has v1 too; v1's "used" includes the reserved part.
        v2 = _fake.value(g, "nvmlDeviceGetMemoryInfo_v2")
        v = {
            "total": v2["total"],
            "used": int(v2["used"]) + int(v2.get("reserved", 0)),
        }
    m1 = _g["c_nvmlMemory_t"]()
    m1.total = int(v["total"])
    m1.used = max(0, int(v["used"]) - _gone_mem(g))
    m1.free = int(v.get("free", m1.total - m1.used))
    return m1


# -- field values ---------------------------------------------------------------------------

_FV_FMT = {0: "d", 1: "I4x", 2: "Q", 3: "Q", 4: "q", 5: "i4x", 6: "H6x"}
_fv_structs: Dict[Tuple[int, ...], Any] = {}


_MASK = {1: 0xFFFFFFFF, 2: 0xFFFFFFFFFFFFFFFF, 3: 0xFFFFFFFFFFFFFFFF, 6: 0xFFFF}


def _field_key(g: _FakeGpu, fid: int, scope: int) -> str:
    """The profile key that answers (fid, scope) for this GPU.

    Scope 0 is also the default scope: "field:ID" and "field:ID:0" both answer it, and a
    scoped read falls back to the unscoped spec where the profile has only that."""
    k = (g.index, fid, scope)
    key = _fake.field_keys.get(k)
    if key is not None:
        return key
    known = g.spec.keys() | _fake.tick_keys(g.index)
    plain, scoped, wild = f"field:{fid}", f"field:{fid}:{scope}", f"field:{fid}:*"
    if scope == 0:
        key = plain if plain in known or (scoped not in known and wild not in known) else scoped
    else:
        key = scoped if scoped in known or wild in known or plain not in known else plain
    _fake.field_keys[k] = key
    return key


def _field_entry(g: _FakeGpu, fid: int, scope: int) -> Tuple[int, int, Any]:
    """(valueType, nvmlReturn, value) of one field for this GPU now."""
    try:
        v = _fake.value(g, _field_key(g, fid, scope))
    except NVMLError as e:
        return 1, int(e.value), 0
    vt = _fake.field_types.get(fid)
    if type(v) is dict:
        vt = int(v.get("type", 3))
        v = v["v"]
    elif vt is None:
        vt = 0 if type(v) is float else 3
    if vt == 0:
        return 0, 0, float(v)
    m = _MASK.get(vt)
    return vt, 0, (int(v) & m) if m else int(v)


def nvmlDeviceGetFieldValues(handle: Any, fieldIds: List[Any]) -> Any:
    g = _fake.dev(handle, "nvmlDeviceGetFieldValues")
    values = (_g["c_nvmlFieldValue_t"] * len(fieldIds))()
    ts = _fake.ts_us()
    flat: List[Any] = []
    types: List[int] = []
    for f in fieldIds:
        if type(f) is tuple:
            fid, scope = f
        else:
            fid, scope = f, 0
        vt, ret, v = _field_entry(g, fid, scope)
        types.append(vt)
        flat.extend((fid, scope, ts, 0, vt, ret, v))
    key = tuple(types)
    s = _fv_structs.get(key)
    if s is None:
        s = _struct.Struct("=" + "".join("IIqqII" + _FV_FMT[t] for t in types))
        _fv_structs[key] = s
    s.pack_into(values, 0, *flat)
    return values


# -- processes ------------------------------------------------------------------------------


def _running(p: Dict[str, Any]) -> bool:
    """An entry with ``while_running: PID`` is listed only while that process (as this
    process's /proc numbers it) exists and is not a zombie: the driver drops a process's entry
    and frees its memory when it ends. The pid NVML reports (``pid``) may be another
    namespace's number for the same process."""
    local = p.get("while_running")
    if local is None:
        return True
    try:
        with open(f"/proc/{int(local)}/stat", "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return False
    return text[text.rfind(")") + 2 :][:1] not in ("Z", "X", "")


def _gone_mem(g: _FakeGpu) -> int:
    """Memory of this GPU's ``while_running`` entries whose process has ended: it is free."""
    total = 0
    for key in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
        try:
            plist = _fake.value(g, key)
        except NVMLError:
            continue
        for p in plist or ():
            if not _running(p):
                total += int(p.get("usedGpuMemory") or 0)
    return total


def _procs(handle: Any, fname: str, key: str) -> List[Any]:
    g = _fake.dev(handle, fname)
    plist = _fake.value(g, key)
    out = []
    na = _g["NVML_VALUE_NOT_AVAILABLE_ulonglong"].value
    for p in plist:
        if not _running(p):
            continue
        c = _g["c_nvmlProcessInfo_v2_t"]()
        c.pid = int(p["pid"])
        mem = p.get("usedGpuMemory")
        c.usedGpuMemory = na if mem is None else int(mem)
        c.gpuInstanceId = 0xFFFFFFFF
        c.computeInstanceId = 0xFFFFFFFF
        obj = _g["nvmlStructToFriendlyObject"](c)
        if obj.usedGpuMemory == na:
            obj.usedGpuMemory = None
        out.append(obj)
    return out


def nvmlDeviceGetComputeRunningProcesses_v2(handle: Any) -> List[Any]:
    return _procs(
        handle, "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"
    )


def nvmlDeviceGetComputeRunningProcesses_v3(handle: Any) -> List[Any]:
    return _procs(
        handle, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses"
    )


def nvmlDeviceGetGraphicsRunningProcesses_v2(handle: Any) -> List[Any]:
    return _procs(
        handle, "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"
    )


def nvmlDeviceGetGraphicsRunningProcesses_v3(handle: Any) -> List[Any]:
    return _procs(
        handle, "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses"
    )


def nvmlDeviceGetProcessUtilization(handle: Any, timeStamp: int) -> List[Any]:
    """Samples newer than ``timeStamp`` (the caller's last seen); NotFound when none."""
    g = _fake.dev(handle, "nvmlDeviceGetProcessUtilization")
    _fake.putil_args.setdefault(g.index, []).append(int(timeStamp))
    samples = _fake.value(g, "nvmlDeviceGetProcessUtilization")
    # Samples carry the start of the current tick: a second read in the same tick is "nothing new".
    ts = _fake.ts_us()
    out = []
    for s in samples:
        sts = int(s.get("timeStamp", ts))
        if sts <= int(timeStamp):
            continue
        c = _g["c_nvmlProcessUtilizationSample_t"]()
        c.pid = int(s["pid"])
        c.timeStamp = sts
        c.smUtil = int(s.get("smUtil", 0))
        c.memUtil = int(s.get("memUtil", 0))
        out.append(c)
    if not out:
        raise NVMLError(_NOT_FOUND)
    return out


# -- events ---------------------------------------------------------------------------------


def nvmlEventSetCreate() -> Any:
    _fake.calls["nvmlEventSetCreate"] += 1
    if "nvmlEventSetCreate" in _fake.missing:
        raise _err("FunctionNotFound")
    buf = (ctypes.c_char * 16)()
    es = ctypes.cast(ctypes.addressof(buf), _g["c_nvmlEventSet_t"])
    _fake.event_sets[ctypes.addressof(buf)] = buf
    return es


def nvmlDeviceRegisterEvents(handle: Any, eventTypes: int, eventSet: Any) -> None:
    g = _fake.dev(handle, "nvmlDeviceRegisterEvents")
    if "nvmlDeviceRegisterEvents" in g.spec:
        _fake.value(g, "nvmlDeviceRegisterEvents")  # raises when the profile says so
    g.mask |= int(eventTypes)


def nvmlEventSetWait_v2(eventSet: Any, timeoutms: int) -> Any:
    _fake.calls["nvmlEventSetWait"] += 1
    deadline = time.monotonic() + timeoutms / 1000.0
    with _fake.cond:
        while True:
            t = _fake.tick()
            for ev in _fake.events:
                if ev["delivered"] or ev["tick"] > t:
                    continue
                g = _fake.gpus[int(ev["gpu"])]
                etype = ev["type"]
                if isinstance(etype, str):
                    etype = int(_g[etype])
                if not g.mask & etype:
                    continue
                ev["delivered"] = True
                data = _g["c_nvmlEventData_t"]()
                data.device = g.handle
                data.eventType = etype
                data.eventData = int(ev.get("data", 0))
                data.gpuInstanceId = 0xFFFFFFFF
                data.computeInstanceId = 0xFFFFFFFF
                return data
            left = deadline - time.monotonic()
            if left <= 0:
                raise _err("Timeout")
            # With the real-time clock nobody notifies a new tick: wake at the next one (a
            # driver's wait blocks; polling every 50 ms cost ~0.15 % of a core, which the
            # benchmarks of a whole sampler process would have counted as the sampler's).
            wait = left
            if _fake.fixed_t is None:
                now = time.monotonic() - _fake.t0
                wait = min(left, max(0.001, (int(now / _fake.tick_s) + 1) * _fake.tick_s - now))
            _fake.cond.wait(wait)


def nvmlEventSetWait(eventSet: Any, timeoutms: int) -> Any:
    return nvmlEventSetWait_v2(eventSet, timeoutms)


def nvmlEventSetFree(eventSet: Any) -> None:
    _fake.calls["nvmlEventSetFree"] += 1
    _fake.event_sets.pop(ctypes.cast(eventSet, ctypes.c_void_p).value or 0, None)


# -- GPM ------------------------------------------------------------------------------------


def nvmlGpmQueryDeviceSupport(device: Any) -> Any:
    g = _fake.dev(device, "nvmlGpmQueryDeviceSupport")
    s = _g["c_nvmlGpmSupport_t"]()
    s.version = _g["NVML_GPM_SUPPORT_VERSION"]
    try:
        s.isSupportedDevice = 1 if _fake.value(g, "gpm") else 0
    except NVMLError:
        s.isSupportedDevice = 0
    return s


def nvmlGpmSampleAlloc() -> Any:
    _fake.calls["nvmlGpmSampleAlloc"] += 1
    if "nvmlGpmSampleAlloc" in _fake.missing:
        raise _err("FunctionNotFound")
    buf = (ctypes.c_char * 16)()
    addr = ctypes.addressof(buf)
    _fake.gpm_bufs[addr] = buf
    return ctypes.cast(addr, _g["c_nvmlGpmSample_t"])


def nvmlGpmSampleFree(gpmSample: Any) -> None:
    addr = ctypes.cast(gpmSample, ctypes.c_void_p).value or 0
    _fake.gpm_bufs.pop(addr, None)
    _fake.gpm_samples.pop(addr, None)


def nvmlGpmSampleGet(device: Any, gpmSample: Any) -> Any:
    g = _fake.dev(device, "nvmlGpmSampleGet")
    addr = ctypes.cast(gpmSample, ctypes.c_void_p).value or 0
    _fake.gpm_samples[addr] = (g.index, _fake.now())
    return gpmSample


def nvmlGpmMetricsGet(metricsGet: Any) -> Any:
    _fake.calls["nvmlGpmMetricsGet"] += 1
    a1 = ctypes.cast(metricsGet.sample1, ctypes.c_void_p).value or 0
    a2 = ctypes.cast(metricsGet.sample2, ctypes.c_void_p).value or 0
    if a1 not in _fake.gpm_samples or a2 not in _fake.gpm_samples:
        raise _err("InvalidArgument")
    gi, _t2 = _fake.gpm_samples[a2]
    g = _fake.gpus[gi]
    for i in range(int(metricsGet.numMetrics)):
        m = metricsGet.metrics[i]
        try:
            m.value = float(_fake.value(g, f"gpm:{int(m.metricId)}"))
            m.nvmlReturn = 0
        except NVMLError as e:
            m.value = 0.0
            m.nvmlReturn = int(e.value)
    return metricsGet


# -- MIG ------------------------------------------------------------------------------------
# A GPU with MIG enabled has "nvmlDeviceGetMigMode": [1, 1] and "mig_devices": a list of
# MIG device specs (keys as for a GPU: nvmlDeviceGetUUID, nvmlDeviceGetName,
# nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetAttributes_v2,
# nvmlDeviceGetGpuInstanceId, nvmlDeviceGetComputeInstanceId). What a MIG device does not
# answer raises NotSupported, as most per-card calls do on a real one.


def _mig_kids(g: _FakeGpu) -> List[_FakeGpu]:
    kids = _fake.mig_children.get(g.index)
    if kids is None or g.addr in _fake.mig_parent:
        raise _err("NotSupported")
    return kids


def nvmlDeviceGetMaxMigDeviceCount(device: Any) -> int:
    return len(_mig_kids(_fake.dev(device, "nvmlDeviceGetMaxMigDeviceCount")))


def nvmlDeviceGetMigDeviceHandleByIndex(device: Any, index: int) -> Any:
    kids = _mig_kids(_fake.dev(device, "nvmlDeviceGetMigDeviceHandleByIndex"))
    if not 0 <= int(index) < len(kids):
        raise _err("NotFound")
    return kids[int(index)].handle


def nvmlDeviceIsMigDeviceHandle(device: Any) -> Any:
    g = _fake.dev(device, "nvmlDeviceIsMigDeviceHandle")
    # The real wrapper returns the c_uint itself, not its value.
    return ctypes.c_uint(1 if g.addr in _fake.mig_parent else 0)


def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(migDevice: Any) -> Any:
    g = _fake.dev(migDevice, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle")
    parent = _fake.mig_parent.get(g.addr)
    if parent is None:
        raise _err("InvalidArgument")
    return parent.handle


for _name in ("nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId"):
    _g[_name] = _simple(_name)


def nvmlDeviceGetAttributes_v2(device: Any) -> Any:
    g = _fake.dev(device, "nvmlDeviceGetAttributes_v2")
    v = _fake.value(g, "nvmlDeviceGetAttributes_v2")
    a = _g["c_nvmlDeviceAttributes"]()
    for name, _ctype in a._fields_:
        setattr(a, name, int(v.get(name, 0)))
    return a


_C_ENTRY: Dict[str, Any] = {}
for _kind in ("Compute", "Graphics"):
    for _suffix in ("_v3", "_v2", ""):
        _sym = f"nvmlDeviceGet{_kind}RunningProcesses{_suffix}"
        _C_ENTRY[_sym] = _charged(_sym, _c_procs(_sym, f"nvmlDeviceGet{_kind}RunningProcesses"))
_C_ENTRY["nvmlDeviceGetMemoryInfo_v2"] = _charged(
    "nvmlDeviceGetMemoryInfo", _c_memory("nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo_v2")
)
_C_ENTRY["nvmlDeviceGetMemoryInfo"] = _charged(
    "nvmlDeviceGetMemoryInfo", _c_memory("nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2")
)

# Every library function this file answers (not the real module's Python helpers) goes
# through the cost model; with no model set a call pays one attribute check.
# A copy taken in one C call: a list() over the live dict can be interrupted by a finalizer
# that runs Python code (another thread may then touch the namespace).
for _name, _fn in tuple(_g.copy().items()):
    if (
        _name.startswith("nvml")
        and callable(_fn)
        and getattr(getattr(_fn, "__code__", None), "co_filename", None) == __file__
    ):
        _g[_name] = _charged(_name, _fn)

if os.environ.get("GPUFLEET_FAKE_NVML"):
    _fake.load(os.environ["GPUFLEET_FAKE_NVML"])
if os.environ.get("GPUFLEET_FAKE_NVML_COST"):
    _fake.set_cost(os.environ["GPUFLEET_FAKE_NVML_COST"])
