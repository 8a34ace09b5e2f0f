"""Time every pynvml call the sampler makes on this host and print the costliest, as JSON.

A device-check helper: the sampler's own work per tick is small; on a real driver most of a
tick is spent inside NVML. This wraps each pynvml function with a timer, runs the real nvml
backend and loop for ``--ticks`` ticks, and prints per function: calls, total and mean µs.
Run with ``PYTHONPATH=remote``. Stdlib + pynvml only.

It also prints VmRSS after ``import pynvml``, after the backend started (``nvmlInit`` maps
libnvidia-ml and the driver's memory) and after the ticks.

``--bisect-fields`` then times each field of the backend's per-tick
``nvmlDeviceGetFieldValues`` call alone (GPU 0; the medium ticks' error counters included),
and the whole list in one call, ``--bisect-reps`` rounds ``--interval`` apart (so that no
answer is one NVML cached a moment ago), the fields in a rotated order each round. It answers
which field makes that call cost ~4 ms on an H200; that was not measured when the first
device check ran.
"""

import argparse
import json
import time
from typing import Any, Callable, Dict, List


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ticks", type=int, default=15)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument(
        "--bisect-fields",
        action="store_true",
        help="then time each field of the per-tick field-value call alone (GPU 0)",
    )
    ap.add_argument("--bisect-reps", type=int, default=10, help="rounds for --bisect-fields")
    args = ap.parse_args()
    import pynvml

    stats: Dict[str, List[float]] = {}

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                s = stats.setdefault(name, [0, 0.0])
                s[0] += 1
                s[1] += time.perf_counter() - t0

        call.__wrapped__ = fn  # type: ignore[attr-defined]
        return call

    for name in dir(pynvml):
        obj = getattr(pynvml, name)
        if name.startswith("nvml") and callable(obj) and not isinstance(obj, type):
            setattr(pynvml, name, wrap(name, obj))

    from gpufleet_sampler.backends.nvml import NvmlBackend
    from gpufleet_sampler.loop import Sampler

    rss = {"after_import_mib": _rss_mib()}
    t_init = time.perf_counter()
    backend = NvmlBackend(interval=args.interval)
    # What nvmlInit maps (libnvidia-ml and the driver's own mappings) shows up here.
    rss["after_backend_start_mib"] = _rss_mib()
    sampler = Sampler(backend, interval=args.interval, procs_interval=2.0)
    sampler.hello()
    init_s = time.perf_counter() - t_init
    stats_init = {k: list(v) for k, v in stats.items()}
    stats.clear()
    start = time.monotonic()
    tick_wall = []
    for k in range(args.ticks):
        due = start + k * args.interval
        time.sleep(max(0.0, due - time.monotonic()))
        t0 = time.perf_counter()
        list(sampler.step(time.monotonic(), time.time()))
        tick_wall.append(time.perf_counter() - t0)
    rss["after_ticks_mib"] = _rss_mib()
    bisect = None
    if args.bisect_fields:
        bisect = _bisect_fields(pynvml, backend, args.bisect_reps, args.interval)
    backend.close()
    rows = sorted(stats.items(), key=lambda kv: -kv[1][1])
    print(
        json.dumps(
            {
                "rss": rss,
                "bisect_fields": bisect,
                "init_s": round(init_s, 3),
                "init_top": sorted(
                    ((k, round(v[1] * 1e3, 2)) for k, v in stats_init.items()),
                    key=lambda kv: -kv[1],
                )[:8],
                "tick_wall_ms": sorted(round(t * 1e3, 2) for t in tick_wall),
                "per_tick": [
                    {
                        "fn": k,
                        "calls_per_tick": round(v[0] / args.ticks, 2),
                        "ms_per_tick": round(v[1] * 1e3 / args.ticks, 3),
                        "us_per_call": round(v[1] * 1e6 / v[0], 1),
                    }
                    for k, v in rows[:25]
                ],
            },
            indent=1,
        )
    )
    return 0


def _bisect_fields(nvml: Any, backend: Any, reps: int, interval: float) -> Dict[str, Any]:
    """Time each per-tick field of GPU 0 alone, and all of them in one call, in µs."""
    gpus = getattr(backend, "_gpus", [])
    g = next((x for x in gpus if not x.lost), None)
    if g is None:
        return {"error": "no GPU to bisect"}
    # Every field group the backend reads (per tick, counters, error counters): time them all.
    layouts = getattr(g, "fv_layouts", None) or {}
    ids = list(layouts[max(layouts)][1]) if layouts else []
    if not ids:
        return {"error": "this GPU answers no per-tick field"}
    fv = nvml.nvmlDeviceGetFieldValues  # the wrapped one: calls made here are not counted
    fv = getattr(fv, "__wrapped__", fv)
    times: Dict[str, List[float]] = {_fid(f): [] for f in ids}
    whole: List[float] = []
    answers: Dict[str, str] = {}
    for rnd in range(max(1, reps)):
        if rnd:
            time.sleep(interval)
        k = rnd % len(ids)
        for f in ids[k:] + ids[:k]:
            t0 = time.perf_counter()
            r = fv(g.h, [f])
            times[_fid(f)].append(time.perf_counter() - t0)
            ret = int(r[0].nvmlReturn)
            answers[_fid(f)] = f"ok, type {int(r[0].valueType)}" if ret == 0 else _err(nvml, ret)
        t0 = time.perf_counter()
        fv(g.h, ids)
        whole.append(time.perf_counter() - t0)
    per = [
        {
            "field": name,
            "answer": answers.get(name),
            "us_median": round(_median(v) * 1e6, 1),
            "us_max": round(max(v) * 1e6, 1),
        }
        for name, v in times.items()
    ]
    per.sort(key=lambda e: -float(e["us_median"]))
    return {
        "gpu": g.index,
        "fields": len(ids),
        "rounds": max(1, reps),
        "whole_call_us_median": round(_median(whole) * 1e6, 1),
        "sum_of_single_us_median": round(sum(float(e["us_median"]) for e in per), 1),
        "per_field": per,
    }


def _err(nvml: Any, ret: int) -> str:
    """An NVML return code by name ("NotSupported")."""
    cls = getattr(nvml.NVMLError, "_valClassMapping", {}).get(ret)
    return getattr(cls, "__name__", f"NVMLError {ret}").replace("NVMLError_", "")


def _rss_mib() -> float:
    """This process's VmRSS in MiB (0.0 where /proc has none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    return 0.0


def _fid(f: Any) -> str:
    """A field id as text: "197", or "138/4294967295" for (id, scope)."""
    return f"{f[0]}/{f[1]}" if isinstance(f, tuple) else str(f)


def _median(v: List[float]) -> float:
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


if __name__ == "__main__":
    raise SystemExit(main())
