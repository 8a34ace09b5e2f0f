"""One window's samples as NumPy arrays, and which of its seconds were work.

The comparison reads a dozen columns of every GPU of two windows (two hours of 8 GPUs at
1 Hz is 115,200 rows); pulling them out of the ``Sample`` tuples once, into one
``(samples, gpus)`` array per column, keeps the rest vectorised. ``work_mask`` is where the
job ran: a checkpoint pause or an idle stretch is left out, so that busy phases are compared
with busy phases, while the short stalls of a job waiting for data stay in (they are what
data starvation looks like).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

import numpy as np

from gpufleet.core.verdicts.window import RunWindow
from gpufleet.core.wire.messages import Sample

F64 = np.ndarray[Any, np.dtype[np.float64]]
BoolArr = np.ndarray[Any, np.dtype[np.bool_]]

METRICS: Final = (
    "util_gpu_pct",
    "sm_clock_mhz",
    "clock_reasons",
    "temp_gpu_c",
    "power_w",
    "power_limit_w",
    "mem_used_bytes",
    "pcie_rx_bps",
    "pcie_tx_bps",
    "pcie_gen",
    "pcie_width",
    "nvlink_rx_bps",
    "nvlink_tx_bps",
    "nvlink_up",
    "sm_active_pct",
    "ecc_sbe_vol",
    "ecc_dbe_vol",
    "remap_pending",
)
# A phase is work where utilization averaged over this long is at least WORK_UTIL_PCT ...
WORK_SMOOTH_S: Final = 60.0
WORK_UTIL_PCT: Final = 20.0
# ... and not inside a stretch this long at under IDLE_UTIL_PCT (a pause, not a data stall).
PAUSE_S: Final = 30.0
IDLE_UTIL_PCT: Final = 5.0


@dataclass(frozen=True)
class Series:
    """``values[metric]`` is ``(len(t), len(gpus))``, NaN where a GPU sent no value."""

    t: F64
    gpus: tuple[int, ...]
    values: dict[str, F64]
    interval_s: float

    def col(self, metric: str, gpu: int) -> F64:
        return self.values[metric][:, self.gpus.index(gpu)]


def series_of(window: RunWindow, gpus: Sequence[int]) -> Series:
    """The window's samples of these GPUs as arrays (one pass over the rows)."""
    samples = window.samples
    gpus = tuple(gpus)
    slot = {g: i for i, g in enumerate(gpus)}
    n, m = len(samples), len(METRICS)
    cube = np.full((n, len(gpus), m), np.nan)
    t = np.fromiter((s.t for s in samples), float, n)
    first = samples[0].columns if samples else ()
    if all(x.columns == first for x in samples):
        _fill_uniform(cube, samples, first, slot)
    else:
        for k, x in enumerate(samples):
            _fill_uniform(cube[k : k + 1], samples[k : k + 1], x.columns, slot)
    values = {name: cube[:, :, i] for i, name in enumerate(METRICS)}
    interval = float(window.hello.interval_s or 1.0)
    if n > 2:
        interval = float(np.median(np.diff(t))) or interval
    return Series(t=t, gpus=gpus, values=values, interval_s=interval)


def _fill_uniform(
    cube: F64, samples: Sequence[Sample], columns: tuple[str, ...], slot: dict[int, int]
) -> None:
    """Fill ``cube`` from samples that share one columns tuple (the decoder makes every
    row ``len(columns) + 1`` long); a column they lack stays NaN."""
    pos = [columns.index(c) + 1 if c in columns else 0 for c in METRICS]
    have = [i for i, p in enumerate(pos) if p]
    if not have or not samples:
        return
    get = itemgetter(*[pos[i] for i in have])
    rows = [r for x in samples for r in x.rows]
    counts = np.fromiter((len(x.rows) for x in samples), int, len(samples))
    k = np.repeat(np.arange(len(samples)), counts)
    g = np.fromiter((slot.get(int(r[0] or 0), -1) for r in rows), int, len(rows))
    vals = np.array([get(r) for r in rows], dtype=float).reshape(len(rows), len(have))
    keep = g >= 0
    sub = cube[:, :, have]
    sub[k[keep], g[keep]] = vals[keep]
    cube[:, :, have] = sub


def _runs(mask: BoolArr) -> list[tuple[int, int]]:
    """``[start, end)`` of every run of True."""
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    return list(zip(starts, ends, strict=True))


def work_mask(util: F64, interval_s: float) -> BoolArr:
    """Where a GPU worked (see the module docstring); NaN utilization is not work."""
    u = np.nan_to_num(util, nan=0.0)
    width = max(1, round(WORK_SMOOTH_S / max(interval_s, 1e-3)))
    kernel = np.ones(width) / width
    smooth = np.convolve(u, kernel, mode="same")
    work = (smooth >= WORK_UTIL_PCT) & ~np.isnan(util)
    pause_len = max(1, round(PAUSE_S / max(interval_s, 1e-3)))
    for a, b in _runs(u < IDLE_UTIL_PCT):
        if b - a >= pause_len:
            work[a:b] = False
    return work
