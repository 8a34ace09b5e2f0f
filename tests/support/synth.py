"""Deterministic synthetic ``Hello`` / ``Sample`` / ``Procs`` / ``Event`` messages in bulk.

The history store's tests and benchmarks need days of samples for several GPUs in seconds;
the sim backend produces them in real protocol form but one tick at a time. This builds them
with NumPy, with the value shapes NVML gives (integer clocks and temperatures, milliwatt
power, counters that only grow, nulls for what an A100 lacks) and a thermal-throttle episode
so that rollups, exports and plots have something to show.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gpufleet.core.wire.messages import Event, Hello, Proc, Procs, Sample, Value, parse_hello
from gpufleet_sampler import protocol

NAN = float("nan")


def make_hello(host: str = "synth", gpus: int = 8, run_id: str = "run-1") -> Hello:
    nominal = {
        "sm_clock_max_mhz": 1410,
        "mem_clock_max_mhz": 1593,
        "sm_clock_base_mhz": 1275,
        "power_default_w": 400.0,
        "power_enforced_w": 400.0,
        "temp_slowdown_c": 85,
        "temp_shutdown_c": 92,
        "temp_mem_max_c": 95,
        "pcie_max_gen": 4,
        "pcie_max_width": 16,
        "nvlink_links": 12,
        "nvlink_link_bps": 25_000_000_000,
        "mem_total_bytes": 85_899_345_920,
    }
    obj: dict[str, Any] = {
        "kind": "hello",
        "protocol": protocol.PROTOCOL_VERSION,
        "sampler_version": "synth",
        "run_id": run_id,
        "backend": "sim",
        "scenario": "synth",
        "interval_s": 1.0,
        "columns": protocol.hello_columns(),
        "host": {"hostname": host, "driver_version": "550.54.15", "cuda_version": "12.4"},
        "gpus": [
            {
                "index": i,
                "uuid": f"GPU-{host}-{i:04d}",
                "name": "NVIDIA A100-SXM4-80GB",
                "pci_bus_id": f"00000000:{i + 7:02X}:00.0",
                "nominal": nominal,
                "unsupported": {"fan_pct": "passively cooled", "sm_active_pct": "needs Hopper"},
            }
            for i in range(gpus)
        ],
    }
    return parse_hello(obj)


def sample_values(
    t0: float, count: int, gpus: int = 8, interval: float = 1.0, seed: int = 0
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]]:
    """``(t, values)``: times (count) and values (count × gpus × columns, NaN = null)."""
    rng = np.random.default_rng(seed)
    cols = protocol.COLUMN_NAMES
    c = {name: i for i, name in enumerate(cols)}
    t = t0 + np.arange(count) * interval + np.round(rng.random(count) * 0.004, 6)
    v = np.full((count, gpus, len(cols)), NAN)
    phase = np.arange(gpus)[None, :] * 0.7
    minutes = (t[:, None] - t0) / 60.0
    busy = (np.sin(minutes / 45.0 + phase) > -0.6).astype(np.float64)
    util = np.clip(np.round(busy * (92 + rng.normal(0, 3, (count, gpus)))), 0, 100)
    # One thermal episode on GPU 0 in the middle of the range: hotter, clocks held down.
    hot = np.zeros((count, gpus), bool)
    mid = count // 2
    hot[mid : mid + max(1, count // 20), 0] = True
    temp = np.round(38 + util * 0.35 + rng.normal(0, 0.7, (count, gpus)) + hot * 22)
    sm = np.where(util > 5, 1410, 210) - hot * 450
    power = np.round(60 + util * 3.2 + rng.normal(0, 4, (count, gpus)), 3)
    v[:, :, c["util_gpu_pct"]] = util
    v[:, :, c["util_mem_pct"]] = np.round(util * 0.6)
    v[:, :, c["sm_clock_mhz"]] = sm
    v[:, :, c["mem_clock_mhz"]] = 1593
    v[:, :, c["gfx_clock_mhz"]] = sm
    v[:, :, c["temp_gpu_c"]] = temp
    v[:, :, c["temp_mem_c"]] = temp + 6
    v[:, :, c["power_w"]] = power
    v[:, :, c["power_limit_w"]] = 400.0
    v[:, :, c["energy_j"]] = np.round(1e6 + np.cumsum(power * interval, axis=0), 3)
    v[:, :, c["pstate"]] = 0
    v[:, :, c["clock_reasons"]] = np.where(hot, 0x40, np.where(util > 5, 0, 0x1))
    v[:, :, c["viol_power_pct"]] = 0.0
    v[:, :, c["viol_thermal_pct"]] = np.where(hot, 100.0, 0.0)
    v[:, :, c["mem_used_bytes"]] = np.round(busy * 61_000_000_000 + 500_000_000)
    v[:, :, c["pcie_tx_bps"]] = np.round(util * rng.integers(1, 3, (count, gpus)) * 1e7)
    v[:, :, c["pcie_rx_bps"]] = np.round(util * 2.5e7)
    v[:, :, c["pcie_gen"]] = np.where(util > 5, 4, 1)
    v[:, :, c["pcie_width"]] = 16
    v[:, :, c["pcie_replays"]] = 0
    v[:, :, c["nvlink_tx_bps"]] = np.round(util * 1.1e9)
    v[:, :, c["nvlink_rx_bps"]] = np.round(util * 1.1e9)
    v[:, :, c["nvlink_up"]] = 12
    for name in ("ecc_sbe_vol", "ecc_dbe_vol", "remap_pending", "remap_failed"):
        v[:, :, c[name]] = 0
    v[:, :, c["retired_pending"]] = 0
    v[:, :, c["lost"]] = 0
    return t, v


def rows_of(values: np.ndarray[Any, np.dtype[np.float64]]) -> list[tuple[tuple[Value, ...], ...]]:
    """Protocol rows (``(gpu, *values)``, ints where integral, None for NaN) per sample."""
    count, gpus, _ = values.shape
    obj = values.astype(object)
    integral = np.isfinite(values) & (values == np.round(values))
    obj[integral] = values[integral].astype(np.int64)
    obj[np.isnan(values)] = None
    lists = obj.tolist()
    return [tuple((g, *lists[i][g]) for g in range(gpus)) for i in range(count)]


def make_samples(
    t0: float,
    count: int,
    gpus: int = 8,
    interval: float = 1.0,
    seed: int = 0,
    seq0: int = 1,
    distinct: int = 3600,
) -> list[Sample]:
    """``count`` samples from ``t0`` on; the values repeat every ``distinct`` samples (an
    hour at 1 Hz), which keeps a day of 8 GPUs quick to build and small in memory."""
    k = min(count, distinct)
    _, values = sample_values(t0, k, gpus, interval, seed)
    rows = rows_of(values)
    jitter = np.round(np.random.default_rng(seed + 1).random(count) * 0.004, 6)
    t = (t0 + np.arange(count) * interval + jitter).tolist()
    mono0 = 1000.0 + seed
    return [
        Sample(
            seq=seq0 + i,
            t=t[i],
            mono=round(mono0 + t[i] - t0, 6),
            columns=protocol.COLUMN_NAMES,
            rows=rows[i % k],
        )
        for i in range(count)
    ]


def make_procs(t: float, seq: int, gpus: int = 8, user: str = "alice") -> Procs:
    return Procs(
        seq=seq,
        t=t,
        procs=tuple(
            Proc(
                gpu=g,
                pid=4000 + g,
                start_ticks=123456 + g,
                user=user,
                name="python3",
                cmd=f"python3 train.py --rank {g}",
                mem_bytes=60_000_000_000,
                sm_pct=91.0,
                type="C",
            )
            for g in range(gpus)
        ),
    )


def make_event(t: float, seq: int, gpu: int = 0, code: int = 79, typ: str = "xid") -> Event:
    msg = f"Xid {code}: GPU has fallen off the bus" if typ == "xid" else typ
    raw = {"kind": "event", "seq": seq, "t": t, "type": typ, "gpu": gpu, "code": code}
    raw["message"] = msg
    return Event(seq=seq, t=t, type=typ, gpu=gpu, code=code, message=msg, raw=raw)


def floor_minute(t: float) -> float:
    return math.floor(t / 60.0) * 60.0
