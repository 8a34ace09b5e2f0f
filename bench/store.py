"""History store benchmark: insert rate, bytes per GPU-day at 1 Hz, query times.

    .venv/bin/python bench/store.py [--gpus 8] [--hours 24] [--runs 1]

Writes a day of synthetic 8-GPU samples at 1 Hz (``tests.support.synth``: integer clocks and
temperatures, milliwatt power, growing counters, nulls for what an A100 lacks) into a fresh
store in a temporary directory, through the public ``Store.write`` (queue, writer thread,
batched transactions), then reads it back the way the GUI does.

The insert rate is given per wall-clock second and per CPU-second of the whole process
(``time.process_time``: the writer thread, SQLite and the enqueueing loop). On a shared
machine the CPU-second figure is the one to compare; ``--runs N`` repeats the insert into
fresh files and prints each run. Query times are the first (cold: nothing decoded or
cached yet) and the median of repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path[:0] = [str(ROOT), str(ROOT / "gui"), str(ROOT / "remote")]

from gpufleet.core.history.store import Store  # noqa: E402

from tests.support import synth  # noqa: E402


def timed(fn: object, repeat: int = 7) -> float:
    """Median wall time of ``fn()`` in ms."""
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


def insert(samples: list[Any], gpus: int, path: Path) -> tuple[float, float, float]:
    """Write everything, wait until committed; (wall s, CPU s, enqueue-only s)."""
    st = Store(path, queue_size=len(samples) + 10)
    st.write("bench", synth.make_hello("bench", gpus))
    start = time.perf_counter()
    cpu0 = time.process_time()
    for s in samples:
        st.write("bench", s)
    enq = time.perf_counter() - start
    st.flush()
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0  # both threads; robust to other load on the box
    assert st.dropped == 0 and st.errors == 0, (st.dropped, st.errors)
    st.close()  # checkpoints the WAL into the main file
    return wall, cpu, enq


def live(path: Path, hosts: int = 32, gpus: int = 8, seconds: int = 120) -> float:
    """CPU per second of data for ``hosts`` hosts at 1 Hz with a flush (commit) after every
    second, as the app does: each flush rewrites every host's open minute. Returns the
    fraction of one core."""
    t0 = synth.floor_minute(time.time() - 3600)
    per = [synth.make_samples(t0, seconds, gpus=gpus, seed=h) for h in range(hosts)]
    st = Store(path)
    cpu0 = time.process_time()
    for sec in range(seconds):
        for h in range(hosts):
            st.write(f"host{h}", per[h][sec])
        st.flush()
    cpu = time.process_time() - cpu0
    st.close()
    return cpu / seconds


def cold_and_median(fn: Any, repeat: int) -> str:
    t = time.perf_counter()
    fn()
    cold = (time.perf_counter() - t) * 1000
    return f"{cold:.1f} ms cold, {timed(fn, repeat):.1f} ms median"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--runs", type=int, default=1, help="insert runs (fresh file each)")
    args = ap.parse_args()
    n = int(args.hours * 3600)
    t0 = synth.floor_minute(time.time() - n - 120)
    samples = synth.make_samples(t0, n, gpus=args.gpus)
    gpu_samples = n * args.gpus
    print(f"history store, {args.gpus} GPUs x {args.hours:g} h at 1 Hz = {gpu_samples} GPU-samples")
    with tempfile.TemporaryDirectory() as d:
        rates = []
        for run in range(args.runs):
            path = Path(d) / f"history-{run}.sqlite"
            wall, cpu, enq = insert(samples, args.gpus, path)
            rates.append(gpu_samples / cpu)
            print(
                f"  insert (write -> committed):  {gpu_samples / cpu:,.0f} GPU-samples per "
                f"CPU-second ({cpu:.2f} CPU-s); {gpu_samples / wall:,.0f} per wall-second "
                f"({wall:.2f} s); enqueue alone {gpu_samples / enq:,.0f}/s"
            )
        if args.runs > 1:
            print(
                f"  insert over {args.runs} runs:       median {statistics.median(rates):,.0f}, "
                f"best {max(rates):,.0f} GPU-samples per CPU-second"
            )
        size = path.stat().st_size
        per_gpu_day = size / args.gpus / (args.hours / 24)
        st = Store(path)
        end = t0 + n
        hour = (end - 3600, end)
        q1_raw = cold_and_median(lambda: st.query("bench", 3, "power_w", *hour), 7)
        q1_plot = cold_and_median(
            lambda: st.query("bench", 4, "power_w", *hour, max_points=1000), 7
        )
        q24 = cold_and_median(
            lambda: [
                st.query("bench", g, "temp_gpu_c", t0, end, max_points=1000)
                for g in range(args.gpus)
            ],
            5,
        )
        q24_minmax = cold_and_median(
            lambda: [
                st.query_minmax("bench", g, "sm_clock_mhz", t0, end, max_points=1000)
                for g in range(args.gpus)
            ],
            5,
        )
        exp = timed(lambda: sum(1 for _ in st.samples("bench", *hour)), repeat=3)
        st.close()
        live_core = live(Path(d) / "live.sqlite")
    print(
        f"  database size:                {size / 1e6:.1f} MB = {per_gpu_day / 1e6:.2f} MB per "
        f"GPU-day = {7 * per_gpu_day / 1e6:.1f} MB per GPU-week"
    )
    print(f"  query 1 h, 1 GPU, raw:        {q1_raw} (3600 points)")
    print(f"  query 1 h, 1 GPU, 1000 pts:   {q1_plot}")
    print(f"  query {args.hours:g} h, {args.gpus} GPUs, 1000 pts: {q24} (rollups)")
    print(f"  query_minmax {args.hours:g} h, {args.gpus} GPUs: {q24_minmax}")
    print(f"  samples() 1 h, {args.gpus} GPUs:        {exp:.0f} ms (Sample objects, for export)")
    print(
        f"  live, 32 hosts x 8 GPUs at 1 Hz, committed every second: {100 * live_core:.1f} % "
        "of a core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
