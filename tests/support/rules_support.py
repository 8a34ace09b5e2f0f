"""Builders of protocol messages for the rule, cost and diagnosis tests.

Messages go through the real parser (``messages.parse_object``) so that the tests feed the
engine exactly what a stream would give it. Sim streams come from the real sampler CLI.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from gpufleet.core.wire.messages import Hello, Message, StreamDecoder, parse_object
from gpufleet_sampler import protocol

from tests.support.paths import ROOT

GIB = 1 << 30
T0 = 1_700_000_000.0

NOMINAL: dict[str, Any] = {
    "sm_clock_max_mhz": 1410,
    "mem_clock_max_mhz": 1593,
    "sm_clock_base_mhz": 1275,
    "power_default_w": 400.0,
    "power_enforced_w": 400.0,
    "temp_slowdown_c": 89,
    "temp_shutdown_c": 92,
    "temp_mem_max_c": 95,
    "pcie_max_gen": 4,
    "pcie_max_width": 16,
    "nvlink_links": 12,
    "nvlink_link_bps": 25_000_000_000,
    "mem_total_bytes": 80 * GIB,
    "mem_reserved_bytes": 600 << 20,
}

# A busy, healthy A100: every rule should stay quiet on it.
BUSY: dict[str, Any] = {
    "util_gpu_pct": 98,
    "util_mem_pct": 60,
    "sm_clock_mhz": 1410,
    "mem_clock_mhz": 1593,
    "gfx_clock_mhz": 1410,
    "temp_gpu_c": 66,
    "temp_mem_c": 72,
    "power_w": 360.0,
    "power_limit_w": 400.0,
    "energy_j": 1000.0,
    "pstate": 0,
    "clock_reasons": 0,
    "viol_power_pct": 0.0,
    "viol_thermal_pct": 0.0,
    "fan_pct": None,
    "mem_used_bytes": 70 * GIB,
    "pcie_tx_bps": 1e9,
    "pcie_rx_bps": 2e9,
    "pcie_gen": 4,
    "pcie_width": 16,
    "pcie_replays": 0,
    "nvlink_tx_bps": 200e9,
    "nvlink_rx_bps": 200e9,
    "nvlink_up": 12,
    "ecc_sbe_vol": 0,
    "ecc_dbe_vol": 0,
    "remap_pending": 0,
    "remap_failed": 0,
    "retired_pending": 0,
    "lost": 0,
}
IDLE: dict[str, Any] = {
    **BUSY,
    "util_gpu_pct": 0,
    "util_mem_pct": 0,
    "sm_clock_mhz": 210,
    "power_w": 60.0,
    "pstate": 8,
    "clock_reasons": 0x1,
    "mem_used_bytes": 1 * GIB,
    "pcie_gen": 1,
    "nvlink_tx_bps": 0,
    "nvlink_rx_bps": 0,
}


def hello(n_gpus: int = 1, interval: float = 1.0, **nominal: Any) -> Hello:
    nom = {**NOMINAL, **nominal}
    obj = {
        "kind": "hello",
        "protocol": protocol.PROTOCOL_VERSION,
        "run_id": "test",
        "backend": "sim",
        "interval_s": interval,
        "columns": protocol.hello_columns(),
        "host": {"hostname": "test"},
        "gpus": [
            {"index": i, "uuid": f"GPU-{i}", "name": "NVIDIA A100-SXM4-80GB", "nominal": nom}
            for i in range(n_gpus)
        ],
    }
    msg = parse_object(obj)
    assert isinstance(msg, Hello)
    return msg


def row(gpu: int, values: Mapping[str, Any]) -> list[Any]:
    return [gpu, *(values.get(name) for name in protocol.COLUMN_NAMES)]


class Stream:
    """Builds a stream in the samples' own time: ``s.sample(t, **values)``."""

    def __init__(self, n_gpus: int = 1, interval: float = 1.0, **nominal: Any) -> None:
        self.hello = hello(n_gpus, interval, **nominal)
        self.n = n_gpus
        self.seq = 0

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def sample(
        self, t: float, gpus: Mapping[int, Mapping[str, Any]] | None = None, **values: Any
    ) -> Message:
        """One sample at T0 + t: every GPU BUSY with ``values`` applied, unless ``gpus``
        gives per-GPU values."""
        rows = []
        for i in range(self.n):
            v = dict(gpus[i]) if gpus is not None and i in gpus else {**BUSY, **values}
            rows.append(row(i, v))
        obj = {"kind": "sample", "seq": self._next(), "t": T0 + t, "mono": t, "gpus": rows}
        return parse_object(obj, self.hello)

    def procs(self, t: float, procs: Iterable[Mapping[str, Any]]) -> Message:
        entries = []
        for p in procs:
            e: dict[str, Any] = {
                "gpu": 0,
                "pid": 100,
                "start_ticks": 1,
                "user": "me",
                "name": "python",
                "cmd": "python train.py",
                "mem_bytes": 10 * GIB,
                "sm_pct": 90,
                "type": "compute",
            }
            e.update(p)
            entries.append(e)
        return parse_object({"kind": "procs", "seq": self._next(), "t": T0 + t, "procs": entries})

    def event(
        self, t: float, type: str, gpu: int | None = 0, code: int | None = None, **kw: Any
    ) -> Message:
        obj = {"kind": "event", "seq": self._next(), "t": T0 + t, "type": type, "gpu": gpu,
               "code": code, "message": kw.pop("message", ""), **kw}  # fmt: skip
        return parse_object(obj)


@functools.cache
def sim_stream_lines(scenario: str, count: int, seed: int = 0) -> tuple[bytes, ...]:
    """A recorded stream of the real sampler CLI on the sim backend (simulated time), made
    once per test session and scenario."""
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "sim",
         "--scenario", scenario, "--seed", str(seed), "--no-wait", "--count", str(count)],
        cwd=ROOT / "remote", capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    return tuple(out.stdout.splitlines(keepends=True))


def decode(lines: Iterable[bytes]) -> list[Message]:
    dec = StreamDecoder()
    return [m for m in (dec.feed(line) for line in lines) if m is not None]
