"""Rule engine + cost tracker over a fleet: CPU per simulated second, as % of one core.

    .venv/bin/python bench/rules.py [--hosts 32] [--gpus 8] [--minutes 10]

Feeds every shipped rule (and the cost tracker the engine owns) with 1 Hz samples of
``hosts`` × ``gpus`` GPUs for ``minutes`` simulated minutes, plus a process snapshot every
2 s per host. Samples are built before the clock starts (parsing is the client's budget, not
this one); the figure is the engine's process CPU time divided by the simulated time. A few
hosts run hot (thermal bits set, firing alerts) and one is idle, so the firing and pending
paths are exercised too. Target: under 2 % of one core for 256 GPUs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "remote"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))

from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.wire.messages import Message, Proc, Procs, Sample, parse_object
from gpufleet_sampler import protocol

GIB = 1 << 30


def hello(n: int) -> Message:
    nominal = {
        "sm_clock_max_mhz": 1410, "power_default_w": 400.0, "power_enforced_w": 400.0,
        "temp_slowdown_c": 89, "temp_mem_max_c": 95, "pcie_max_gen": 4, "pcie_max_width": 16,
        "nvlink_links": 12, "nvlink_link_bps": 25e9, "mem_total_bytes": 80 * GIB,
    }  # fmt: skip
    return parse_object(
        {
            "kind": "hello",
            "protocol": 1,
            "interval_s": 1.0,
            "columns": protocol.hello_columns(),
            "gpus": [
                {"index": i, "uuid": f"GPU-{i}", "name": "A100", "nominal": nominal}
                for i in range(n)
            ],
        }
    )


def build(hosts: int, gpus: int, seconds: int) -> list[tuple[str, Message]]:
    rnd = random.Random(1)
    cols = protocol.COLUMN_NAMES
    h = hello(gpus)
    out: list[tuple[str, Message]] = [(f"h{k}", h) for k in range(hosts)]
    t0 = 1.7e9
    for s in range(seconds):
        for k in range(hosts):
            hot = k % 8 == 1
            idle = k == 0
            rows = []
            for g in range(gpus):
                v = {
                    "util_gpu_pct": 0 if idle else 95 + rnd.random() * 4,
                    "sm_clock_mhz": 1300 if hot else 1410, "temp_gpu_c": 86 if hot else 65,
                    "temp_mem_c": 75, "power_w": 380.0, "power_limit_w": 400.0, "pstate": 0,
                    "clock_reasons": 0x20 if hot else 0, "mem_used_bytes": 0 if idle else 70 * GIB,
                    "pcie_gen": 4, "pcie_width": 16, "nvlink_tx_bps": 2e11, "nvlink_rx_bps": 2e11,
                    "nvlink_up": 12, "ecc_dbe_vol": 0, "remap_pending": 0, "remap_failed": 0,
                    "retired_pending": 0, "lost": 0,
                }  # fmt: skip
                rows.append((g, *(v.get(c) for c in cols)))
            out.append(
                (
                    f"h{k}",
                    Sample(seq=s + 1, t=t0 + s, mono=float(s), columns=h.columns, rows=tuple(rows)),
                )  # type: ignore[union-attr]
            )
            if s % 2 == 0:
                procs = tuple(
                    Proc(
                        g, 1000 + g, 1, "me", "python", "python train.py", 70 * GIB, 95.0, "compute"
                    )
                    for g in range(gpus)
                )
                out.append((f"h{k}", Procs(seq=s + 1, t=t0 + s, procs=procs)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=10.0)
    args = ap.parse_args()
    seconds = int(args.minutes * 60)
    msgs = build(args.hosts, args.gpus, seconds)
    hosts = [
        HostConfig(name=f"h{k}", price_per_hour=2.0, budget=1e6, allowed_processes=("python",))
        for k in range(args.hosts)
    ]
    engine = RuleEngine(load_rules(include_user=False), hosts)
    c0, w0 = time.process_time(), time.perf_counter()
    changes = 0
    for host, m in msgs:
        changes += len(engine.feed(host, m))
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    n_gpus = args.hosts * args.gpus
    per_sim_s = cpu / seconds
    print(f"rule engine + cost: {args.hosts} hosts x {args.gpus} GPUs = {n_gpus} GPUs at 1 Hz, "
          f"{seconds} simulated s, {len(engine.rules)} rules")  # fmt: skip
    active = len(engine.active())
    print(f"  CPU {cpu:.2f} s (wall {wall:.2f} s) for {len(msgs)} messages; "
          f"{changes} alert changes, {active} active")  # fmt: skip
    print(f"  per simulated second: {per_sim_s * 1e3:.2f} ms = {per_sim_s * 100:.2f} % of one core "
          f"(target < 2 %); {per_sim_s / n_gpus * 1e6:.1f} us per GPU-sample")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
