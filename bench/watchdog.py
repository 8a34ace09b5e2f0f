"""Benchmark of the armed watchdog's per-tick work in the sampler daemon: the idle test over
one sample's rows (the only thing it adds to a tick while no action is pending).

    .venv/bin/python bench/watchdog.py [--gpus 8]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "remote"))

from gpufleet_sampler import protocol  # noqa: E402
from gpufleet_sampler.watchdog import host_idle  # noqa: E402


def rows(n: int, util: float) -> list[list[object]]:
    width = len(protocol.COLUMN_NAMES)
    out = []
    for i in range(n):
        r: list[object] = [i] + [None] * width
        r[protocol.ROW_POS["util_gpu_pct"]] = util
        r[protocol.ROW_POS["mem_used_bytes"]] = 1.0e9
        out.append(r)
    return out


def per_call(fn: object, number: int = 20000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=8)
    n = ap.parse_args().gpus
    totals = {i: 80.0e9 for i in range(n)}
    idle, busy = rows(n, 1.0), rows(n, 90.0)
    t_idle = per_call(lambda: host_idle(idle, totals))
    t_busy = per_call(lambda: host_idle(busy, totals))
    print(
        f"host_idle, {n} idle GPUs: {t_idle * 1e6:.2f} µs per tick ({t_idle * 1e6 / n:.2f} µs/GPU)"
    )
    print(f"host_idle, first GPU busy: {t_busy * 1e6:.2f} µs per tick")


if __name__ == "__main__":
    main()
