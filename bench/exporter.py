"""Benchmark of the Prometheus exporters: CPU per scrape for 8 GPUs, scrape latency p99.

    .venv/bin/python bench/exporter.py [--scrapes 2000]

1. In process: the cost of rendering one 8-GPU exposition (what a scrape costs the first time
   after a tick; later scrapes of the same tick are served from the cache).
2. A real ``python -m gpufleet_sampler exporter`` (sim, 8× A100, 1 Hz) hammered with
   back-to-back scrapes over one keep-alive connection: latency percentiles, and the
   exporter's own CPU per scrape from /proc (its idle sampling CPU, measured first over the
   same time, subtracted).
3. The fleet exporter's render for 32 hosts × 8 GPUs (``FleetMetrics``, in process).
4. One GPU (the recorded H200 trace through the fake pynvml), keep-alive scrapes of the
   sampler's HTTP server in process: small responses are where headers and body sent apart
   waited ~40 ms for the client's delayed ACK.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path[:0] = [str(ROOT), str(ROOT / "remote"), str(ROOT / "gui")]

from gpufleet_sampler.backends.sim import SimBackend  # noqa: E402
from gpufleet_sampler.exporter import MetricsState  # noqa: E402
from gpufleet_sampler.loop import Sampler  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def render_cost(n: int = 300) -> tuple[float, int]:
    b = SimBackend(scenario="healthy-8xa100", seed=1, interval=1.0)
    try:
        s = Sampler(b, 1.0)
        st = MetricsState("node")
        st.set_hello(s.hello())
        for k in range(3):
            st.update(s.step(float(k), time.time()))
        size = len(st.render())
        t0 = time.process_time()
        for _ in range(n):
            st._version += 1  # force a fresh render each time (no cache)
            st.render()
        return (time.process_time() - t0) / n, size
    finally:
        b.close()


def fleet_render_cost(hosts: int = 32, n: int = 50) -> float:
    from gpufleet.core.fleet.events import HostMessage, HostStatus
    from gpufleet.core.prometheus.exporter import FleetMetrics
    from gpufleet.core.wire.messages import StreamDecoder
    from gpufleet_sampler import protocol

    b = SimBackend(scenario="healthy-8xa100", seed=1, interval=1.0)
    try:
        s = Sampler(b, 1.0)
        lines = [protocol.encode(s.hello())]
        for k in range(2):
            lines += [protocol.encode(m) for m in s.step(float(k), time.time())]
    finally:
        b.close()
    fm = FleetMetrics()
    for h in range(hosts):
        dec = StreamDecoder()
        fm.feed(HostStatus(f"h{h}", "streaming", None, time.time()))
        for line in lines:
            msg = dec.feed(line)
            if msg is not None:
                fm.feed(HostMessage(f"h{h}", msg))
    t0 = time.process_time()
    for _ in range(n):
        fm._version += 1
        fm.render()
    return (time.process_time() - t0) / n


def scrape_bench(scrapes: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "remote"))
    p = subprocess.Popen(
        [sys.executable, "-m", "gpufleet_sampler", "exporter", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        assert p.stdout is not None
        url = p.stdout.readline().decode().split()[1]
        hostport = url.split("//")[1].split("/")[0]
        host, port = hostport.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        for _ in range(20):  # warm up
            conn.request("GET", "/metrics")
            conn.getresponse().read()
        idle_s = 5.0
        c0 = proc_cpu(p.pid)
        time.sleep(idle_s)
        idle_rate = (proc_cpu(p.pid) - c0) / idle_s  # sampling at 1 Hz, no scrapes
        lat = []
        c0, w0 = proc_cpu(p.pid), time.monotonic()
        for _ in range(scrapes):
            t = time.perf_counter()
            conn.request("GET", "/metrics")
            body = conn.getresponse().read()
            lat.append(time.perf_counter() - t)
        wall = time.monotonic() - w0
        cpu = proc_cpu(p.pid) - c0 - idle_rate * wall
        conn.close()
        lat.sort()
        return {
            "bytes": float(len(body)),
            "p50_ms": 1000 * statistics.median(lat),
            "p99_ms": 1000 * lat[int(0.99 * len(lat)) - 1],
            "max_ms": 1000 * lat[-1],
            "cpu_per_scrape_us": 1e6 * max(cpu, 0.0) / scrapes,
            "idle_cpu_pct": 100 * idle_rate,
            "scrapes_per_s": scrapes / wall,
        }
    finally:
        p.terminate()
        p.wait(30)


def one_gpu_scrapes(scrapes: int = 500) -> dict[str, float]:
    """Keep-alive scrape latency of a 1-GPU exposition (in process, loopback)."""
    import threading

    from gpufleet_sampler.backends.nvml import NvmlBackend
    from gpufleet_sampler.metrics_http import make_server

    from tests.support.nvml_fake import fake_nvml

    with fake_nvml("h200x1"):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            s = Sampler(b, 1.0)
            st = MetricsState("node")
            st.set_hello(s.hello())
            st.update(s.step(1.0, time.time()))
        finally:
            b.close()
    server = make_server(st, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        lat = []
        body = b""
        for _ in range(scrapes):
            t = time.perf_counter()
            conn.request("GET", "/metrics")
            body = conn.getresponse().read()
            lat.append(time.perf_counter() - t)
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    lat.sort()
    return {
        "bytes": float(len(body)),
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[int(0.99 * len(lat)) - 1],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scrapes", type=int, default=2000)
    args = ap.parse_args()
    per, size = render_cost()
    print(f"render, 8 GPUs (healthy-8xa100): {per * 1e6:.0f} µs CPU, {size} bytes")
    r = scrape_bench(args.scrapes)
    print(
        f"exporter process, {args.scrapes} back-to-back scrapes of 8 GPUs "
        f"({r['bytes']:.0f} bytes): p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, "
        f"max {r['max_ms']:.2f} ms, {r['scrapes_per_s']:.0f} scrapes/s"
    )
    tick = 100.0 / (CLK * 5.0)  # /proc's resolution over the 5 s idle window
    idle = (
        f"{r['idle_cpu_pct']:.2f} % of a core"
        if r["idle_cpu_pct"] > 0
        else f"under {tick:.1f} % of a core (below /proc's resolution)"
    )
    print(
        f"exporter CPU per scrape (cached tick, HTTP included): {r['cpu_per_scrape_us']:.0f} µs;"
        f" sampling alone at 1 Hz: {idle}"
    )
    print(f"fleet exporter render, 32 hosts x 8 GPUs: {fleet_render_cost() * 1e3:.1f} ms CPU")
    one = one_gpu_scrapes()
    print(
        f"1 GPU ({one['bytes']:.0f} bytes), keep-alive scrapes on loopback: "
        f"p50 {one['p50_ms']:.2f} ms, p99 {one['p99_ms']:.2f} ms"
    )


if __name__ == "__main__":
    main()
