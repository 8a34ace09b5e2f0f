"""History store benchmark: insert rate, bytes per GPU-day at 1 Hz, query times.

    .venv/bin/python bench/store.py [--gpus 8] [--hours 24] [--runs 1] [--compare REV ...]

Writes a day of synthetic 8-GPU samples at 1 Hz (``tests.support.synth``: integer clocks and
temperatures, milliwatt power, growing counters, nulls for what an A100 lacks) into a fresh
store in a temporary directory, through the public ``Store.write`` (queue, writer thread,
batched transactions), then reads it back the way the GUI does.

The insert rate is given per wall-clock second and per CPU-second of the whole process
(``time.process_time``: the writer thread, SQLite and the enqueueing loop). On a shared
machine the CPU-second figure is the one to compare; ``--runs N`` repeats the insert into
fresh files and prints each run. Query times are the first (cold: nothing decoded or
cached yet) and the median of repeats.

``--compare REV`` (repeatable) measures the writer of other commits against this tree's in
the same run: each revision is unpacked with ``git archive`` into a temporary directory,
and every insert (this tree's too) runs in a fresh subprocess that imports that tree's
``Store`` and synth, interleaved run by run (the order rotating), so the figures share the
machine's load. A machine-independent target is a ratio between trees, not a rate.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def use_tree(tree: Path) -> tuple[Any, Any]:
    """(Store class, synth module) of the source tree at ``tree``: its gui/, remote/ and
    root go first on sys.path (the editable install's finder comes after them)."""
    sys.path[:0] = [str(tree), str(tree / "gui"), str(tree / "remote")]
    from gpufleet.core.history.store import Store

    try:  # the benchmarks use the tests' own helpers, not copies; older trees had it in gui
        from tests.support import synth
    except ImportError:
        from gpufleet.core.wire import synth  # type: ignore[no-redef]
    where = Path(sys.modules[Store.__module__].__file__ or "").resolve()
    if not where.is_relative_to(tree.resolve()):
        raise SystemExit(f"imported {where}, not the tree at {tree}")
    return Store, synth


def timed(fn: object, repeat: int = 7) -> float:
    """Median wall time of ``fn()`` in ms."""
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append((time.perf_counter() - t) * 1000)
    return statistics.median(runs)


def insert(
    Store: Any, synth: Any, samples: list[Any], gpus: int, path: Path
) -> tuple[float, float, float]:
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
    assert st.dropped == 0 and getattr(st, "errors", 0) == 0, st.dropped
    st.close()  # checkpoints the WAL into the main file
    return wall, cpu, enq


def live(
    Store: Any, synth: Any, path: Path, hosts: int = 32, gpus: int = 8, seconds: int = 120
) -> float:
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


def worker(tree: Path, gpus: int, hours: float) -> int:
    """One insert with the tree's own Store, in this (fresh) process; prints its JSON."""
    Store, synth = use_tree(tree)
    n = int(hours * 3600)
    samples = synth.make_samples(synth.floor_minute(time.time() - n - 120), n, gpus=gpus)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "history.sqlite"
        wall, cpu, _enq = insert(Store, synth, samples, gpus, path)
        size = path.stat().st_size
    print(json.dumps({"cpu": cpu, "wall": wall, "size": size, "gpu_samples": n * gpus}))
    return 0


def unpack(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``git archive``) under ``into``; leaves the repository alone."""
    tree = into / rev.replace("/", "_").replace("^", "_parent").replace("~", "_back")
    tree.mkdir()
    tar = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        tf.extractall(tree, filter="data")
    return tree


def run_worker(tree: Path, gpus: int, hours: float) -> dict[str, float]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree)]
    cmd += ["--gpus", str(gpus), "--hours", str(hours)]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree)
    if out.returncode:
        raise SystemExit(f"the insert of {tree} failed:\n{out.stderr}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def compare(revs: list[str], gpus: int, hours: float, runs: int) -> int:
    """This tree's insert and each revision's, interleaved, one subprocess each."""
    print(f"history store insert, {gpus} GPUs x {hours:g} h at 1 Hz, {runs} interleaved runs")
    with tempfile.TemporaryDirectory() as d:
        trees = [("this tree", ROOT)] + [(rev, unpack(rev, Path(d))) for rev in revs]
        rates: dict[str, list[float]] = {label: [] for label, _ in trees}
        sizes: dict[str, float] = {}
        for run in range(runs):
            k = run % len(trees)
            for label, tree in trees[k:] + trees[:k]:
                r = run_worker(tree, gpus, hours)
                rates[label].append(r["gpu_samples"] / r["cpu"])
                sizes[label] = r["size"]
            print(
                f"  run {run + 1}: "
                + ", ".join(f"{label} {rates[label][-1]:,.0f}" for label, _ in trees)
            )
    base = statistics.median(rates["this tree"])
    per_day = 24 / hours / gpus / 1e6
    for label, _ in trees:
        med = statistics.median(rates[label])
        # The ratio within each run (the two inserts ran seconds apart) is steadier on a
        # shared machine than the ratio of medians.
        pairs = zip(rates["this tree"], rates[label], strict=True)
        paired = statistics.median(a / b for a, b in pairs)
        print(
            f"  {label:>12}: median {med:,.0f} GPU-samples per CPU-second "
            f"(range {min(rates[label]):,.0f}-{max(rates[label]):,.0f}); this tree / it = "
            f"{base / med:.2f}x (median of per-run ratios {paired:.2f}x); "
            f"{sizes[label] * per_day:.2f} MB per GPU-day"
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--runs", type=int, default=1, help="insert runs (fresh file each)")
    ap.add_argument(
        "--compare",
        action="append",
        metavar="REV",
        help="also insert with the writer of this git revision, interleaved (repeatable); "
        "only the insert is measured then",
    )
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        return worker(args.worker, args.gpus, args.hours)
    if args.compare:
        return compare(args.compare, args.gpus, args.hours, args.runs)
    return full(args.gpus, args.hours, args.runs)


def full(gpus: int, hours: float, runs: int) -> int:
    """Insert (in this process), size, queries and the live load of this tree's store."""
    Store, synth = use_tree(ROOT)
    n = int(hours * 3600)
    t0 = synth.floor_minute(time.time() - n - 120)
    samples = synth.make_samples(t0, n, gpus=gpus)
    gpu_samples = n * gpus
    print(f"history store, {gpus} GPUs x {hours:g} h at 1 Hz = {gpu_samples} GPU-samples")
    with tempfile.TemporaryDirectory() as d:
        rates = []
        for run in range(runs):
            path = Path(d) / f"history-{run}.sqlite"
            wall, cpu, enq = insert(Store, synth, samples, gpus, path)
            rates.append(gpu_samples / cpu)
            print(
                f"  insert (write -> committed):  {gpu_samples / cpu:,.0f} GPU-samples per "
                f"CPU-second ({cpu:.2f} CPU-s); {gpu_samples / wall:,.0f} per wall-second "
                f"({wall:.2f} s); enqueue alone {gpu_samples / enq:,.0f}/s"
            )
        if runs > 1:
            print(
                f"  insert over {runs} runs:       median {statistics.median(rates):,.0f}, "
                f"best {max(rates):,.0f} GPU-samples per CPU-second"
            )
        size = path.stat().st_size
        per_gpu_day = size / gpus / (hours / 24)
        st = Store(path)
        end = t0 + n
        hour = (end - 3600, end)
        q1_raw = cold_and_median(lambda: st.query("bench", 3, "power_w", *hour), 7)
        q1_plot = cold_and_median(
            lambda: st.query("bench", 4, "power_w", *hour, max_points=1000), 7
        )
        q24 = cold_and_median(
            lambda: [
                st.query("bench", g, "temp_gpu_c", t0, end, max_points=1000) for g in range(gpus)
            ],
            5,
        )
        q24_minmax = cold_and_median(
            lambda: [
                st.query_minmax("bench", g, "sm_clock_mhz", t0, end, max_points=1000)
                for g in range(gpus)
            ],
            5,
        )
        exp = timed(lambda: sum(1 for _ in st.samples("bench", *hour)), repeat=3)
        st.close()
        live_core = live(Store, synth, Path(d) / "live.sqlite")
    print(
        f"  database size:                {size / 1e6:.1f} MB = {per_gpu_day / 1e6:.2f} MB per "
        f"GPU-day = {7 * per_gpu_day / 1e6:.1f} MB per GPU-week"
    )
    print(f"  query 1 h, 1 GPU, raw:        {q1_raw} (3600 points)")
    print(f"  query 1 h, 1 GPU, 1000 pts:   {q1_plot}")
    print(f"  query {hours:g} h, {gpus} GPUs, 1000 pts: {q24} (rollups)")
    print(f"  query_minmax {hours:g} h, {gpus} GPUs: {q24_minmax}")
    print(f"  samples() 1 h, {gpus} GPUs:        {exp:.0f} ms (Sample objects, for export)")
    print(
        f"  live, 32 hosts x 8 GPUs at 1 Hz, committed every second: {100 * live_core:.1f} % "
        "of a core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
