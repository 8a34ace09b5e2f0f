"""``gpufleet compare`` on two 2-hour windows of 8 GPUs at 1 Hz (the target: under 2 s).

    .venv/bin/python bench/compare.py [--hours 2] [--gpus 8] [--repeat 3]

Builds A (a healthy training run) and B (the same with a thermal throttle on GPU 3 and a
process sharing GPU 5) as protocol lines with the tests' stream writer
(``tests/support/compare_streams.py``), writes them to a history store and to files, and
prints the best of ``--repeat`` timings of: reading both windows from the files, reading
them from the store, and the comparison itself (series, work phases, attribution, JSON).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.compare import compare
from gpufleet.core.verdicts.compare.report import as_json
from gpufleet.core.verdicts.window import from_store, from_stream_file
from gpufleet.core.wire.messages import StreamDecoder

from tests.support import compare_streams as cs

DAY = 86_400.0


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--hours", type=float, default=2.0)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    seconds = int(args.hours * 3600)
    t0 = float(int(time.time() - 2 * DAY))
    effects = [cs.thermal((3,)), cs.shared_gpu((5,))]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        pa = cs.write(d / "a.jsonl", cs.Run(seconds=seconds, gpus=args.gpus, seed=1, t0=t0))
        run_b = cs.Run(seconds=seconds, gpus=args.gpus, seed=2, t0=t0 + DAY, effects=effects)
        pb = cs.write(d / "b.jsonl", run_b)
        store = Store(d / "h.sqlite")
        for path in (pa, pb):
            dec = StreamDecoder()
            for line in path.read_bytes().splitlines():
                m = dec.feed(line)
                if m is not None:
                    store.write("h100-a", m)
        store.flush()
        t_files, (wa, wb) = best(lambda: (from_stream_file(pa), from_stream_file(pb)), args.repeat)
        t_store, _ = best(
            lambda: (
                from_store(store, "h100-a", t0, t0 + seconds),
                from_store(store, "h100-a", t0 + DAY, t0 + DAY + seconds),
            ),
            args.repeat,
        )
        store.close()
        t_cmp, result = best(lambda: as_json(compare(wa, wb)), args.repeat)
    n = len(wa.samples) + len(wb.samples)
    print(f"windows: 2 x {args.hours:g} h, {args.gpus} GPUs, {n} samples, {n * args.gpus} rows")
    print(f"read both from files:   {t_files:6.2f} s")
    print(f"read both from store:   {t_store:6.2f} s")
    print(f"compare (+ JSON):       {t_cmp:6.2f} s")
    print(f"files + compare:        {t_files + t_cmp:6.2f} s")
    print(f"store + compare:        {t_store + t_cmp:6.2f} s")
    causes = [(c["cause"], c["gpus"], c["share_pct"]) for c in result["causes"]]
    print(f"verdict: {result['verdict']}, slower by {result['slower_by_pct']} %, {causes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
