"""Time every pynvml call the sampler makes on this host and print the costliest, as JSON.

A device-check helper: the sampler's own work per tick is small; on a real driver most of a
tick is spent inside NVML. This wraps each pynvml function with a timer, runs the real nvml
backend and loop for ``--ticks`` ticks, and prints per function: calls, total and mean µs.
Run with ``PYTHONPATH=remote``. Stdlib + pynvml only.
"""

import argparse
import json
import time
from typing import Any, Callable, Dict, List


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ticks", type=int, default=15)
    ap.add_argument("--interval", type=float, default=1.0)
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

        return call

    for name in dir(pynvml):
        obj = getattr(pynvml, name)
        if name.startswith("nvml") and callable(obj) and not isinstance(obj, type):
            setattr(pynvml, name, wrap(name, obj))

    from gpufleet_sampler.backends.nvml import NvmlBackend
    from gpufleet_sampler.loop import Sampler

    t_init = time.perf_counter()
    backend = NvmlBackend(interval=args.interval)
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
    backend.close()
    rows = sorted(stats.items(), key=lambda kv: -kv[1][1])
    print(
        json.dumps(
            {
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


if __name__ == "__main__":
    raise SystemExit(main())
