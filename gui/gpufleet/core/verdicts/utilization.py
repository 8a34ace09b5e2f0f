"""How much of the GPU works, beside "a kernel was running": the GPM picture and its findings.

GPU-Util (``util_gpu_pct``) is the share of time at least one kernel ran, however few of the
SMs it kept busy; a GPU at 99 % can have a quarter of its SMs working. GPM (Hopper and newer)
says how much of the chip works: SM active (a warp resident on an SM), SM occupancy (warps
resident against the maximum), tensor-pipe and DRAM activity. Where the GPU has no GPM
(Ampere, Ada, GeForce) the power draw against the enforced limit stands in: a GPU that is
"99 % utilized" at 40 % of its power limit is mostly waiting.

``picture`` summarises one GPU's series (the Compute tab's sentence); ``findings`` turns a
window of samples into diagnosis findings (``diagnose`` calls it once per GPU):

- ``diag_not_compute_bound``: busy, but the SMs are mostly idle (or, without GPM, the power
  draw stays far under the limit): small or serialised kernels, launch overhead, waiting on
  the host;
- ``diag_memory_bound``: DRAM busy while the SMs are mostly idle: the job waits on memory
  bandwidth, and more FLOPs would not help;
- ``diag_tensor_idle``: the SMs work but the tensor cores do not: a mixed-precision job whose
  matrix products do not reach the tensor cores (fp32 matmuls, autocast off); a warning when
  the FP16 pipes are busy meanwhile (half-precision math done without the tensor cores).

Samples held down by thermal or hardware slowdown are left out: the diagnosis names those
causes itself, and a throttled job is not "not compute-bound".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from gpufleet_sampler import protocol

from gpufleet.core.alerts.throttle import reason_bits
from gpufleet.core.model.findings import INFO, WARN, Finding
from gpufleet.core.wire.messages import Sample

F64 = npt.NDArray[np.float64]

# GPM columns of a sample, in the order the Compute tab shows them.
GPM_METRICS: Final = protocol.GPM_COLUMNS
BUSY_UTIL_PCT: Final = 80.0  # "the GPU looks busy": what users read as fully used
SM_LOW_PCT: Final = 50.0  # SM active under this while "busy": half the chip idles
DRAM_HIGH_PCT: Final = 50.0  # DRAM active over this: bandwidth is what the job waits on
TENSOR_IDLE_PCT: Final = 5.0  # tensor pipe under this while the SMs work: no tensor-core math
SM_WORKING_PCT: Final = 40.0
FP16_BUSY_PCT: Final = 10.0  # the FP16 pipes this busy: the job computes in half precision
POWER_LOW_FRAC: Final = 0.45  # no GPM: busy at under this share of the power limit
MIN_BUSY_SAMPLES: Final = 30  # a finding rests on at least this many busy samples
SHARE_MIN: Final = 0.5  # and holds for at least this share of them
# Thermal, HW slowdown and HW power brake (clock event reason bits 0x20, 0x40, 0x08, 0x80).
_SLOWDOWN_MASK: Final = 0x20 | 0x40 | 0x08 | 0x80

_COLUMNS: Final = (
    "util_gpu_pct",
    *GPM_METRICS,
    "power_w",
    "power_limit_w",
    "clock_reasons",
)


@dataclass(frozen=True)
class Picture:
    """Means over one GPU's busy samples (util >= BUSY_UTIL_PCT); None = not reported."""

    busy_samples: int
    util: float | None
    sm_active: float | None
    sm_occupancy: float | None
    tensor: float | None
    dram: float | None
    power_frac: float | None  # power draw / enforced limit, the stand-in without GPM
    fp64: float | None = None
    fp32: float | None = None
    fp16: float | None = None

    @property
    def has_gpm(self) -> bool:
        return self.sm_active is not None


def _mean(x: F64) -> float | None:
    x = x[np.isfinite(x)]
    return float(x.mean()) if len(x) else None


def picture(
    util: F64,
    gpm: Mapping[str, F64],
    power: F64 | None = None,
    limit: F64 | None = None,
) -> Picture:
    """The means of one GPU's aligned series over its busy samples. ``gpm`` maps GPM column
    names to series (a missing or all-NaN one is not reported)."""
    busy = np.isfinite(util) & (util >= BUSY_UTIL_PCT)

    def over(name: str) -> float | None:
        x = gpm.get(name)
        return _mean(x[busy]) if x is not None and len(x) == len(util) else None

    frac = None
    if power is not None and limit is not None and len(power) == len(util) == len(limit):
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = _mean(np.where(limit > 0, power / limit, np.nan)[busy])
    return Picture(
        busy_samples=int(busy.sum()),
        util=_mean(util[busy]),
        sm_active=over("sm_active_pct"),
        sm_occupancy=over("sm_occupancy_pct"),
        tensor=over("tensor_active_pct"),
        dram=over("dram_active_pct"),
        power_frac=frac,
        fp64=over("fp64_active_pct"),
        fp32=over("fp32_active_pct"),
        fp16=over("fp16_active_pct"),
    )


def _series(samples: Sequence[Sample], gpu: int) -> dict[str, F64]:
    out = {m: np.full(len(samples), np.nan) for m in _COLUMNS}
    out["t"] = np.array([s.t for s in samples], dtype=np.float64)
    pos_cache: dict[tuple[str, ...], list[int | None]] = {}
    for k, s in enumerate(samples):
        r = s.row(gpu)
        if r is None:
            continue
        pos = pos_cache.get(s.columns)
        if pos is None:
            where = {c: i + 1 for i, c in enumerate(s.columns)}
            pos = pos_cache[s.columns] = [where.get(m) for m in _COLUMNS]
        for m, p in zip(_COLUMNS, pos, strict=True):
            if p is not None and p < len(r):
                v = r[p]
                if v is not None:
                    out[m][k] = float(v)
    return out


def findings(gpu: int, samples: Iterable[Sample]) -> list[Finding]:
    """Diagnosis findings about how much of ``gpu`` worked over the samples' window."""
    ss = list(samples)
    if not ss:
        return []
    s = _series(ss, gpu)
    t, util, reasons = s["t"], s["util_gpu_pct"], s["clock_reasons"]
    slowed = (reason_bits(reasons) & _SLOWDOWN_MASK) != 0
    busy = np.isfinite(util) & (util >= BUSY_UTIL_PCT) & ~slowed
    n = int(busy.sum())
    if n < MIN_BUSY_SAMPLES:
        return []
    t0, t1 = float(t[busy][0]), float(t[busy][-1])
    sm = s["sm_active_pct"]
    has_gpm = bool(np.isfinite(sm[busy]).any())
    if not has_gpm:
        return _without_gpm(gpu, s, busy, t0, t1)
    vals: dict[str, Any] = {
        "util_pct": _mean(util[busy]),
        "sm_active_pct": _mean(sm[busy]),
        "sm_occupancy_pct": _mean(s["sm_occupancy_pct"][busy]),
        "tensor_active_pct": _mean(s["tensor_active_pct"][busy]),
        "dram_active_pct": _mean(s["dram_active_pct"][busy]),
        "fp16_active_pct": _mean(s["fp16_active_pct"][busy]),
        "fp32_active_pct": _mean(s["fp32_active_pct"][busy]),
    }
    out: list[Finding] = []
    sm_ok = np.isfinite(sm) & busy
    low = sm_ok & (sm < SM_LOW_PCT)
    low_share = float(low.sum()) / max(1, int(sm_ok.sum()))
    dram = s["dram_active_pct"]
    dram_high = low & np.isfinite(dram) & (dram >= DRAM_HIGH_PCT)
    if low_share >= SHARE_MIN and float(dram_high.sum()) / max(1, int(low.sum())) >= SHARE_MIN:
        out.append(Finding("diag_memory_bound", WARN, gpu, {**vals, "share": low_share}, t0, t1))
    elif low_share >= SHARE_MIN:
        vals2 = {**vals, "share": low_share, "variant": "gpm"}
        out.append(Finding("diag_not_compute_bound", WARN, gpu, vals2, t0, t1))
    tensor = s["tensor_active_pct"]
    working = sm_ok & (sm >= SM_WORKING_PCT) & np.isfinite(tensor)
    n_work = int(working.sum())
    if n_work >= MIN_BUSY_SAMPLES and n_work >= SHARE_MIN * int(sm_ok.sum()):
        idle = working & (tensor < TENSOR_IDLE_PCT)
        share = float(idle.sum()) / n_work
        if share >= SHARE_MIN:
            fp16 = vals.get("fp16_active_pct")
            if fp16 is not None and fp16 >= FP16_BUSY_PCT:
                # Half-precision math on the CUDA cores' FP16 pipes while the tensor cores
                # idle: a mixed-precision job for sure, and one that misses its tensor cores.
                v16 = {**vals, "share": share, "variant": "fp16"}
                out.append(Finding("diag_tensor_idle", WARN, gpu, v16, t0, t1))
            else:
                out.append(Finding("diag_tensor_idle", INFO, gpu, {**vals, "share": share}, t0, t1))
    return out


def _without_gpm(
    gpu: int, s: Mapping[str, F64], busy: npt.NDArray[np.bool_], t0: float, t1: float
) -> list[Finding]:
    """No GPM on this GPU: the power draw against the limit stands in for SM activity."""
    power, limit = s["power_w"], s["power_limit_w"]
    # No board's power limit is under 1 W: a smaller one is garbage (and power / 1e-300
    # overflows), not a card to judge.
    ok = busy & np.isfinite(power) & np.isfinite(limit) & (limit >= 1.0)
    if int(ok.sum()) < MIN_BUSY_SAMPLES:
        return []
    frac = power[ok] / limit[ok]
    share = float((frac < POWER_LOW_FRAC).sum()) / len(frac)
    if share < SHARE_MIN:
        return []
    vals = {
        "util_pct": _mean(s["util_gpu_pct"][ok]),
        "power_frac": float(frac.mean()),
        "power_w": float(power[ok].mean()),
        "power_limit_w": float(limit[ok].mean()),
        "share": share,
        "variant": "power",
    }
    return [Finding("diag_not_compute_bound", INFO, gpu, vals, t0, t1)]
