"""Realistic pairs of recorded runs for the comparison's tests, written from the protocol.

One host of H100 SXM GPUs training synchronously at 1 Hz, as NVML reports it: utilization
near 99 % (NCCL's kernels spin while a GPU waits for the others, so utilization stays up),
GPM SM activity near 72 %, SM clock at its 1980 MHz maximum with the boost's small dips,
power under its 700 W limit with a brief power-cap bit now and then, a 90 s checkpoint pause
every 20 minutes (utilization 0, clocks down with the idle bit), one process per GPU listed
every 5 s. ``Effect``s change B the way each cause shows in the real data; the GPUs that wait
for a slowed one lose SM activity, not utilization. Lines are the protocol's JSON, so the
tests read them through the real decoder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from gpufleet_sampler import protocol

from tests.support.synth import rows_of

C = {name: i for i, name in enumerate(protocol.COLUMN_NAMES)}
NOMINAL = {
    "sm_clock_max_mhz": 1980,
    "mem_clock_max_mhz": 2619,
    "sm_clock_base_mhz": 1590,
    "power_default_w": 700.0,
    "power_enforced_w": 700.0,
    "power_min_w": 200.0,
    "power_max_w": 700.0,
    "temp_slowdown_c": 87,
    "temp_shutdown_c": 92,
    "temp_mem_max_c": 95,
    "pcie_max_gen": 5,
    "pcie_max_width": 16,
    "nvlink_links": 18,
    "nvlink_link_bps": 25_000_000_000,
    "mem_total_bytes": 85_520_809_984,
}
GPU_NAME = "NVIDIA H100 80GB HBM3"
CKPT_EVERY_S = 1200
CKPT_S = 90

Cube = np.ndarray[Any, np.dtype[np.float64]]


@dataclass
class Effect:
    """A change to B: ``apply(values, gpus, rng)`` edits the value cube (samples × GPUs ×
    columns) on the given GPUs during work; ``procs`` adds other processes."""

    gpus: tuple[int, ...]
    apply: Callable[[Cube, list[int], np.random.Generator, np.ndarray], None]
    others: bool = False  # someone else's process on these GPUs
    wait_others: float = 0.0  # the SM activity the other GPUs lose waiting for these


@dataclass
class Run:
    host: str = "h100-a"
    seconds: int = 1800
    gpus: int = 4
    seed: int = 1
    t0: float = 1_790_000_000.0
    effects: list[Effect] = field(default_factory=list)
    pause_at: tuple[int, ...] = ()  # extra pauses (s from t0), e.g. a checkpoint


def hello(run: Run) -> dict[str, Any]:
    return {
        "kind": "hello",
        "protocol": protocol.PROTOCOL_VERSION,
        "sampler_version": "0.9.0",
        "run_id": f"{run.seed:032x}",
        "backend": "nvml",
        "scenario": None,
        "interval_s": 1.0,
        "procs_interval_s": 5.0,
        "columns": protocol.hello_columns(),
        "host": {"hostname": run.host, "driver_version": "550.90.07", "cuda_version": "12.4"},
        "gpus": [
            {
                "index": g,
                "uuid": f"GPU-{run.host}-{g:02d}",
                "name": GPU_NAME,
                "pci_bus_id": f"00000000:{0x18 + g * 16:02X}:00.0",
                "nominal": NOMINAL,
                "unsupported": {"fan_pct": "NotSupported: passively cooled board"},
            }
            for g in range(run.gpus)
        ],
    }


def _busy(run: Run, n: int) -> np.ndarray:
    s = np.arange(n)
    busy = (s % CKPT_EVERY_S) < CKPT_EVERY_S - CKPT_S
    for at in run.pause_at:
        busy[at : at + CKPT_S] = False
    return busy


def values(run: Run) -> tuple[np.ndarray, Cube, np.ndarray]:
    """``(t, cube, busy)`` of the run."""
    rng = np.random.default_rng(run.seed)
    n, g = run.seconds, run.gpus
    t = run.t0 + np.arange(n) + np.round(rng.random(n) * 0.004, 3)
    busy = _busy(run, n)
    b = busy[:, None] & np.ones((n, g), bool)
    v = np.full((n, g, len(protocol.COLUMN_NAMES)), np.nan)
    util = np.where(b, np.clip(np.round(99 + rng.normal(0, 1.0, (n, g))), 0, 100), 0.0)
    v[:, :, C["util_gpu_pct"]] = util
    v[:, :, C["util_mem_pct"]] = np.where(b, 45.0, 0.0)
    v[:, :, C["sm_active_pct"]] = np.where(b, np.round(72 + rng.normal(0, 2.0, (n, g)), 1), 0.0)
    v[:, :, C["sm_occupancy_pct"]] = np.where(b, 40.0, 0.0)
    v[:, :, C["tensor_active_pct"]] = np.where(b, 55.0, 0.0)
    dip = rng.random((n, g)) < 0.05  # the boost's brief dips, now and then at the power cap
    v[:, :, C["sm_clock_mhz"]] = np.where(b, np.where(dip, 1965.0, 1980.0), 345.0)
    v[:, :, C["clock_reasons"]] = np.where(b, np.where(dip, 0x4, 0), 0x1)
    v[:, :, C["mem_clock_mhz"]] = 2619
    v[:, :, C["gfx_clock_mhz"]] = v[:, :, C["sm_clock_mhz"]]
    v[:, :, C["power_w"]] = np.round(np.where(b, 610 + rng.normal(0, 20, (n, g)), 92.0), 1)
    v[:, :, C["power_limit_w"]] = 700.0
    v[:, :, C["temp_gpu_c"]] = np.round(np.where(b, 66, 41) + rng.normal(0, 1.0, (n, g)))
    v[:, :, C["temp_mem_c"]] = v[:, :, C["temp_gpu_c"]] + 6
    v[:, :, C["pstate"]] = 0
    v[:, :, C["viol_power_pct"]] = np.where(dip, 20.0, 0.0)
    v[:, :, C["viol_thermal_pct"]] = 0.0
    v[:, :, C["mem_used_bytes"]] = 71_000_000_000
    v[:, :, C["pcie_rx_bps"]] = np.round(np.where(b, 2.1e9 + rng.normal(0, 1e8, (n, g)), 1e6))
    v[:, :, C["pcie_tx_bps"]] = np.round(np.where(b, 4e8, 1e6))
    v[:, :, C["pcie_gen"]] = np.where(b, 5, 1)
    v[:, :, C["pcie_width"]] = 16
    v[:, :, C["pcie_replays"]] = 0
    v[:, :, C["nvlink_tx_bps"]] = np.round(np.where(b, 1.4e11, 0.0))
    v[:, :, C["nvlink_rx_bps"]] = v[:, :, C["nvlink_tx_bps"]]
    v[:, :, C["nvlink_up"]] = 18
    for name in ("fp64_active_pct", "fp32_active_pct", "fp16_active_pct"):
        v[:, :, C[name]] = np.where(b, 5.0, 0.0)
    for name in ("ecc_sbe_vol", "ecc_dbe_vol", "remap_pending", "remap_failed"):
        v[:, :, C[name]] = 0
    v[:, :, C["retired_pending"]] = 0
    v[:, :, C["lost"]] = 0
    for e in run.effects:
        e.apply(v, list(e.gpus), rng, busy)
        if e.wait_others:
            rest = [x for x in range(g) if x not in e.gpus]
            sel = np.ix_(busy, rest)
            v[:, :, C["sm_active_pct"]][sel] *= 1.0 - e.wait_others
    v[:, :, C["energy_j"]] = np.round(5e7 + np.cumsum(v[:, :, C["power_w"]], axis=0), 1)
    return t, v, busy


def _procs(run: Run, t: np.ndarray, busy: np.ndarray, seq: int, k: int) -> dict[str, Any]:
    shared = {g for e in run.effects if e.others for g in e.gpus}
    procs: list[dict[str, Any]] = []
    for g in range(run.gpus):
        procs.append(
            {
                "gpu": g,
                "pid": 2100 + g,
                "start_ticks": 880_000 + g,
                "user": "me",
                "name": "python",
                "cmd": f"python train.py --local_rank {g}",
                "mem_bytes": 70_000_000_000,
                "sm_pct": (55.0 if g in shared else 98.0) if busy[k] else 0.0,
                "type": "C",
                "mapping": "exact",
            }
        )
        if g in shared:
            procs.append(
                {
                    "gpu": g,
                    "pid": 91_234,
                    "start_ticks": None,
                    "user": None,
                    "name": None,
                    "cmd": None,
                    "mem_bytes": 9_000_000_000,
                    "sm_pct": 42.0,
                    "type": "C",
                    "mapping": "not_here",
                }
            )
    return {"kind": "procs", "seq": seq, "t": round(float(t[k]) + 0.01, 3), "procs": procs}


def lines(run: Run) -> list[bytes]:
    """The run as protocol lines: a hello, then a sample a second, procs every 5 s."""
    t, v, busy = values(run)
    rows = rows_of(v)
    out = [orjson.dumps(hello(run))]
    seq = 1
    for k in range(len(t)):
        sample = {
            "kind": "sample",
            "seq": seq,
            "t": float(t[k]),
            "mono": round(5000.0 + float(t[k]) - run.t0, 3),
            "gpus": [list(r) for r in rows[k]],
        }
        out.append(orjson.dumps(sample))
        seq += 1
        if k % 5 == 0:
            out.append(orjson.dumps(_procs(run, t, busy, seq, k)))
            seq += 1
    return [line + b"\n" for line in out]


def write(path: Path, run: Run) -> Path:
    path.write_bytes(b"".join(lines(run)))
    return path


# The causes as they show in the data, each on ``gpus`` during work.
def _set(v: Cube, busy: np.ndarray, gpus: list[int], col: str, value: Any) -> None:
    v[:, :, C[col]][np.ix_(busy, gpus)] = value


def _held(rng: np.random.Generator, busy: np.ndarray, gpus: list[int], frac: float) -> np.ndarray:
    """A (work samples × GPUs) mask of the time a cause held the clocks."""
    return rng.random((int(busy.sum()), len(gpus))) < frac


def _sm_waits(
    v: Cube, busy: np.ndarray, g: list[int], rng: np.random.Generator, pct: float
) -> None:
    """The SMs of these GPUs busy only ``pct`` % (± noise) of the work: they wait."""
    noise = rng.normal(0, 2, (int(busy.sum()), len(g)))
    _set(v, busy, g, "sm_active_pct", np.round(pct + noise, 1))


def power_limit(gpus: tuple[int, ...], limit: float = 450.0) -> Effect:
    """The provider lowered the enforced limit: power pinned at it, clocks down, power bit."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        m = int(busy.sum())
        _set(v, busy, g, "power_limit_w", limit)
        _set(v, busy, g, "power_w", np.round(limit - np.abs(rng.normal(0, 4, (m, len(g)))), 1))
        _set(v, busy, g, "sm_clock_mhz", np.round(1560 + rng.normal(0, 25, (m, len(g)))))
        _set(v, busy, g, "clock_reasons", 0x4)
        _set(v, busy, g, "viol_power_pct", 100.0)

    return Effect(gpus, apply, wait_others=0.2)


def power_cap(gpus: tuple[int, ...]) -> Effect:
    """Same 700 W limit, but B draws up to it more often: clocks held under the power bit."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        held = _held(rng, busy, g, 0.6)
        _set(v, busy, g, "power_w", np.where(held, 699.0, 650.0))
        _set(v, busy, g, "sm_clock_mhz", np.where(held, 1710.0, 1980.0))
        _set(v, busy, g, "clock_reasons", np.where(held, 0x4, 0))

    return Effect(gpus, apply, wait_others=0.08)


def thermal(gpus: tuple[int, ...]) -> Effect:
    """Poor cooling: hot, and the thermal slowdown bits hold the clocks down most of the time."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        m = int(busy.sum())
        held = _held(rng, busy, g, 0.7)
        _set(v, busy, g, "temp_gpu_c", np.round(86 + rng.normal(0, 1.0, (m, len(g)))))
        _set(v, busy, g, "sm_clock_mhz", np.where(held, 1410.0, 1890.0))
        _set(v, busy, g, "clock_reasons", np.where(held, 0x20 | 0x40, 0))
        _set(v, busy, g, "viol_thermal_pct", np.where(held, 100.0, 0.0))

    return Effect(gpus, apply, wait_others=0.2)


def hw_slowdown(gpus: tuple[int, ...]) -> Effect:
    """HW slowdown (a power brake or over-current signal from the board): clocks halved."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        held = _held(rng, busy, g, 0.4)
        _set(v, busy, g, "sm_clock_mhz", np.where(held, 990.0, 1980.0))
        _set(v, busy, g, "clock_reasons", np.where(held, 0x8, 0))

    return Effect(gpus, apply, wait_others=0.15)


def clocks_unexplained(gpus: tuple[int, ...]) -> Effect:
    """Clocks capped below nominal with no reason reported (locked clocks on the host)."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        _set(v, busy, g, "sm_clock_mhz", 1500.0)
        _set(v, busy, g, "clock_reasons", 0)

    return Effect(gpus, apply, wait_others=0.2)


def shared_gpu(gpus: tuple[int, ...]) -> Effect:
    """Someone else's process (outside this container) time-slices the GPU: utilization and
    SM activity stay up, our process gets 55 % of the SMs."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        _set(v, busy, g, "mem_used_bytes", 80_000_000_000)

    return Effect(gpus, apply, others=True)


def data_wait(gpus: tuple[int, ...], idle_s: int = 4, period_s: int = 10) -> Effect:
    """The input pipeline cannot keep up: every step the GPUs wait seconds for data
    (utilization saw-tooth), less data arrives over PCIe per second."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        s = np.arange(len(busy))
        stall = (s % period_s < idle_s) & busy
        _set(v, stall, g, "util_gpu_pct", np.round(rng.uniform(0, 6, (int(stall.sum()), len(g)))))
        _set(v, stall, g, "sm_active_pct", 1.0)
        _set(v, busy, g, "pcie_rx_bps", 1.3e9)

    return Effect(gpus, apply)


def pcie_link(gpus: tuple[int, ...]) -> Effect:
    """The link trained at x8 instead of x16: transfers take twice as long, SMs wait."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        _set(v, np.ones_like(busy), g, "pcie_width", 8)
        _sm_waits(v, busy, g, rng, 58)

    return Effect(gpus, apply, wait_others=0.18)


def nvlink(gpus: tuple[int, ...]) -> Effect:
    """Six of 18 NVLink links down: collectives slower, the SMs wait in them."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        _set(v, np.ones_like(busy), g, "nvlink_up", 12)
        _set(v, busy, g, "nvlink_tx_bps", 9e10)
        _set(v, busy, g, "nvlink_rx_bps", 9e10)
        _sm_waits(v, busy, g, rng, 56)

    return Effect(gpus, apply, wait_others=0.2)


def memory_pressure(gpus: tuple[int, ...]) -> Effect:
    """Memory nearly full: the allocator frees and retries, the SMs wait on it."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        _set(v, busy, g, "mem_used_bytes", 84_900_000_000)
        _sm_waits(v, busy, g, rng, 57)

    return Effect(gpus, apply)


def ecc(gpus: tuple[int, ...]) -> Effect:
    """A failing memory: corrected errors climb, an uncorrected one and a pending row
    remapping; the SMs stall on the retries."""

    def apply(v: Cube, g: list[int], rng: np.random.Generator, busy: np.ndarray) -> None:
        n = len(busy)
        _set(
            v,
            np.ones_like(busy),
            g,
            "ecc_sbe_vol",
            np.arange(n)[:, None] * 3 + np.zeros((1, len(g))),
        )
        _set(v, np.arange(n) >= n // 4, g, "ecc_dbe_vol", 1)
        _set(v, np.arange(n) >= n // 4, g, "remap_pending", 1)
        _sm_waits(v, busy, g, rng, 60)

    return Effect(gpus, apply, wait_others=0.15)
