"""A misbehaving stand-in for the sampler, for the tests of what the client does with one.

Run as ``python fake_sampler.py MODE <sampler argv...>``; MODE is:
- ``garbage``: prints lines that are not the protocol, forever;
- ``die``: prints a valid hello and one sample, writes a reason to stderr, exits with status 3;
- ``silent``: prints a hello and then nothing (a stalled stream).
"""

from __future__ import annotations

import json
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


def sample(seq: int) -> str:
    row = [0] + [None] * len(protocol.COLUMN_NAMES)
    return json.dumps({"kind": "sample", "seq": seq, "t": time.time(), "mono": 1.0, "gpus": [row]})


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
    if mode == "silent":
        print(hello(), flush=True)
        time.sleep(3600)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
