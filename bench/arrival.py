"""The arrival benchmark's cost on the laptop: the CPU the laptop's process spends while a
whole benchmark runs on 8 stand-in GPUs (the fake torch and fake NVML of the tests, through
the local link, the path ``gpufleet bench`` takes), apart from the payload's own CPU (the
"instance": child processes). Also the run's wall time against its bound and the payload's
peak memory.

    .venv/bin/python bench/arrival.py [--gpus 8] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "remote"))

from gpufleet.core.config.hostconfig import HostConfig  # noqa: E402
from gpufleet.core.fleet.fleet import Fleet  # noqa: E402
from gpufleet.core.pipeline.bench import run_bench  # noqa: E402
from gpufleet_sampler.benchmark.supervisor import SETUP_GRACE_S  # noqa: E402

from tests.support.bench_standin import card, write_instance  # noqa: E402


def cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(write_instance(Path(tmp), [card() for _ in range(args.gpus)]))
        host = HostConfig(name="standin", host="localhost", transport="local", backend="nvml")
        fleet = Fleet([host])
        lines = [0]

        def on_message(_obj: object) -> None:
            lines[0] += 1

        self0, kids0, t0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN), time.time()
        result = run_bench(fleet, host, Path(tmp) / "h.sqlite", on_message, print, None,
                           args.seconds)  # fmt: skip
        wall = time.time() - t0
        laptop = cpu(resource.RUSAGE_SELF) - self0
        payload = cpu(resource.RUSAGE_CHILDREN) - kids0
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    measured = sum(len(g["measured"]) for g in result["gpus"])
    print(f"Arrival benchmark on {args.gpus} stand-in GPUs, --seconds {args.seconds:g}; "
          f"Python {sys.version.split()[0]}")  # fmt: skip
    print(f"  verdict {result['verdict']}, {measured} figures, {lines[0]} progress lines")
    print(f"  wall {wall:.1f} s (bound {args.seconds + SETUP_GRACE_S:.0f} s)")
    print(f"  laptop process CPU {laptop:.2f} s = {laptop / wall * 100:.2f} % of one core")
    print(f"  payload (instance) CPU {payload:.1f} s; its largest process {peak_mib:.0f} MiB RSS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
