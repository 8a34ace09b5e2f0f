"""Fleet over SSH: N sim hosts (default 32 × 8 GPUs) through real OpenSSH sshd on loopback,
at 1 Hz for a while (default 60 s). Prints the client's CPU use, memory and the samples per
second it sustained; then a burst (every host re-attached from seq 0, so the daemons replay
their rings as fast as the link and the client go) and the bare parse rate on one core.

    .venv/bin/python bench/fleet.py [--hosts 32] [--sshd 4] [--seconds 60]

The hosts share a few sshd processes (each SSH connection gets an sshd process of its own
anyway); each sshd gives its sessions a temporary HOME, so the zipapp and the daemons' state
stay in a temporary directory. The client is this process: its CPU time covers paramiko's
threads, the sessions, parsing and the fan-out to one subscriber.
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path.insert(0, str(ROOT))


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def drain(q: queue.Queue[object], until: float, counts: dict[str, int]) -> None:
    from gpufleet.core.fleet.fleet import HostMessage
    from gpufleet.core.wire.messages import Sample

    while True:
        left = until - time.monotonic()
        if left <= 0:
            return
        try:
            ev = q.get(timeout=min(left, 0.2))
        except queue.Empty:
            continue
        if isinstance(ev, HostMessage):
            counts["messages"] += 1
            if isinstance(ev.msg, Sample):
                if not counts["samples"]:
                    counts["first_mono_us"] = int(time.monotonic() * 1e6)
                counts["samples"] += 1
                counts["gpu_samples"] += len(ev.msg.rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--sshd", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--scenario", default="healthy-8xa100")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="gpufleet-bench-"))
    os.environ["GPUFLEET_CONFIG_DIR"] = str(tmp / "config")
    os.environ["GPUFLEET_DATA_DIR"] = str(tmp / "data")
    import logging

    logging.getLogger("paramiko").setLevel(logging.CRITICAL)

    from gpufleet.core.fleet.fleet import Fleet
    from gpufleet.core.link import hostkeys
    from gpufleet.core.wire.messages import StreamDecoder

    from tests.support.sampler_daemons import stop_daemons
    from tests.support.sshd import make_sshd

    home = tmp / "remote-home"
    home.mkdir(mode=0o700)
    servers = [
        make_sshd(tmp / f"sshd{i}", extra_config=(f"SetEnv HOME={home}",)) for i in range(args.sshd)
    ]
    for s in servers:
        hostkeys.KnownHosts().add(hostkeys.host_key_name(s.host, s.port), s.host_public_key())
    hosts = [
        servers[i % len(servers)].host_config(
            f"h{i:02d}", backend="sim", scenario=args.scenario, seed=100 + i
        )
        for i in range(args.hosts)
    ]
    state = str(home / ".cache" / "gpufleet")
    counts = {"messages": 0, "samples": 0, "gpu_samples": 0, "first_mono_us": 0}
    try:
        fleet = Fleet(hosts)
        q = fleet.subscribe()
        t0 = time.monotonic()
        fleet.start()
        # Warm-up: every host deployed, its daemon started and streaming.
        while not all(fleet.status(h.name).state == "streaming" for h in hosts):
            drain(q, time.monotonic() + 0.5, counts)  # type: ignore[arg-type]
            if time.monotonic() - t0 > 180:
                bad = {h.name: fleet.status(h.name) for h in hosts}
                print(f"not all hosts streaming after 180 s: {bad}")
                return 1
        warm_s = time.monotonic() - t0
        drain(q, time.monotonic() + 3.0, counts)  # type: ignore[arg-type]
        for k in counts:
            counts[k] = 0
        c0, w0, r0 = cpu_s(), time.monotonic(), rss_mib()
        drain(q, w0 + args.seconds, counts)  # type: ignore[arg-type]
        c1, w1, r1 = cpu_s(), time.monotonic(), rss_mib()
        steady = dict(counts)
        stats = [fleet.session(h.name) for h in hosts]
        bad_lines = sum(s.bad_lines for s in stats if s is not None)
        reconnects = sum(max(0, s.attaches - 1) for s in stats if s is not None)
        last = {h.name: fleet.session(h.name).last_seq for h in hosts}  # type: ignore[union-attr]
        fleet.stop()

        # Burst: re-attach every host from 0: the daemons replay their rings at once.
        for k in counts:
            counts[k] = 0
        burst = Fleet(hosts)
        bq = burst.subscribe(maxsize=1_000_000)
        c2, b0 = cpu_s(), time.monotonic()
        burst.start()
        while any((s := burst.session(h.name)) is None or s.last_seq < last[h.name] for h in hosts):
            drain(bq, time.monotonic() + 0.05, counts)  # type: ignore[arg-type]
            if time.monotonic() - b0 > 120:
                break
        b1, c3 = time.monotonic(), cpu_s()
        burst_counts = dict(counts)
        burst.stop()

        # The bare parse rate of the same lines on one core (no SSH, no threads).
        sample_lines: list[bytes] = []
        dec = StreamDecoder()
        from gpufleet.core.link import sampler_argv as samplercmd
        from gpufleet.core.link.transport import LocalTransport

        lt = LocalTransport(hosts[0])
        _rc, out, _ = lt.run(
            [
                *lt.ensure_sampler(),
                "stream",
                *samplercmd.backend_args(hosts[0]),
                "--count",
                "300",
                "--no-wait",
            ],
            timeout=120,
        )
        sample_lines = out.splitlines()
        t = time.perf_counter()
        reps = 20
        n_gpu = 0
        for _ in range(reps):
            dec = StreamDecoder()
            for line in sample_lines:
                m = dec.feed(line)
                n_gpu += len(getattr(m, "rows", ()))
        parse_rate = n_gpu / (time.perf_counter() - t)
    finally:
        stop_daemons(hosts, state)
        for s in servers:
            s.kill_sessions()
            s.stop()

    dur = w1 - w0
    print(
        f"Fleet over SSH: {args.hosts} sim hosts ({args.scenario}) via {args.sshd} sshd on loopback"
    )
    print(f"  warm-up (connect + deploy + start daemons): {warm_s:.1f} s")
    print(f"  steady {dur:.0f} s at 1 Hz:")
    print(f"    samples/s received      {steady['samples'] / dur:8.1f}  (expected {args.hosts})")
    print(f"    GPU-samples/s           {steady['gpu_samples'] / dur:8.1f}")
    print(f"    messages/s (all kinds)  {steady['messages'] / dur:8.1f}")
    print(f"    client CPU              {100 * (c1 - c0) / dur:8.1f} % of one core")
    print(f"    client RSS              {r1:8.1f} MiB (start of window {r0:.1f} MiB)")
    print(f"    bad lines / reconnects  {bad_lines} / {reconnects}")
    # From the first backfilled sample to the last: the connects are not in the rate.
    bd = b1 - burst_counts["first_mono_us"] / 1e6
    print(f"  burst: re-attach all from seq 0 ({burst_counts['samples']} samples backfilled):")
    print(f"    wall {b1 - b0:.2f} s incl. {args.hosts} SSH connects; {bd:.2f} s of data")
    print(f"    samples/s               {burst_counts['samples'] / bd:8.0f}")
    print(f"    GPU-samples/s           {burst_counts['gpu_samples'] / bd:8.0f}")
    print(f"    client CPU              {c3 - c2:8.2f} s")
    print(f"  parse only (StreamDecoder, one core): {parse_rate:,.0f} GPU-samples/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
