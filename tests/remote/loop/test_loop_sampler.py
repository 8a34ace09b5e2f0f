"""``Sampler``: one sequence counter for every kind, the process-list tier, the hello header.

Driven by the real sim backend with explicit (simulated) times, as the daemon and ``stream
--no-wait`` drive it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from gpufleet.core.wire.messages import Hello, StreamDecoder
from gpufleet_sampler import __version__, protocol
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.sim.scenarios import SCENARIOS


@pytest.fixture
def ecc_backend() -> Iterator[SimBackend]:
    # 25x fast: GPU 2's Xid 48 at 50.4 s and Xid 79 at 51 s, within a minute of ticks.
    b = SimBackend("ecc-xid", seed=3, interval=1.0, time_scale=0.04)
    try:
        yield b
    finally:
        b.close()


def test_hello_carries_versions_columns_host_and_gpus(ecc_backend: SimBackend) -> None:
    s = Sampler(ecc_backend, 1.0)
    h = s.hello()
    assert h["kind"] == "hello"
    assert h["protocol"] == protocol.PROTOCOL_VERSION
    assert h["sampler_version"] == __version__
    assert re.fullmatch(r"[0-9a-f]{32}", h["run_id"])
    assert h["backend"] == "sim" and h["scenario"] == "ecc-xid"
    assert h["interval_s"] == 1.0
    assert [c["name"] for c in h["columns"]] == list(protocol.COLUMN_NAMES)
    for key in ("hostname", "boot_id", "driver_version", "cuda_version", "python", "clk_tck"):
        assert h["host"].get(key), key
    assert len(h["gpus"]) == 4
    for g in h["gpus"]:
        assert set(g) >= {"index", "uuid", "name", "pci_bus_id", "nominal", "unsupported"}
        assert set(g["nominal"]) == {k for k, _ in protocol.NOMINAL_KEYS}
    parsed = StreamDecoder().feed(protocol.encode(h))
    assert isinstance(parsed, Hello) and parsed.run_id == h["run_id"]
    # Two samplers, two runs.
    assert Sampler(ecc_backend, 1.0).run_id != s.run_id


def test_one_counter_for_samples_procs_and_events(ecc_backend: SimBackend) -> None:
    s = Sampler(ecc_backend, 1.0, procs_interval=5.0, start_seq=100)
    kinds: list[str] = []
    seqs: list[int] = []
    for k in range(60):
        for msg in s.step(500.0 + k, 1.7e9 + k):
            kinds.append(msg["kind"])
            seqs.append(msg["seq"])
            assert msg["t"] == 1.7e9 + k
    assert seqs == list(range(100, 100 + len(seqs)))
    assert s.next_seq == 100 + len(seqs)
    assert kinds.count("sample") == 60
    assert kinds.count("procs") == 12  # at t = 0, 5, ..., 55
    assert kinds.count("event") >= 5  # sbe x2, xid 48, ecc, remap, xid 79, gpu lost
    # The first message of a tick is its sample, the process list comes right after it.
    assert kinds[0] == "sample" and kinds[1] == "procs"


def test_messages_are_json_with_the_documented_shape(ecc_backend: SimBackend) -> None:
    s = Sampler(ecc_backend, 0.5)
    dec = StreamDecoder()
    dec.feed(protocol.encode(s.hello()))
    for k in range(120):
        for msg in s.step(10.0 + 0.5 * k, 1.7e9 + 0.5 * k):
            line = protocol.encode(msg)
            assert "\n" not in line
            obj = json.loads(line)
            if obj["kind"] == "sample":
                assert set(obj) == {"kind", "seq", "t", "mono", "gpus"}
                assert all(len(r) == len(protocol.COLUMNS) + 1 for r in obj["gpus"])
            elif obj["kind"] == "procs":
                assert set(obj) == {"kind", "seq", "t", "procs"}
                for p in obj["procs"]:
                    assert tuple(p) == protocol.PROC_KEYS
            elif obj["kind"] == "links":
                assert set(obj) == {"kind", "seq", "t", "gpus"}
                assert all(len(r) == len(protocol.LINK_COLUMNS) + 1 for r in obj["gpus"])
            else:
                assert obj["kind"] == "event"
                assert obj["type"] in protocol.EVENT_TYPES
                assert set(obj) == {"kind", "seq", "t", "type", "gpu", "code", "message"}
            assert dec.feed(line) is not None
    assert dec.bad_lines == 0


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_under_400_bytes_per_gpu_sample(name: str) -> None:
    b = SimBackend(name, seed=0, interval=1.0)
    try:
        s = Sampler(b, 1.0, procs_interval=1e9)
        worst = 0.0
        for k in range(200):
            sample = s.step(float(k), 1.7e9 + k)[0]
            worst = max(worst, len(protocol.encode(sample)) / len(sample["gpus"]))
    finally:
        b.close()
    assert worst < 400
