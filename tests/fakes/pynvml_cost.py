"""The fake pynvml's cost model: what each NVML call costs the CPU, and the busy-wait that
charges it (split out of pynvml.py, which loads this file from beside itself).

The cost model (off unless asked): with ``GPUFLEET_FAKE_NVML_COST=h200`` (or
``_fake.set_cost("h200")``) every call the fake answers costs the CPU time the recorded H200
run gave that pynvml function (``docs/device/h200-nvml-call-times.json``): the call
busy-waits on the thread's CPU clock until that much CPU time has passed since it began, so
the fake's own Python work counts inside the charge. NVML's time is CPU time (the recorded
sampler thread's CPU matched its calls' wall time), so this is what a real driver costs a
sampler and what benchmarks through the fake then measure. The wait hashes as much of a
buffer as the charge needs, in one go where it can: hashlib releases the GIL while it
hashes, so a call lets go of the GIL about once, as a ctypes call into libnvidia-ml does,
and calls made from several threads burn CPU side by side. ``h200`` charges
``nvmlDeviceGetFieldValues`` per call (4 ms whatever the fields); ``h200-per-field`` charges
it per field (the 4 ms spread over the 11 fields it was measured with): the two answers the
unrun field bisection can give. A function the run did not time costs ``default_us`` (the
median of the cheap calls it timed); one it timed only at start-up (``init_top``: handles,
max clocks, thresholds) costs that on its first call with given arguments in the process
and ``default_us`` after (an assumption: the run timed no second call; a tool that calls
``nvmlInit`` each refresh pays that call's recorded 11 ms each time, not its handles again). Any
file of the call-time tool's shape (``per_tick`` / ``init_top``, optional ``field_us``) can be
named instead.
"""

import ctypes
import json
import os
import threading
import time
from typing import Any, Callable, Dict, Optional, Set, Tuple

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COST_PROFILES = {
    "h200": os.path.join(_REPO, "docs", "device", "h200-nvml-call-times.json"),
    "h200-per-field": os.path.join(_REPO, "docs", "device", "h200-nvml-call-times.json"),
}
# Fields in the per-tick call when the H200 run timed it at 4 ms (docs/benchmarks.md).
_H200_FIELDS_TIMED = 11
# Not NVML work: waits that block without using CPU, and pynvml's own Python helpers.
_NOT_CHARGED = ("nvmlEventSetWait", "nvmlEventSetWait_v2", "nvmlStructToFriendlyObject")
# The real pynvml's ``nvmlInit`` calls ``nvmlInitWithFlags``: the run timed both as one.
_SAME_AS = {"nvmlInitWithFlags": "nvmlInit"}
# Start-up calls the run timed only in total (init_top: ms for all calls of one start on one
# GPU): how many calls that total was, to charge each its share.
_INIT_CALLS = {
    "nvmlDeviceGetMaxClockInfo": 2,
    "nvmlDeviceGetTemperatureThreshold": 3,
    "nvmlDeviceGetFieldValues": 4,
}


class CostModel:
    """µs of CPU each call costs: ``us[name]`` per call, ``default_us`` for the rest, and for
    ``nvmlDeviceGetFieldValues`` ``fv_base_us`` + ``fv_field_us`` per field id asked."""

    def __init__(
        self,
        us: Dict[str, float],
        default_us: float,
        fv_base_us: float,
        fv_field_us: Dict[int, float],
        fv_field_default_us: float,
        name: str = "",
        once: Optional[Dict[str, float]] = None,
    ) -> None:
        # Calls the run timed only at start-up: that cost for the first call with given
        # arguments in the process, default_us for the next ones.
        self.once = once or {}
        self.us = us
        self.default_us = default_us
        self.fv_base_us = fv_base_us
        self.fv_field_us = fv_field_us
        self.fv_field_default_us = fv_field_default_us
        self.name = name

    @classmethod
    def scaled(cls, m: "CostModel", k: float) -> "CostModel":
        """``m`` with every charge times ``k``."""
        return cls(
            {f: v * k for f, v in m.us.items()},
            m.default_us * k,
            m.fv_base_us * k,
            {f: v * k for f, v in m.fv_field_us.items()},
            m.fv_field_default_us * k,
            f"{m.name} x{k:g}",
            {f: v * k for f, v in m.once.items()},
        )

    def charge_us(self, fname: str, args: Tuple[Any, ...], seen: Set[Any]) -> float:
        """µs of CPU this call costs; ``seen``: the (call, arguments) already charged once."""
        if fname == "nvmlDeviceGetFieldValues":
            ids = args[1] if len(args) > 1 else ()
            per = self.fv_field_us
            dflt = self.fv_field_default_us
            total = self.fv_base_us
            for f in ids:
                fid = f[0] if type(f) is tuple else f
                total += per.get(int(fid), dflt)
            return total
        once = self.once.get(fname)
        if once is not None:
            key = (fname, *(_arg_key(a) for a in args))
            if key not in seen:
                seen.add(key)
                return once
        return self.us.get(fname, self.default_us)


def _arg_key(a: Any) -> Any:
    """A hashable stand-in for a call argument (a device handle by its address)."""
    if isinstance(a, (int, float, str, bytes)):
        return a
    try:
        return ctypes.cast(a, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return id(a)


def load_cost(spec: Any) -> Optional[CostModel]:
    """A CostModel from a name in COST_PROFILES, a path to a call-time JSON, a dict of that
    shape, or None / "" / "0" (no charges)."""
    if spec is None or spec in ("", "0", "off"):
        return None
    if isinstance(spec, CostModel):
        return spec
    name = ""
    per_field = False
    if isinstance(spec, str):
        name = spec
        per_field = spec.endswith("per-field")
        path = COST_PROFILES.get(spec, spec)
        if spec in ("1", "on"):
            name, path = "h200", COST_PROFILES["h200"]
        if not os.path.exists(path):
            raise ValueError(
                f"unknown cost profile {spec!r}: expected one of {sorted(COST_PROFILES)} "
                "or a call-time JSON file (tools/nvml_call_times.py)"
            )
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    elif isinstance(spec, dict):
        data = spec
        per_field = bool(data.get("per_field"))
    else:
        raise ValueError(f"a cost profile is a name, a path or a dict, not {spec!r}")
    us: Dict[str, float] = {}
    for row in data.get("per_tick", ()):
        fn = str(row["fn"])
        if fn not in _NOT_CHARGED:
            us[fn] = float(row["us_per_call"])
    once: Dict[str, float] = {}
    for fn, ms in data.get("init_top", ()):
        if fn in _SAME_AS or fn in _SAME_AS.values():
            us.setdefault(fn, float(ms) * 1000.0)  # nvmlInit: every call costs the same
        elif fn not in us and fn not in _NOT_CHARGED:
            once[fn] = float(ms) * 1000.0 / _INIT_CALLS.get(fn, 1)
    for alias, fn in _SAME_AS.items():
        if fn in us:
            us[alias] = us[fn]
    us.update({str(k): float(v) for k, v in data.get("call_us", {}).items()})
    cheap = sorted(v for v in us.values() if v < 200.0)
    default_us = float(data.get("default_us", cheap[len(cheap) // 2] if cheap else 20.0))
    fv_call = us.pop("nvmlDeviceGetFieldValues", 0.0)
    field_us = {int(k): float(v) for k, v in data.get("field_us", {}).items()}
    if per_field:
        timed = int(data.get("fields_timed", _H200_FIELDS_TIMED))
        return CostModel(us, default_us, 0.0, field_us, fv_call / timed, name, once)
    base = float(data.get("fv_base_us", fv_call))
    return CostModel(us, default_us, base, field_us, 0.0, name, once)


# The burn's buffer: a call hashes as much of it as its charge needs, in one go. hashlib
# releases the GIL while it hashes (from 2 KiB up), so a charged call lets go of the GIL about
# once, as a ctypes call into libnvidia-ml does. Burning in small chunks instead (2 KiB, a GIL
# hand-over every ~2 µs) made two threads' short calls take longer side by side than one
# after the other, and the reader pool look useless.
_BURN = memoryview(bytes(1 << 20))  # ~0.6 ms of sha256 here
_BURN_MIN = 4096  # below this a hash is too short to overlap (the loop's own Python)
_local = threading.local()
# Bytes sha256 hashes per µs of CPU, learnt as the fake burns (first guess: this machine).
_rate = [1500.0]


def _burn_until(end: float) -> None:
    """Spin until this thread's CPU clock reaches ``end`` (seconds), holding the GIL only
    between hashes (once or twice a call)."""
    # Imported only when charging: its libcrypto mapping would add ~1-2 MiB to the RSS of
    # every sampler run through the fake, and benchmarks measure that RSS.
    import hashlib

    tt = time.thread_time
    h = hashlib.sha256
    buf, cap = _BURN, len(_BURN)
    now = tt()
    while end - now > 4e-6:
        # Less ~1 µs: what the call, the slice and the clock read cost around the hash.
        n = min(cap, max(_BURN_MIN, int((end - now - 1e-6) * 1e6 * _rate[0])))
        h(buf[:n])
        t = tt()
        if t > now and n >= 65536:
            # Learn the rate from long hashes only: a short one is mostly call overhead.
            _rate[0] += 0.1 * (n / ((t - now) * 1e6) - _rate[0])
        now = t
    while now < end:  # the last few µs: too short to hash without overshooting
        now = tt()


def cpu_clock() -> float:
    """This thread's virtual CPU clock (s): what its calls were charged while the fake's
    ``virtual_cpu`` was on, and nothing else (the fake's own Python is free)."""
    return float(getattr(_local, "cpu_s", 0.0))


def charged(fname: str, fn: Any, fake_of: Callable[[], Any]) -> Any:
    """``fn`` costing what the cost model of the fake (``fake_of()``: its ``cost``, its
    ``init_seen`` and its ``charged_*`` counters) gives ``fname``; the outermost charged call
    only: a fake function calling another is charged once."""

    def call(*args: Any, **kw: Any) -> Any:
        _fake = fake_of()
        cost = _fake.cost
        if cost is None or getattr(_local, "depth", 0):
            return fn(*args, **kw)
        t0 = time.thread_time()
        _local.depth = 1
        try:
            return fn(*args, **kw)
        finally:
            _local.depth = 0
            us = cost.charge_us(fname, args, _fake.init_seen)
            _fake.charged_us[fname] += us
            _fake.charged_n[fname] += 1
            main = threading.current_thread() is threading.main_thread()
            _fake.charged_on[fname, "main" if main else "pool"] += 1
            if getattr(_fake, "virtual_cpu", False):
                _local.cpu_s = getattr(_local, "cpu_s", 0.0) + us * 1e-6
            else:
                _burn_until(t0 + us * 1e-6)

    call.__name__ = fname
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call
