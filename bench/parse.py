"""Client-side parse rate: GPU-samples per CPU-second through StreamDecoder.

Records an hour of the healthy-8xa100 sim stream (8 GPUs, samples every second and a process
snapshot every two, per-link NVLink values) and feeds it line by line, the way a HostSession
does. Prints the rate for sample lines alone and for the whole stream including process and
links lines, each beside what parsing the same lines costs with no checks at all: orjson
alone, and the standard library's json.loads (issue 28's goals: sample lines at 1.2 M
GPU-samples per CPU-second or more, the whole stream at least as fast as json.loads alone).
Median of --runs runs (CPU time of this process), as the machine is shared.

    .venv/bin/python bench/parse.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import orjson
from gpufleet.core.wire.messages import Sample, StreamDecoder


def record(count: int) -> list[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--no-wait", "--count", str(count)],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def decode(lines: list[bytes], hello: bytes) -> tuple[float, int]:
    """CPU seconds to decode ``lines`` after ``hello``, and the GPU-samples they held."""
    d = StreamDecoder()
    d.feed(hello)
    n = 0
    t0 = time.process_time()
    for line in lines:
        m = d.feed(line)
        if isinstance(m, Sample):
            n += len(m.rows)
    dt = time.process_time() - t0
    assert d.bad_lines == 0, d.last_error
    return dt, n


def loads_only(lines: list[bytes], loads: Callable[[bytes], object]) -> float:
    t0 = time.process_time()
    for line in lines:
        loads(line)
    return time.process_time() - t0


def median_rate(n: int, runs: int, once: Callable[[], float]) -> float:
    return n / statistics.median(once() for _ in range(runs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    lines = record(3600)
    hello, rest = lines[0], lines[1:]
    samples = [ln for ln in rest if b'"kind":"sample"' in ln[:20]]
    _, n = decode(samples, hello)
    size = sum(len(ln) + 1 for ln in samples) / n
    print(f"stream: {len(rest)} lines, {n} GPU-samples, {size:.0f} bytes per GPU-sample")
    print(f"GPU-samples per CPU-second, median of {runs} runs:")
    for label, part in (("sample lines only", samples), ("whole stream", rest)):
        dec = median_rate(n, runs, lambda part=part: decode(part, hello)[0])
        oj = median_rate(n, runs, lambda part=part: loads_only(part, orjson.loads))
        js = median_rate(n, runs, lambda part=part: loads_only(part, json.loads))
        print(
            f"  {label:18s}: decoder {dec:>10,.0f}   orjson.loads alone {oj:>10,.0f}   "
            f"json.loads alone {js:>10,.0f}"
        )


if __name__ == "__main__":
    main()
