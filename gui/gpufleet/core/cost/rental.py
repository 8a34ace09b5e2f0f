"""Rental cost per host: what it has cost, how much of it was busy or idle, and advice.

Definitions (the same as the rules and the plots):

- billed time = the time the instance was billed: from the billing start
  (``HostConfig.billing_start``, else the first sample) on, measured between consecutive
  samples on the sampler's monotonic clock (``mono``), never on the instance's wall clock,
  which can jump (a clock set a day forward bills nothing extra). The sampler's ring replays
  what it sampled while the laptop was away, so a disconnection is billed too. An interval
  across an instance reboot (the monotonic clock restarts) is not billed from the samples;
- billing state (``set_billing``, from the provider or set by hand, ``core.cost.billing``):
  ``running`` bills ``price_per_hour``; ``storage`` (stopped, disk kept) bills
  ``storage_per_hour`` (nothing where unknown) and counts neither busy nor idle; ``ended``
  bills nothing;
- busy / idle time = sample intervals during which the host was busy / idle (a host is idle
  when all its GPUs are: utilization < 5 % and memory used < 10 % of capacity). Each interval
  between two consecutive samples takes the state of its first sample;
- unknown time = billed time not covered by samples (disconnected, sampler stopped, or a gap
  longer than ``gap_s``): it is billed, but counted neither busy nor idle;
- effective compute ratio = ∫ mean GPU utilization dt / billed time: the share of what you
  paid for that the GPUs spent computing (unknown time counts as not computing);
- projection = the cost at the end of the next 24 h at the current price.

Costs are ``None`` where the host has no price, in the host's own currency: totals across
hosts are per currency (``core.cost.totals``), never added across currencies. Everything
is a pure function of the samples (and billing changes) fed, so a replay gives the same
figures as the live run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.billing import BillingState
from gpufleet.core.cost.held_idle import WORK_PCT, HeldIdle, Period
from gpufleet.core.cost.idle import gpu_is_idle
from gpufleet.core.wire.messages import Hello, Message, Sample, Value

BUSY_PCT: Final = 80.0  # "high" utilization for periodicity detection
LOW_PCT: Final = 20.0
MIN_ADVICE_S: Final = 600.0  # observed working time before any advice


@dataclass(frozen=True)
class Advice:
    """``id`` is ``smaller_instance`` or ``fractional_gpu``; ``values`` the figures."""

    id: str
    values: dict[str, Any]


@dataclass(frozen=True)
class CostSummary:
    host: str
    currency: str
    price_per_hour: float | None
    billing_start: float | None
    now_t: float | None
    billed_s: float
    busy_s: float
    idle_s: float
    unknown_s: float
    total: float | None
    busy: float | None
    idle: float | None
    unknown: float | None
    rate_per_h: float | None
    effective_ratio: float | None
    projection_24h: float | None
    budget: float | None
    budget_used_frac: float | None
    budget_exhausted_t: float | None
    advice: tuple[Advice, ...] = ()
    billing: BillingState = "running"
    storage_s: float = 0.0  # time stopped, paying storage (not part of billed_s)
    storage: float | None = None  # what that storage time cost
    # GPUs the idle_held rule held idle (gpu, since, until): the Cost tab's plot shades them.
    held: tuple[Period, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in ("advice", "held")}
        d["advice"] = [{"id": a.id, "values": a.values} for a in self.advice]
        return d


@dataclass
class _GpuStats:
    mem_peak: float = 0.0
    mem_total: float | None = None
    high_s: float = 0.0
    low_s: float = 0.0
    level: int = 0  # 1 high, -1 low, 0 unknown: for counting cycles with hysteresis
    transitions: int = 0


@dataclass
class _HostCost:
    cfg: HostConfig | None
    interval_s: float = 1.0
    mem_total: dict[int, float] = field(default_factory=dict)
    first_t: float | None = None
    last_t: float | None = None
    prev_mono: float | None = None
    billing: BillingState = "running"
    pre_s: float = 0.0  # billed before the first sample (from billing_start)
    billed_s: float = 0.0  # GPU-billed time measured between samples
    storage_s: float = 0.0
    prev_idle: bool | None = None
    prev_util: float | None = None
    prev_t: float | None = None  # the previous sample's time: where its interval starts
    prev_active: frozenset[int] = frozenset()  # its GPUs that were not idle
    prev_working: bool = False  # one of them did work (``held_idle.WORK_PCT``)
    held: HeldIdle = field(default_factory=HeldIdle)  # GPUs the idle_held rule holds idle
    busy_s: float = 0.0
    idle_s: float = 0.0
    util_s: float = 0.0  # ∫ mean utilization (0..1) dt
    gpus: dict[int, _GpuStats] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    iu: int | None = None
    im: int | None = None
    il: int | None = None


def gap_limit(interval_s: float) -> float:
    """Intervals longer than this between samples are unknown time, not busy or idle."""
    return max(5.0 * interval_s, 10.0)


# -- the one definition of idle, for one sample here and for arrays in the GUI's Cost tab ----


def gpu_idle(util: Value, mem: Value, mem_total: float | None, lost: Value = None) -> bool:
    """The idle GPU, as the ``idle_billed`` rule decides it
    (``cost.idle.gpu_is_idle``), and a lost GPU counts as idle: it does no work."""
    return bool(lost) or gpu_is_idle(util, mem, mem_total)


FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def idle_mask(
    util: FloatArray, mem: FloatArray, mem_total: float | None, lost: FloatArray | None = None
) -> BoolArray:
    """``gpu_idle`` over aligned arrays of one GPU (NaN = not reported): unreported
    utilization is not idle, unreported memory leaves the decision to utilization."""
    with np.errstate(invalid="ignore"):
        idle: BoolArray = np.asarray(util < 5.0)
        if mem_total:
            idle = idle & ~np.asarray(mem >= 0.1 * mem_total)
    if lost is not None:
        idle = idle | (np.nan_to_num(lost, nan=0.0) != 0)
    return idle


def accumulate(
    t: FloatArray, host_idle: BoolArray, price_per_hour: float, interval_s: float
) -> tuple[FloatArray, FloatArray]:
    """Accumulated cost and idle cost at each sample time of ``t`` (from 0 at ``t[0]``),
    counted as ``CostTracker`` counts them: the wall time between samples is billed; each
    interval takes the state of its first sample, and one longer than ``gap_limit`` is
    neither idle nor busy."""
    if len(t) == 0:
        return np.empty(0), np.empty(0)
    dt = np.clip(np.diff(t), 0.0, None)
    rate = price_per_hour / 3600.0
    known = dt <= gap_limit(interval_s)
    cost = np.concatenate(([0.0], np.cumsum(dt))) * rate
    idle_dt = np.where(host_idle[:-1] & known, dt, 0.0)
    idle_cost = np.concatenate(([0.0], np.cumsum(idle_dt))) * rate
    return cost, idle_cost


class CostTracker:
    """Accumulates cost per host from the samples fed (one thread, like the rule engine)."""

    def __init__(self, hosts: Sequence[HostConfig] = ()) -> None:
        self._hosts: dict[str, _HostCost] = {}
        for h in hosts:
            self.set_host(h)

    def set_host(self, host: HostConfig) -> None:
        hc = self._hosts.get(host.name)
        if hc is None:
            self._hosts[host.name] = _HostCost(cfg=host, interval_s=host.interval_s)
        else:
            hc.cfg = host

    def _get(self, host: str) -> _HostCost:
        hc = self._hosts.get(host)
        if hc is None:
            hc = self._hosts[host] = _HostCost(cfg=None)
        return hc

    def feed(self, host: str, msg: Message) -> None:
        if isinstance(msg, Sample):
            self._sample(self._get(host), msg)
        elif isinstance(msg, Hello):
            hc = self._get(host)
            hc.interval_s = msg.interval_s or hc.interval_s
            for g in msg.gpus:
                total = g.nominal.get("mem_total_bytes")
                if total:
                    hc.mem_total[g.index] = float(total)

    def set_billing(self, host: str, state: BillingState) -> None:
        """From the next interval on, ``host`` is billed as ``state``."""
        self._get(host).billing = state

    def billing(self, host: str) -> BillingState:
        return self._get(host).billing

    def hold_idle(self, host: str, gpu: int, since_t: float) -> None:
        """The ``idle_held`` rule found ``gpu`` doing no work with its memory held since
        ``since_t``: that time, and what follows until ``release_idle``, is idle."""
        hc = self._get(host)
        moved = min(hc.busy_s, hc.held.hold(gpu, since_t))
        hc.busy_s -= moved
        hc.idle_s += moved

    def release_idle(self, host: str, gpu: int) -> None:
        hc = self._get(host)
        hc.held.release(gpu, hc.last_t)

    def tick(self, host: str, t: float) -> None:
        """Advance the billed time to ``t`` without a sample (a disconnected host)."""
        hc = self._get(host)
        if hc.last_t is None or t > hc.last_t:
            hc.last_t = t
            hc.prev_idle = None  # what follows is unknown until the next sample

    def _sample(self, hc: _HostCost, s: Sample) -> None:
        if s.columns is not hc.columns:
            hc.columns = s.columns
            pos = {n: i + 1 for i, n in enumerate(s.columns)}
            hc.iu, hc.im = pos.get("util_gpu_pct"), pos.get("mem_used_bytes")
            hc.il = pos.get("lost")
        iu, im, il = hc.iu, hc.im, hc.il
        t = s.t
        start = hc.cfg.billing_start if hc.cfg is not None else None
        if hc.first_t is None:
            hc.first_t = t
            if start is not None and t > start:
                hc.pre_s = t - start  # billed before gpufleet saw it: unknown time
        prev_mono = hc.prev_mono
        # The interval since the previous sample, on the sampler's monotonic clock; one that
        # ends before the billing start is not billed, and one across a reboot (the clock
        # went back) is not known from the samples.
        # (Rounded to the wire's microseconds, so that sums of whole seconds stay whole.)
        dt = round(s.mono - prev_mono, 6) if prev_mono is not None and s.mono > prev_mono else 0.0
        if start is not None and t <= start:
            dt = 0.0
        if dt > 0:
            if hc.billing == "running":
                hc.billed_s += dt
                if hc.prev_idle is not None and dt <= gap_limit(hc.interval_s):
                    if hc.prev_idle or hc.held.busy_interval(
                        hc.prev_t if hc.prev_t is not None else t,
                        dt,
                        hc.prev_active,
                        hc.prev_working,
                    ):
                        hc.idle_s += dt
                    else:
                        hc.busy_s += dt
                    hc.util_s += (hc.prev_util or 0.0) * dt
                    self._periodicity(hc, dt)
            elif hc.billing == "storage":
                hc.storage_s += dt
        hc.prev_mono = s.mono
        hc.last_t = t  # the latest sample's clock (after a jump back, the corrected one)
        # This sample's state holds until the next one.
        all_idle = True
        active: set[int] = set()
        working = False
        util_sum, n_util = 0.0, 0
        for row in s.rows:
            gpu = row[0]
            if gpu is None:
                continue
            util: Value = row[iu] if iu is not None else None
            mem: Value = row[im] if im is not None else None
            total = hc.mem_total.get(int(gpu))
            if il is not None and row[il]:
                continue  # a lost GPU does no work: idle for the host's sake, no stats
            if util is not None:
                util_sum += util
                n_util += 1
            if not gpu_idle(util, mem, total):
                all_idle = False
                active.add(int(gpu))
                working = working or util is None or util >= WORK_PCT
            gs = hc.gpus.get(int(gpu))
            if gs is None:
                gs = hc.gpus[int(gpu)] = _GpuStats(mem_total=total)
            if mem is not None and mem > gs.mem_peak:
                gs.mem_peak = float(mem)
            if util is not None:
                level = 1 if util >= BUSY_PCT else -1 if util <= LOW_PCT else gs.level
                if gs.level and level != gs.level:
                    gs.transitions += 1
                gs.level = level
        hc.prev_idle = all_idle if s.rows else None
        hc.prev_t, hc.prev_active, hc.prev_working = t, frozenset(active), working
        hc.prev_util = (util_sum / n_util / 100.0) if n_util else 0.0

    def _periodicity(self, hc: _HostCost, dt: float) -> None:
        for gs in hc.gpus.values():
            if gs.level == 1:
                gs.high_s += dt
            elif gs.level == -1:
                gs.low_s += dt

    # -- results --

    def budget_state(self, host: str) -> tuple[float | None, float | None]:
        """(fraction of the budget used, amount used), or (None, None) without a budget."""
        hc = self._hosts.get(host)
        if hc is None or hc.cfg is None or not hc.cfg.budget or hc.cfg.price_per_hour is None:
            return None, None
        used = self._billed_s(hc) / 3600.0 * hc.cfg.price_per_hour
        used += hc.storage_s / 3600.0 * (hc.cfg.storage_per_hour or 0.0)
        return used / hc.cfg.budget, used

    def _billed_s(self, hc: _HostCost) -> float:
        return hc.pre_s + hc.billed_s

    def hosts(self) -> list[str]:
        return list(self._hosts)

    def summary(self, host: str) -> CostSummary:
        hc = self._get(host)
        cfg = hc.cfg
        price = cfg.price_per_hour if cfg is not None else None
        billed = self._billed_s(hc)
        unknown = max(0.0, billed - hc.busy_s - hc.idle_s)

        def money(seconds: float) -> float | None:
            return None if price is None else seconds / 3600.0 * price

        store_price = cfg.storage_per_hour if cfg is not None else None
        storage = (
            hc.storage_s / 3600.0 * store_price
            if store_price is not None
            else (0.0 if price is not None else None)
        )
        total = money(billed)
        if total is not None and storage is not None:
            total += storage
        # What it keeps costing per hour in its billing state.
        rate = {"running": price, "storage": store_price or 0.0, "ended": 0.0}[hc.billing]
        budget = cfg.budget if cfg is not None else None
        frac = total / budget if total is not None and budget else None
        exhausted = None
        if budget and rate and total is not None and hc.last_t is not None:
            exhausted = hc.last_t + (budget - total) / rate * 3600.0
        start = (
            cfg.billing_start if cfg is not None and cfg.billing_start is not None else hc.first_t
        )
        return CostSummary(
            host=host,
            currency=cfg.currency if cfg is not None else "USD",
            price_per_hour=price,
            billing_start=start,
            now_t=hc.last_t,
            billed_s=billed,
            busy_s=hc.busy_s,
            idle_s=hc.idle_s,
            unknown_s=unknown,
            total=total,
            busy=money(hc.busy_s),
            idle=money(hc.idle_s),
            unknown=money(unknown),
            rate_per_h=rate if price is not None else None,
            effective_ratio=hc.util_s / billed if billed > 0 else None,
            projection_24h=None if total is None or rate is None else total + 24.0 * rate,
            budget=budget,
            budget_used_frac=frac,
            budget_exhausted_t=exhausted,
            advice=tuple(self._advice(hc)),
            billing=hc.billing,
            storage_s=hc.storage_s,
            storage=storage if price is not None else None,
            held=hc.held.periods(),
        )

    def _advice(self, hc: _HostCost) -> list[Advice]:
        """Right-sizing advice, only after ``MIN_ADVICE_S`` of work was observed."""
        if hc.busy_s < MIN_ADVICE_S or not hc.gpus:
            return []
        fracs = []
        for gpu, gs in hc.gpus.items():
            total = gs.mem_total or hc.mem_total.get(gpu)
            if total:
                fracs.append(gs.mem_peak / total)
        if not fracs:
            return []
        peak = max(fracs)
        observed = hc.busy_s + hc.idle_s
        periodic = [
            gs
            for gs in hc.gpus.values()
            # Several busy/quiet cycles, each side a real share of the time: a duty cycle.
            if gs.transitions >= 6 and gs.high_s >= 0.15 * observed and gs.low_s >= 0.15 * observed
        ]
        values = {"mem_peak_frac": round(peak, 4), "gpus": len(hc.gpus)}
        if peak < 0.60 and periodic:
            busy_frac = sum(gs.high_s for gs in periodic) / (len(periodic) * observed)
            cycles = min(gs.transitions for gs in periodic) // 2
            return [
                Advice(
                    "fractional_gpu", {**values, "busy_frac": round(busy_frac, 3), "cycles": cycles}
                )
            ]
        if peak < 0.50:
            return [Advice("smaller_instance", values)]
        return []
