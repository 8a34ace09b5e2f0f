"""Benchmark of one SshConnection against a real sshd on 127.0.0.1.

    .venv/bin/python bench/ssh.py [--connects 10] [--lines 300000]

1. Connect (TCP + key exchange + host-key check + Ed25519 key auth) and close, N times:
   mean and worst wall time.
2. ``stream_lines`` over a command printing ``--lines`` lines of 165 bytes (the size of one
   columnar GPU row): lines per second and the client's CPU seconds per 100,000 lines (this
   process only: utime + stime).
3. ``run`` round trip of ``true`` on an open connection: mean latency.
4. ``upload`` of a 1 MiB file (SFTP, atomic): mean time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "gui"))
sys.path.insert(0, str(ROOT / "remote"))

from gpufleet.core.link.ssh import SshConnection  # noqa: E402

from tests.support.sshd import make_sshd  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connects", type=int, default=10)
    ap.add_argument("--lines", type=int, default=300_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GPUFLEET_CONFIG_DIR"] = str(Path(tmp) / "cfg")
        server = make_sshd(Path(tmp) / "sshd")
        try:
            server.write_known_hosts(Path(tmp) / "cfg" / "known_hosts")
            host = server.host_config("bench")
            times = []
            for _ in range(args.connects):
                t0 = time.perf_counter()
                SshConnection.open(host, on_unknown_key=None).close()
                times.append(time.perf_counter() - t0)
            print(
                f"connect+auth+close: mean {statistics.mean(times) * 1e3:.1f} ms, "
                f"worst {max(times) * 1e3:.1f} ms over {args.connects}"
            )
            with SshConnection.open(host, on_unknown_key=None) as c:
                row = "x" * 164
                cmd = f"yes {row} | head -n {args.lines}"
                cpu0, t0 = _cpu(), time.perf_counter()
                n = sum(1 for _ in c.stream_lines(cmd))
                wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
                print(
                    f"stream_lines: {n} lines of 165 B in {wall:.2f} s = {n / wall:,.0f} lines/s "
                    f"({n * 165 / wall / 1e6:.1f} MB/s); client CPU {cpu / n * 1e5:.2f} s "
                    f"per 100k lines"
                )
                lat = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    c.run("true")
                    lat.append(time.perf_counter() - t0)
                print(f"run('true') round trip: mean {statistics.mean(lat) * 1e3:.1f} ms")
                data = os.urandom(1 << 20)
                ups = []
                for i in range(5):
                    t0 = time.perf_counter()
                    c.upload(data, f"{tmp}/up/{i}.bin")
                    ups.append(time.perf_counter() - t0)
                print(f"upload 1 MiB (SFTP, atomic): mean {statistics.mean(ups) * 1e3:.0f} ms")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
