"""Client-side parse rate: GPU-samples per CPU-second through StreamDecoder.

Records an hour of the healthy-8xa100 sim stream (8 GPUs, samples every second and a process
snapshot every two) and feeds it line by line, the way a HostSession does. Prints the rate for
sample lines alone (the budget: over 250,000 GPU-samples/s on one core) and for the
whole stream including process snapshots.

    .venv/bin/python bench/parse.py
"""

from __future__ import annotations

import subprocess
import sys
import time

from gpufleet.core.wire.messages import Sample, StreamDecoder


def record(count: int) -> list[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--no-wait", "--count", str(count)],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def rate(lines: list[bytes], hello: bytes) -> tuple[float, float]:
    best = 0.0
    n = 0
    for _ in range(5):
        d = StreamDecoder()
        d.feed(hello)
        n = 0
        t0 = time.process_time()
        for line in lines:
            m = d.feed(line)
            if isinstance(m, Sample):
                n += len(m.rows)
        dt = time.process_time() - t0
        best = max(best, n / dt)
    return best, n


def main() -> None:
    lines = record(3600)
    hello, rest = lines[0], lines[1:]
    samples = [ln for ln in rest if b'"kind":"sample"' in ln[:20]]
    s_rate, n = rate(samples, hello)
    a_rate, _ = rate(rest, hello)
    size = sum(len(ln) + 1 for ln in samples) / n
    print(f"stream: {len(rest)} lines, {n} GPU-samples, {size:.0f} bytes per GPU-sample")
    print(f"sample lines only : {s_rate:>10,.0f} GPU-samples per CPU-second (best of 5)")
    print(f"whole stream      : {a_rate:>10,.0f} GPU-samples per CPU-second (with procs lines)")


if __name__ == "__main__":
    main()
