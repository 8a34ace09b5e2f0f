"""Memory at 50 hosts: the real sampler loop over the sim backend for each host (every
scenario in turn: Xids, process changes, NVLink links), its lines decoded as a session
does, then through the real pipeline hub's stages (live buffers, the history store on disk,
the rule engine with cost, the Prometheus exporter's latest values), 60 simulated minutes as
fast as the CPU allows. Prints the process RSS every simulated minute and its slope (least
squares) after the warm-up, when the live buffers are allocated and every host has been
seen, and again after the first hour, once what is kept for an hour by design (the rule
engine's per-GPU clock history) is full; a leak shows as a slope there.

    .venv/bin/python bench/memory50.py [--hosts 50] [--minutes 90] [--warmup 10] [--trace]

``--trace`` also prints where Python's allocations grew most between the end of the warm-up
and the end (tracemalloc; slower).
"""

from __future__ import annotations

import argparse
import gc
import os
import queue
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "gui"), str(ROOT / "remote")]

from gpufleet.core.config.hostconfig import HostConfig  # noqa: E402
from gpufleet.core.fleet.events import FleetEvent, HostMessage  # noqa: E402
from gpufleet.core.history import store as store_mod  # noqa: E402
from gpufleet.core.history.store import Store  # noqa: E402
from gpufleet.core.live.buffers import LiveBuffers  # noqa: E402
from gpufleet.core.pipeline.alerting import Alerting  # noqa: E402
from gpufleet.core.pipeline.build import load_rule_engine  # noqa: E402
from gpufleet.core.pipeline.hub import PipelineHub  # noqa: E402
from gpufleet.core.prometheus.exporter import FleetMetrics  # noqa: E402
from gpufleet.core.wire.messages import Message, StreamDecoder  # noqa: E402
from gpufleet_sampler import protocol  # noqa: E402
from gpufleet_sampler.backends.sim import SimBackend  # noqa: E402
from gpufleet_sampler.loop import Sampler  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def slope(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--minutes", type=int, default=90)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument(
        "--sqlite-cache-mb",
        type=float,
        default=None,
        help="override the store's SQLite page cache (to tell its growth from a leak)",
    )
    args = ap.parse_args()
    if args.sqlite_cache_mb is not None:
        kib = int(args.sqlite_cache_mb * 1024)
        store_mod.WRITER_CACHE_KIB = store_mod.READER_CACHE_KIB = kib
    scenarios = protocol.SIM_SCENARIOS
    hosts = [
        HostConfig(
            name=f"h{i:02d}",
            transport="local",
            backend="sim",
            scenario=scenarios[i % len(scenarios)],
            seed=i,
            price_per_hour=2.5,
        )
        for i in range(args.hosts)
    ]
    tmp = Path(tempfile.mkdtemp(prefix="gpufleet-mem-"))
    store = Store(tmp / "history.sqlite")
    live = LiveBuffers(window_s=3600.0)
    alerting = Alerting(load_rule_engine(hosts, strict=False))
    metrics = FleetMetrics(hosts)
    # Driven from this thread batch by batch (not its own thread and queue), so simulated
    # time runs as fast as the stages do.
    hub = PipelineHub(queue.Queue(), live=live, store=store, alerting=alerting, metrics=metrics)
    end_t = time.time()
    start_t = end_t - args.minutes * 60.0
    runs = []
    for h in hosts:
        backend = SimBackend(h.scenario or "healthy-8xa100", h.seed, 1.0)
        sampler = Sampler(backend, 1.0, procs_interval=2.0)
        dec = StreamDecoder()
        first = hub_line(dec, sampler.hello())
        assert first is not None
        runs.append((h.name, backend, sampler, dec, first))
    print(f"{args.hosts} hosts, {args.minutes} simulated minutes; RSS per minute (MB):")
    xs: list[float] = []
    ys: list[float] = []
    snap0 = None
    t_wall = time.perf_counter()
    msgs = 0
    try:
        hub._handle([HostMessage(name, first) for name, _b, _s, _d, first in runs])
        for minute in range(args.minutes):
            for sec in range(60):
                i = minute * 60 + sec
                batch: list[FleetEvent] = []
                for name, _backend, sampler, dec, _first in runs:
                    for obj in sampler.step(float(i), start_t + i):
                        msg = hub_line(dec, obj)
                        if msg is not None:
                            batch.append(HostMessage(name, msg))
                msgs += len(batch)
                hub._handle(batch)
                if sec % 2 == 0:
                    hub._tick()
            store.flush()  # the writer keeps up: what remains is not a queue
            gc.collect()
            r = rss_mb()
            print(f"  minute {minute + 1:>3}: {r:7.1f}", flush=True)
            if minute + 1 == args.warmup and args.trace:
                tracemalloc.start(6)
                snap0 = tracemalloc.take_snapshot()
            if minute + 1 >= args.warmup:
                xs.append(float(minute + 1))
                ys.append(r)
    finally:
        for _name, backend, _s, _d, _f in runs:
            backend.close()
        store.close()
    wall = time.perf_counter() - t_wall
    bad = sum(d.bad_lines for _n, _b, _s, d, _f in runs)
    print(f"{msgs} messages in {wall:.0f} s ({bad} bad lines), store errors {store.errors}")
    print(
        f"RSS after warm-up: {ys[0]:.1f} MB -> {ys[-1]:.1f} MB; "
        f"slope {slope(xs, ys):+.3f} MB per simulated minute "
        f"(minutes {args.warmup}..{args.minutes})"
    )
    # The live window and the rule engine's per-GPU histories fill for an hour by design:
    # a leak is what still grows once they are full.
    late = [(x, y) for x, y in zip(xs, ys, strict=True) if x >= 65]
    if len(late) >= 5:
        lx, ly = [x for x, _ in late], [y for _, y in late]
        print(
            f"after the first hour: {ly[0]:.1f} MB -> {ly[-1]:.1f} MB; slope "
            f"{slope(lx, ly):+.3f} MB per simulated minute (minutes 65..{args.minutes})"
        )
    if snap0 is not None:
        top = tracemalloc.take_snapshot().compare_to(snap0, "traceback")[:8]
        print("largest growth of Python allocations after the warm-up:")
        for st in top:
            print(f"  {st.size_diff / 1024:+9.1f} KiB  {st.count_diff:+7d} blocks")
            for line in st.traceback.format()[-6:]:
                print("      " + line)


def hub_line(dec: StreamDecoder, obj: dict[str, Any]) -> Message | None:
    """One message as a session gets it: the sampler's JSON line through the decoder."""
    return dec.feed((protocol.encode(obj) + "\n").encode())


if __name__ == "__main__":
    main()
