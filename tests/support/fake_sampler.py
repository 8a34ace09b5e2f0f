"""A misbehaving stand-in for the sampler, for the tests of what the client does with one.

Run as ``python fake_sampler.py MODE <sampler argv...>``; MODE is:
- ``garbage``: prints lines that are not the protocol, forever;
- ``die``: prints a valid hello and one sample, writes a reason to stderr, exits with status 3;
- ``silent``: prints a hello and then nothing (a stalled stream);
- ``hostile``: prints a hello, then valid samples at 10 Hz with, early on, the values a
  hostile or broken sampler could send: a ``seq`` of 2**63 (one past int64), a GPU index of
  2**63, a list where a metric belongs, a huge ``t``, a procs entry with a pid of 2**64 - 1
  and an event with a code of 2**63; then valid samples forever;
- ``lines``: prints the lines of the file named by $GPUFLEET_FAKE_LINES once (the first run;
  later runs print only its first line, the hello), then nothing (a stalled stream).
"""

from __future__ import annotations

import json
import os
import sys
import time

from gpufleet_sampler import protocol


def hello() -> str:
    return json.dumps(
        {
            "kind": "hello",
            "protocol": protocol.PROTOCOL_VERSION,
            "sampler_version": "fake",
            "run_id": "fake-run",
            "backend": "sim",
            "interval_s": 1.0,
            "columns": protocol.hello_columns(),
            "host": {"hostname": "fake"},
            "gpus": [{"index": 0, "uuid": "GPU-fake", "name": "Fake GPU"}],
        }
    )


def sample(seq: int, mono: float = 1.0) -> str:
    row = [0] + [None] * len(protocol.COLUMN_NAMES)
    return json.dumps({"kind": "sample", "seq": seq, "t": time.time(), "mono": mono, "gpus": [row]})


def hostile_lines(seq: int) -> list[str]:
    """The bad lines, compact like the sampler's own (so they meet the decoder's fast path)."""
    width = len(protocol.COLUMN_NAMES)
    good = [0] + [50] * width
    listed = [0, [1, 2]] + [50] * (width - 1)

    def line(obj: dict[str, object]) -> str:
        return json.dumps(obj, separators=(",", ":"))

    now = time.time()
    return [
        line({"kind": "sample", "seq": 2**63, "t": now, "mono": 2.0, "gpus": [good]}),
        line({"kind": "sample", "seq": seq, "t": now, "mono": 2.0, "gpus": [[2**63, *good[1:]]]}),
        line({"kind": "sample", "seq": seq, "t": now, "mono": 2.0, "gpus": [listed]}),
        line({"kind": "sample", "seq": seq, "t": 1e308, "mono": 2.0, "gpus": [good]}),
        line({"kind": "procs", "seq": seq, "t": now, "procs": [{"gpu": 0, "pid": 2**64 - 1}]}),
        line({"kind": "event", "seq": seq, "t": now, "type": "xid", "code": 2**63}),
    ]


def main() -> int:
    mode = sys.argv[1]
    if mode == "garbage":
        n = 0
        while True:
            print(f"this is not JSON {n}", flush=True)
            print('{"kind": "nonsense"}', flush=True)
            n += 1
            time.sleep(0.05)
    if mode == "die":
        print(hello(), flush=True)
        print(sample(1), flush=True)
        print("fake sampler: simulated crash (NVML went away)", file=sys.stderr, flush=True)
        return 3
    if mode == "hostile":
        print(hello(), flush=True)
        seq = 1
        while True:
            print(sample(seq, mono=time.monotonic()), flush=True)
            if seq == 3:
                for bad in hostile_lines(seq + 1):
                    print(bad, flush=True)
            seq += 1
            time.sleep(0.1)
    if mode == "lines":
        path = os.environ["GPUFLEET_FAKE_LINES"]
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
        done = path + ".done"
        first = not os.path.exists(done)
        open(done, "w").close()
        out = sys.stdout.buffer
        out.writelines(lines if first else lines[:1])
        out.flush()
        time.sleep(3600)
        return 0
    if mode == "silent":
        print(hello(), flush=True)
        time.sleep(3600)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
