"""What one GPU did during the work of one window: the figures the comparison weighs.

The throughput model is the one the rental guide argues from: a GPU's useful work per second
is its duty (the share of time it computed: GPM's SM activity on Hopper and newer, else
``util_gpu_pct``, the share of time a kernel ran) times its clock against
nominal times the share of it our job had (1 unless another process ran on it). So each
figure here is weighted by utilization over the window's work samples: a clock held down
while the GPU idled costs nothing. Clock deficits are split by the reason the driver gave
(``clock_reasons``), which is how a lost clock becomes "thermal" or "power limit".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from gpufleet_sampler import protocol

from gpufleet.core.verdicts.compare.series import F64, BoolArr, Series, work_mask
from gpufleet.core.wire.messages import Hello, Proc, Procs

# Clock reason categories, most specific first (a sample in two counts in the first).
REASON_CATEGORIES: Final = (
    ("hw_slowdown", 0x8 | 0x80),
    ("thermal", protocol.REASON_THERMAL_MASK),
    ("power", 0x4),
)
UNEXPLAINED: Final = "unexplained"
MAX_LISTED_PROCS: Final = 5
GPM_MIN_COVER: Final = 0.9


@dataclass
class GpuRun:
    """One GPU over one window's work (see the module docstring for the weighting)."""

    gpu: int
    work_s: float = 0.0
    rate: F64 = field(default_factory=lambda: np.zeros(0))  # per work sample, 0..1
    duty: float = float("nan")  # mean utilization / 100 over the work
    clock: float = float("nan")  # utilization-weighted SM clock, MHz
    nominal: float = float("nan")
    deficit: dict[str, float] = field(default_factory=dict)  # clock lost per reason, 0..1
    held: dict[str, float] = field(default_factory=dict)  # share of the work per reason
    own: float = 1.0  # utilization-weighted share of the GPU our job had
    others: list[dict[str, Any]] = field(default_factory=list)
    t: F64 = field(default_factory=lambda: np.zeros(0))  # the work samples' times
    own_series: F64 = field(default_factory=lambda: np.zeros(0))  # own share per work sample
    fig: dict[str, float | None] = field(default_factory=dict)  # the figures a cause shows

    @property
    def mean_rate(self) -> float:
        return float(self.rate.mean()) if len(self.rate) else float("nan")


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _mean(x: F64) -> float | None:
    ok = x[~np.isnan(x)]
    return float(ok.mean()) if len(ok) else None


def _median(x: F64) -> float | None:
    ok = x[~np.isnan(x)]
    return float(np.median(ok)) if len(ok) else None


def _rise(x: F64) -> float | None:
    """How much a counter grew over the window."""
    ok = x[~np.isnan(x)]
    return float(max(0.0, ok[-1] - ok[0])) if len(ok) else None


@dataclass(frozen=True)
class Snapshots:
    """A window's process snapshots split by GPU once (each GPU's list, in time order),
    leaving out processes that only hold the device file (a dataloader worker)."""

    t: F64
    by_gpu: dict[int, list[list[Proc]]]


def snapshots(procs: Sequence[Procs], gpus: Sequence[int]) -> Snapshots:
    by_gpu: dict[int, list[list[Proc]]] = {g: [[] for _ in procs] for g in gpus}
    for i, snap in enumerate(procs):
        for p in snap.procs:
            lists = by_gpu.get(p.gpu)
            if lists is not None and p.mapping != protocol.MAP_NO_MEMORY:
                lists[i].append(p)
    return Snapshots(np.array([p.t for p in procs], dtype=float), by_gpu)


def _main_process(entries: list[list[Proc]]) -> tuple[int, int | None] | None:
    """The job's process on a GPU: the one holding the most memory in the window."""
    mem: dict[tuple[int, int | None], int] = {}
    for snap in entries:
        for p in snap:
            key = (p.pid, p.start_ticks)
            mem[key] = max(mem.get(key, 0), p.mem_bytes or 0)
    return max(mem, key=lambda k: mem[k]) if mem else None


def _own_fraction(entries: list[Proc], main: tuple[int, int | None] | None) -> float:
    """Our job's share of the GPU in one snapshot: by per-process SM use where NVML gave
    it, else an equal time slice per process (what the time-slicing scheduler does)."""
    if len(entries) <= 1 and (not entries or (entries[0].pid, entries[0].start_ticks) == main):
        return 1.0
    ours = [p for p in entries if (p.pid, p.start_ticks) == main]
    if not ours:
        return 1.0 / (len(entries) + 1)
    sm = [p.sm_pct for p in entries]
    if all(v is not None for v in sm) and sum(v or 0.0 for v in sm) > 0:
        return float(sum(p.sm_pct or 0.0 for p in ours) / sum(v or 0.0 for v in sm))
    return 1.0 / len(entries)


def _other(p: Proc) -> dict[str, Any]:
    return {
        "pid": p.pid,
        "name": p.name,
        "user": p.user,
        "outside_container": p.mapping == protocol.MAP_NOT_HERE,
        "mem_bytes": p.mem_bytes,
    }


def _sharing(gpu: int, t: F64, snaps: Snapshots) -> tuple[F64, list[dict[str, Any]]]:
    """Own share at each sample time, and the other processes seen on the GPU. A snapshot
    holds until the next one: the history store keeps an unchanged process set once."""
    own = np.ones(len(t))
    entries = snaps.by_gpu.get(gpu, [])
    if not entries:
        return own, []
    main = _main_process(entries)
    fracs = np.ones(len(entries))
    others: dict[tuple[int, int | None], dict[str, Any]] = {}
    last: list[Proc] | None = None
    for i, snap in enumerate(entries):
        if snap == last:  # the same set as the one before (most are): same share
            fracs[i] = fracs[i - 1]
            continue
        last = snap
        fracs[i] = _own_fraction(snap, main)
        for p in snap:
            key = (p.pid, p.start_ticks)
            if key != main and key not in others and len(others) < MAX_LISTED_PROCS:
                others[key] = _other(p)
    idx = np.searchsorted(snaps.t, t, side="right") - 1
    valid = idx >= 0
    own[valid] = fracs[idx[valid]]
    return own, list(others.values())


def _reason_split(
    reasons: F64, loss: F64, weight: F64
) -> tuple[dict[str, float], dict[str, float]]:
    """Clock lost per reason category (weighted mean) and the work share under each."""
    bits = np.nan_to_num(reasons, nan=0.0).astype(np.int64)
    left = np.ones(len(bits), bool)
    total = float(weight.sum()) or 1.0
    deficit: dict[str, float] = {}
    held: dict[str, float] = {}
    for name, mask in REASON_CATEGORIES:
        sel = left & ((bits & mask) != 0)
        left &= ~sel
        deficit[name] = float((loss * weight)[sel].sum() / total)
        held[name] = float(sel.mean()) if len(sel) else 0.0
    deficit[UNEXPLAINED] = float((loss * weight)[left].sum() / total)
    held[UNEXPLAINED] = float((left & (loss > 0.03)).mean()) if len(left) else 0.0
    return deficit, held


def _duty(col: dict[str, F64]) -> F64:
    """The share of each work sample the GPU computed (0..1): SM activity where GPM gives it
    for nearly every sample (a kernel spinning in a collective keeps utilization at 99 %
    while the SMs wait; GPM sees it), else utilization."""
    sm = col["sm_active_pct"]
    if len(sm) and float(np.mean(~np.isnan(sm))) >= GPM_MIN_COVER:
        return np.nan_to_num(sm, nan=float(np.nanmean(sm))) / 100.0
    return np.nan_to_num(col["util_gpu_pct"], nan=0.0) / 100.0


def nominal_clock(hello: Hello, gpu: int) -> float | None:
    info = hello.gpu(gpu)
    v = info.nominal_value("sm_clock_max_mhz") if info else None
    return float(v) if isinstance(v, int | float) and v > 0 else None


def gpu_run(s: Series, gpu: int, snaps: Snapshots, nominal: float, hello: Hello) -> GpuRun:
    """The figures of one GPU over the window's work samples."""
    util = s.col("util_gpu_pct", gpu)
    work: BoolArr = work_mask(util, s.interval_s)
    run = GpuRun(gpu=gpu, nominal=nominal, work_s=float(work.sum() * s.interval_s))
    if not work.any():
        return run
    col = {m: v[:, s.gpus.index(gpu)][work] for m, v in s.values.items()}
    u = _duty(col)
    clock = col["sm_clock_mhz"]
    have_clock = ~np.isnan(clock)
    frac = np.where(have_clock, np.clip(clock / nominal, 0.0, 1.5), 1.0)
    own, run.others = _sharing(gpu, s.t[work], snaps)
    run.rate = u * frac * own
    run.t, run.own_series = s.t[work], own
    wsum = float(u.sum()) or 1.0
    run.duty = float(u.mean())
    run.clock = float((u * np.nan_to_num(clock, nan=nominal)).sum() / wsum)
    run.own = float((u * own).sum() / wsum)
    run.deficit, run.held = _reason_split(col["clock_reasons"], np.clip(1.0 - frac, 0, 1), u)
    run.fig = _figures(col, run, hello)
    run.fig["util_gpu_pct"] = _mean(col["util_gpu_pct"])
    for name, share in run.held.items():
        run.fig[f"held_{name}_pct"] = share * 100.0
    return run


def _figures(col: dict[str, F64], run: GpuRun, hello: Hello) -> dict[str, float | None]:
    info = hello.gpu(run.gpu)
    total = info.nominal_value("mem_total_bytes") if info else None
    mem = col["mem_used_bytes"]
    mem_max = float(np.nanmax(mem)) if (~np.isnan(mem)).any() else None
    links = info.nominal_value("nvlink_links") if info else None
    return {
        "duty_pct": _num(run.duty * 100.0),
        "sm_active_pct": _mean(col["sm_active_pct"]),
        "sm_clock_mhz": _num(run.clock),
        "sm_clock_max_mhz": _num(run.nominal),
        "power_w": _mean(col["power_w"]),
        "power_limit_w": _median(col["power_limit_w"]),
        "temp_gpu_c": _mean(col["temp_gpu_c"]),
        "temp_max_c": float(np.nanmax(col["temp_gpu_c"]))
        if (~np.isnan(col["temp_gpu_c"])).any()
        else None,
        "own_share_pct": _num(run.own * 100.0),
        "pcie_gen": _median(col["pcie_gen"]),
        "pcie_width": _median(col["pcie_width"]),
        "pcie_rx_bps": _mean(col["pcie_rx_bps"]),
        "pcie_tx_bps": _mean(col["pcie_tx_bps"]),
        "nvlink_up": _median(col["nvlink_up"]),
        "nvlink_links": float(links) if isinstance(links, int | float) else None,
        "nvlink_bps": _mean(col["nvlink_rx_bps"] + col["nvlink_tx_bps"]),
        "mem_used_pct": mem_max / float(total) * 100.0 if mem_max and total else None,
        "ecc_sbe_new": _rise(col["ecc_sbe_vol"]),
        "ecc_dbe_new": _rise(col["ecc_dbe_vol"]),
        "remap_pending": float(np.nanmax(col["remap_pending"]))
        if (~np.isnan(col["remap_pending"])).any()
        else None,
        "work_s": run.work_s,
    }
