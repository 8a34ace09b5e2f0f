"""Benchmark of the sampler daemon: what a full ring costs, how fast a backlog replays, and
the CPU a live daemon with a client attached uses.

    .venv/bin/python bench/daemon.py [--gpus-scenario healthy-8xa100] [--live-seconds 20]

1. In-process: one hour of ticks at 1 Hz (8 simulated GPUs) through the daemon's own tick
   (sample + procs every 2 s + events, encoded and put in the ring), timed per tick; the ring's
   bytes and the process RSS growth.
2. A client attaching ``--from-seq 0`` to that full ring over the real Unix socket: lines and
   MB per second until it has the whole backlog.
3. A real detached daemon at 1 Hz with one ``attach`` client for ``--live-seconds``: its CPU %
   of one core (utime + stime from /proc) and RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "remote"))

from gpufleet_sampler.daemon import server  # noqa: E402


def _rss_mib(pid: str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_ring(scenario: str, state_dir: str) -> None:
    args = argparse.Namespace(
        command="daemon",
        backend="sim",
        scenario=scenario,
        seed=1,
        interval=1.0,
        procs_interval=2.0,
        idle_exit=60.0,
        state_dir=state_dir,
        foreground=True,
    )
    p = state_dir.paths_for(args)
    fd = server._take_lock(p)
    assert fd is not None
    d = server.Daemon(args, p, fd)
    d.open()
    try:
        rss0 = _rss_mib()
        n = 3600
        t0 = time.perf_counter()
        for k in range(n):
            d.tick(1000.0 + k, 1.7e9 + k)
        dt = time.perf_counter() - t0
        rss1 = _rss_mib()
        gpus = len(json.loads(d.hello_line)["gpus"])
        print(f"scenario {scenario}: {gpus} GPUs, 1 h at 1 Hz = {n} ticks, {len(d.ring)} lines")
        print(f"  tick (sim backend + encode + ring): {dt / n * 1e6:.0f} us per tick, "
              f"{dt / n / gpus * 1e6:.1f} us per GPU")  # fmt: skip
        print(f"  ring holds {d.ring.nbytes() / 2**20:.1f} MiB of lines; "
              f"RSS grew {rss1 - rss0:.1f} MiB (now {rss1:.1f} MiB)")  # fmt: skip

        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(p.sock)
        c.sendall(b'{"op":"attach","from_seq":0}\n')
        c.setblocking(False)
        want = 1 + len(d.ring.since(0)[0])
        got = 0
        nbytes = 0
        t0 = time.perf_counter()
        while got < want:
            for key, mask in d.sel.select(0.1):
                d.handle(key, mask)
            while True:
                try:
                    chunk = c.recv(1 << 18)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                nbytes += len(chunk)
                got += chunk.count(b"\n")
        dt = time.perf_counter() - t0
        c.close()
        print(f"  attach --from-seq 0 backlog: {got} lines, {nbytes / 2**20:.1f} MiB in "
              f"{dt * 1e3:.0f} ms ({got / dt:,.0f} lines/s)")  # fmt: skip
    finally:
        d.close()
        os.close(fd)


def bench_live(scenario: str, state_dir: str, seconds: float) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "remote"))
    common = ["--backend", "sim", "--scenario", scenario, "--seed", "2", "--interval", "1.0",
              "--state-dir", state_dir]  # fmt: skip
    base = [sys.executable, "-m", "gpufleet_sampler"]
    out = subprocess.run([*base, "daemon", *common], capture_output=True, text=True, env=env)
    status = json.loads(out.stdout)
    pid = int(status["pid"])
    a = subprocess.Popen(
        [*base, "attach", *common, "--from-seq", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
    )
    try:
        time.sleep(2.0)  # let it settle (imports, first procs)
        c0, t0 = _cpu_s(pid), time.monotonic()
        time.sleep(seconds)
        c1, t1 = _cpu_s(pid), time.monotonic()
        cpu = (c1 - c0) / (t1 - t0) * 100
        rss = _rss_mib(str(pid))
        print(f"live daemon at 1 Hz, 1 client, {seconds:.0f} s: "
              f"{cpu:.2f} % of one core, RSS {rss:.1f} MiB")  # fmt: skip
    finally:
        assert a.stdin is not None
        a.stdin.close()
        a.wait()
        subprocess.run([*base, "stop", *common], capture_output=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default="healthy-8xa100")
    ap.add_argument("--live-seconds", type=float, default=20.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as sd:
        bench_ring(a.scenario, os.path.join(sd, "ring"))
        bench_live(a.scenario, os.path.join(sd, "live"), a.live_seconds)
    print(f"bench process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")


if __name__ == "__main__":
    main()
