"""Client-side parse rate: GPU-samples per CPU-second through StreamDecoder.

Records an hour of the healthy-8xa100 sim stream (8 GPUs, samples every second and a process
snapshot every two, per-link NVLink values) and feeds it line by line, the way a HostSession
does. Prints the rate for sample lines alone and for the whole stream including process and
links lines, each beside what parsing the same lines costs with no checks at all: orjson
alone, and the standard library's json.loads (issue 28's goals: sample lines at 1.2 M
GPU-samples per CPU-second or more, the whole stream at least as fast as json.loads alone).
Median of --runs rounds, each way in turn (CPU time of this process), as the machine is
shared; ``--compare PATH`` adds another checkout's decoder (its messages.py) to each round.

    .venv/bin/python bench/parse.py [--runs 7] [--compare OTHER/gui/gpufleet/core/wire/messages.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

import orjson
from gpufleet.core.wire.messages import StreamDecoder


def record(count: int) -> list[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--no-wait", "--count", str(count)],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    return out.splitlines()


def decode(lines: list[bytes], hello: bytes, decoder: type = StreamDecoder) -> float:
    """CPU seconds to decode ``lines`` after ``hello``, each message dropped as it comes (as
    orjson's objects are below: keeping them would time the garbage collector)."""
    d = decoder()
    d.feed(hello)
    feed = d.feed
    t0 = time.process_time()
    for line in lines:
        feed(line)
    dt = time.process_time() - t0
    assert d.bad_lines == 0, d.last_error
    return dt


def gpu_samples(lines: list[bytes], hello: bytes, decoder: type = StreamDecoder) -> int:
    """The GPU-samples ``decoder`` finds in ``lines`` (counted apart from the timed runs,
    so that counting costs the decoder nothing orjson alone does not pay)."""
    d = decoder()
    d.feed(hello)
    return sum(len(m.rows) for m in map(d.feed, lines) if type(m).__name__ == "Sample")


def loads_only(lines: list[bytes], loads: Callable[[bytes], object]) -> float:
    t0 = time.process_time()
    for line in lines:
        loads(line)
    return time.process_time() - t0


def other_decoder(path: str, name: str) -> type:
    """StreamDecoder of another messages.py (an older checkout's), to compare with."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod.StreamDecoder  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="PATH",
        help="another checkout's gui/gpufleet/core/wire/messages.py (may be given again)",
    )
    args = ap.parse_args()
    lines = record(3600)
    hello, rest = lines[0], lines[1:]
    samples = [ln for ln in rest if b'"kind":"sample"' in ln[:20]]
    n = gpu_samples(samples, hello)
    size = sum(len(ln) + 1 for ln in samples) / n
    print(f"stream: {len(rest)} lines, {n} GPU-samples, {size:.0f} bytes per GPU-sample")
    ways: dict[str, Callable[[list[bytes]], float]] = {
        "decoder": partial(decode, hello=hello),
        "orjson.loads alone": partial(loads_only, loads=orjson.loads),
        "json.loads alone": partial(loads_only, loads=json.loads),
    }
    for k, path in enumerate(args.compare, 1):
        other = other_decoder(path, f"compared_messages_{k}")
        assert gpu_samples(samples, hello, other) == n, f"{path} lost GPU-samples"
        ways[f"compared {k}"] = partial(decode, hello=hello, decoder=other)
        print(f"compared {k}: {path}")
    print(f"GPU-samples per CPU-second, median of {args.runs} rounds (each way in turn),")
    print("and each as a multiple of orjson.loads alone in the same run:")
    for label, part in (("sample lines only", samples), ("whole stream", rest)):
        took: dict[str, list[float]] = {w: [] for w in ways}
        for _ in range(args.runs):  # in turn, so that a change of load hits every way
            for w, fn in ways.items():
                took[w].append(fn(part))
        rate = {w: n / statistics.median(t) for w, t in took.items()}
        print(f"  {label}:")
        for w, r in rate.items():
            print(f"    {w:20s} {r:>11,.0f}   {r / rate['orjson.loads alone']:5.3f}x orjson")


if __name__ == "__main__":
    main()
