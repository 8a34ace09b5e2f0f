"""One window's samples as NumPy arrays, and which of its seconds were work.

The comparison reads a dozen columns of every GPU of two windows (two hours of 8 GPUs at
1 Hz is 115,200 rows); pulling them out of the ``Sample`` tuples once, into one
``(samples, gpus)`` array per column, keeps the rest vectorised. ``work_mask`` is where the
job ran: a checkpoint pause or an idle stretch is left out, so that busy phases are compared
with busy phases, while the short stalls of a job waiting for data stay in (they are what
data starvation looks like).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

import numpy as np

from gpufleet.core.verdicts.window import RunWindow

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


def series_of(window: RunWindow) -> Series:
    """The window's samples as arrays (one pass over the rows)."""
    samples = window.samples
    gpus = tuple(window.gpus)
    slot = {g: i for i, g in enumerate(gpus)}
    n, m = len(samples), len(METRICS)
    cube = np.full((n, len(gpus), m), np.nan)
    t = np.fromiter((s.t for s in samples), float, n)
    # Per distinct columns tuple: a getter of METRICS' positions (0, the GPU index, where
    # a column is absent: blanked below) and the METRICS it lacks.
    picks: dict[tuple[str, ...], tuple[Any, list[int], int]] = {}
    flat: list[Any] = []
    where_k: list[int] = []
    where_g: list[int] = []
    kinds: list[int] = []
    for k, s in enumerate(samples):
        pick = picks.get(s.columns)
        if pick is None:
            pos = [s.columns.index(c) + 1 if c in s.columns else 0 for c in METRICS]
            lacks = [i for i, p in enumerate(pos) if p == 0]
            pick = picks[s.columns] = (itemgetter(*pos), lacks, len(picks))
        get, _, kind = pick
        width = len(s.columns) + 1
        for r in s.rows:
            if len(r) == width and r[0] in slot:
                flat.append(get(r))
                where_k.append(k)
                where_g.append(slot[int(r[0])])
                kinds.append(kind)
    if flat:
        arr = np.array(flat, dtype=float)
        kind_of = np.array(kinds)
        for _, lacks, kind in picks.values():
            if lacks:
                arr[np.ix_(kind_of == kind, lacks)] = np.nan
        cube[np.array(where_k), np.array(where_g)] = arr
    values = {name: cube[:, :, i] for i, name in enumerate(METRICS)}
    interval = float(window.hello.interval_s or 1.0)
    if n > 2:
        interval = float(np.median(np.diff(t))) or interval
    return Series(t=t, gpus=gpus, values=values, interval_s=interval)


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
