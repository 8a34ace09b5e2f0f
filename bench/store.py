"""History store benchmark: insert rate, bytes per GPU-day at 1 Hz, query times.

    .venv/bin/python bench/store.py [--gpus 8] [--hours 24]

Writes a day of synthetic 8-GPU samples at 1 Hz (``gpufleet.core.synth``: integer clocks and
temperatures, milliwatt power, growing counters, nulls for what an A100 lacks) into a fresh
store in a temporary directory, through the public ``Store.write`` (queue, writer thread,
batched transactions), then reads it back the way the GUI does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "gui"), str(ROOT / "remote")]

from gpufleet.core import synth  # noqa: E402
from gpufleet.core.store import Store  # noqa: E402


def timed(fn: object, repeat: int = 7) -> float:
    """Median wall time of ``fn()`` in ms."""
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--hours", type=float, default=24)
    args = ap.parse_args()
    n = int(args.hours * 3600)
    t0 = synth.floor_minute(time.time() - n - 120)
    samples = synth.make_samples(t0, n, gpus=args.gpus)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "history.sqlite"
        st = Store(path, queue_size=n + 10)
        st.write("bench", synth.make_hello("bench", args.gpus))
        start = time.perf_counter()
        cpu0 = time.process_time()
        for s in samples:
            st.write("bench", s)
        enq = time.perf_counter() - start
        st.flush()
        total = time.perf_counter() - start
        cpu = time.process_time() - cpu0  # both threads; robust to other load on the box
        gpu_samples = n * args.gpus
        assert st.dropped == 0, st.dropped
        st.close()  # checkpoints the WAL into the main file
        size = path.stat().st_size
        per_gpu_day = size / args.gpus / (args.hours / 24)
        st = Store(path)
        end = t0 + n
        hour = (end - 3600, end)
        q1_raw = timed(lambda: st.query("bench", 3, "power_w", *hour))
        q1_plot = timed(lambda: st.query("bench", 3, "power_w", *hour, max_points=1000))
        q24 = timed(
            lambda: [
                st.query("bench", g, "temp_gpu_c", t0, end, max_points=1000)
                for g in range(args.gpus)
            ],
            repeat=5,
        )
        q24_minmax = timed(
            lambda: [
                st.query_minmax("bench", g, "sm_clock_mhz", t0, end, max_points=1000)
                for g in range(args.gpus)
            ],
            repeat=5,
        )
        exp = timed(lambda: sum(1 for _ in st.samples("bench", *hour)), repeat=3)
        st.close()
    print(f"history store, {args.gpus} GPUs x {args.hours:g} h at 1 Hz = {gpu_samples} GPU-samples")
    print(
        f"  insert (write -> committed):  {gpu_samples / total:,.0f} GPU-samples/s "
        f"({total:.2f} s wall; {gpu_samples / cpu:,.0f} per CPU-second; "
        f"enqueue alone {gpu_samples / enq:,.0f}/s)"
    )
    print(
        f"  database size:                {size / 1e6:.1f} MB = {per_gpu_day / 1e6:.2f} MB per "
        f"GPU-day = {7 * per_gpu_day / 1e6:.1f} MB per GPU-week"
    )
    print(f"  query 1 h, 1 GPU, raw:        {q1_raw:.1f} ms (3600 points)")
    print(f"  query 1 h, 1 GPU, 1000 pts:   {q1_plot:.1f} ms")
    print(f"  query {args.hours:g} h, {args.gpus} GPUs, 1000 pts: {q24:.1f} ms (rollups)")
    print(f"  query_minmax {args.hours:g} h, {args.gpus} GPUs: {q24_minmax:.1f} ms")
    print(f"  samples() 1 h, {args.gpus} GPUs:        {exp:.0f} ms (Sample objects, for export)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
