"""Diagnosis: explain a slowdown or a crash from the data of a time window.

``diagnose(hello, samples, procs, events, t0, t1)`` looks at each GPU over the window and
returns findings (``gpufleet.core.model.findings.Finding``) with their evidence and
window, worded by ``catalogue.finding_sentence``. It answers the two questions of the rental guide:

- "99 % utilization but 30 % slower": clocks vs nominal with the reason (thermal, power cap,
  a limit below the default, none reported), temperature, another process sharing the GPU,
  PCIe downtraining, data starvation (utilization saw-tooth with little PCIe traffic);
- "it crashed at 2 a.m.: hardware or my code?": when the work stopped, and what came before
  it (memory temperature rising, ECC errors, Xids, a GPU lost).

When nothing in the hardware data explains it, it says so (``diag_none``): then the code, the
data pipeline or the checkpointing are to blame. Verdicts: ``fail`` for hardware faults,
``warn`` for what slows the job, ``info`` for context (the crash itself, a normal power cap).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import numpy as np
from gpufleet_sampler import protocol

from gpufleet.core.alerts import throttle
from gpufleet.core.alerts.conditions import REASON_EXPLAINING_MASK, XID_CRITICAL
from gpufleet.core.alerts.throttle import ThrottleShare, sustained_level, throttled_share
from gpufleet.core.model.findings import FAIL, INFO, PASS, WARN, Finding, Verdict
from gpufleet.core.verdicts import utilization
from gpufleet.core.wire.messages import Event, Hello, Procs, Sample

BUSY_PCT: Final = 50.0
SHARE_MIN: Final = 0.10  # a cause must cover at least this share of the busy time
CLOCK_LOW_FRAC: Final = 0.85
STOP_QUIET_S: Final = 60.0  # quiet this long after work = the work stopped
# A temperature counts when it held this long: one sample's sensor spike is no finding.
TEMP_HOLD_S: Final = 60.0
MEM_TEMP_HOLD_S: Final = 30.0
MEM_TEMP_DEFAULT_LIMIT_C: Final = 100.0  # the guide's limit where the GPU reports none
HIDDEN_MIN_BYTES: Final = float(2 << 30)
HIDDEN_MIN_FRAC: Final = 0.03
PROCS_MATCH_S: Final = 5.0
OOM_FRAC: Final = 0.97  # used memory this close to the usable total = at the ceiling
LANE_BPS: Final = {1: 0.25e9, 2: 0.5e9, 3: 0.985e9, 4: 1.97e9, 5: 3.94e9, 6: 7.56e9}

_METRICS: Final = (
    "util_gpu_pct",
    "sm_clock_mhz",
    "clock_reasons",
    "temp_gpu_c",
    "temp_mem_c",
    "power_limit_w",
    "power_w",
    "viol_power_pct",
    "viol_thermal_pct",
    "pcie_gen",
    "pcie_width",
    "pcie_tx_bps",
    "pcie_rx_bps",
    "pstate",
    "mem_used_bytes",
    "nvlink_up",
    "ecc_dbe_vol",
    "ecc_sbe_vol",
    "lost",
)


def _series(samples: list[Sample], gpu: int) -> dict[str, np.ndarray]:
    """Per-metric float arrays of one GPU (NaN where missing), plus "t"."""
    n = len(samples)
    out = {m: np.full(n, np.nan) for m in _METRICS}
    ts = np.empty(n)
    for k, s in enumerate(samples):
        ts[k] = s.t
        r = s.row(gpu)
        if r is None:
            continue
        for m in _METRICS:
            try:
                pos = s.columns.index(m) + 1
            except ValueError:
                continue
            v = r[pos] if pos < len(r) else None
            if v is not None:
                out[m][k] = float(v)
    out["t"] = ts
    return out


def _bits(x: np.ndarray, mask: int) -> np.ndarray:
    # A bitmask is a non-negative int64; anything else (NaN, a hostile 1e19) has no bits.
    ok = (x >= 0) & (x < 2.0**63)
    res = np.zeros(len(x), dtype=bool)
    res[ok] = (x[ok].astype(np.int64) & mask) != 0
    return res


def _share(mask: np.ndarray, of: np.ndarray) -> float:
    n = int(of.sum())
    return float((mask & of).sum()) / n if n else 0.0


def _nanmean(x: np.ndarray) -> float | None:
    x = x[~np.isnan(x)]
    return float(x.mean()) if len(x) else None


def _nanmin(x: np.ndarray) -> float | None:
    x = x[~np.isnan(x)]
    return float(x.min()) if len(x) else None


def limit_changes(t: np.ndarray, limit: np.ndarray) -> list[dict[str, float]]:
    """Each change of a setting over the window: when, from what, to what (NaN skipped)."""
    ok = ~np.isnan(limit)
    tt, ll = t[ok], limit[ok]
    return [
        {"at_t": float(tt[k]), "from_w": float(ll[k - 1]), "to_w": float(ll[k])}
        for k in range(1, len(ll))
        if abs(ll[k] - ll[k - 1]) >= 1.0
    ]


def _nanmax(x: np.ndarray) -> float | None:
    x = x[~np.isnan(x)]
    return float(x.max()) if len(x) else None


def _cycles(util: np.ndarray) -> int:
    """Busy/quiet transitions with hysteresis (>= 80 % high, <= 20 % low)."""
    level, n = 0, 0
    for u in util:
        if np.isnan(u):
            continue
        new = 1 if u >= 80 else -1 if u <= 20 else level
        if level and new != level:
            n += 1
        level = new
    return n


def _slowdown(gpu: int, s: dict[str, np.ndarray], nom: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    t = s["t"]
    util, clock, reasons = s["util_gpu_pct"], s["sm_clock_mhz"], s["clock_reasons"]
    busy = ~np.isnan(util) & (util >= BUSY_PCT)
    if not busy.any():
        return out
    t0, t1 = float(t[busy][0]), float(t[busy][-1])
    cmax = nom.get("sm_clock_max_mhz")
    slow = nom.get("temp_slowdown_c")
    temp_max = _nanmax(s["temp_gpu_c"][busy])

    def clock_vals(sel: np.ndarray) -> dict[str, Any]:
        c = _nanmean(clock[sel])
        return {
            "sm_clock_mhz": None if c is None else round(c),
            "sm_clock_max_mhz": cmax,
            "clock_frac": None if c is None or not cmax else c / float(cmax),
        }

    def share(mask: int, r: np.ndarray = reasons) -> ThrottleShare:
        return throttled_share(
            t,
            r,
            util=util,
            viol_power_pct=s["viol_power_pct"],
            viol_thermal_pct=s["viol_thermal_pct"],
            mask=mask,
        )

    # The one throttled share (the evidence bundle and the Clocks tab compute the same).
    total = share(throttle.THROTTLE_MASK)
    if total.held_s > 0:
        vals = {"share": total.share, **total.to_json()}
        out.append(Finding("diag_throttled", INFO, gpu, vals, t0, t1))

    thermal = _bits(reasons, protocol.REASON_THERMAL_MASK)
    th = share(throttle.THERMAL_MASK)
    if th.share >= SHARE_MIN:
        vals = {"share": th.share, "temp_c": temp_max, "temp_slowdown_c": slow}
        vals.update(clock_vals(thermal & busy))
        out.append(Finding("diag_thermal", WARN, gpu, vals, t0, t1))

    # HW slowdown asserted together with a thermal reason is the temperature's doing.
    hw_reasons = reasons.copy()
    coupled = _bits(reasons, protocol.REASON_THERMAL_MASK)
    hw_reasons[coupled] = np.nan_to_num(hw_reasons[coupled]).astype(np.int64) & ~0x8
    hw = throttled_share(t, hw_reasons, util=util, mask=throttle.HW_SLOWDOWN_MASK)
    if hw.share >= SHARE_MIN:
        brake = _bits(reasons, throttle.REASON_HW_POWER_BRAKE)
        vals = {"share": hw.share, "brake": bool((brake & busy).any()), **hw.to_json()}
        vals.update(clock_vals(_bits(hw_reasons, throttle.HW_SLOWDOWN_MASK) & busy))
        out.append(Finding("diag_hw_slowdown", FAIL, gpu, vals, t0, t1))

    # A limit that was set, never an average of two: the lowest one in force, and its changes.
    changes = limit_changes(t, s["power_limit_w"])
    limit = _nanmin(s["power_limit_w"])
    if limit is None:
        limit = nom.get("power_enforced_w")
    default = nom.get("power_default_w")
    power_bit = _bits(reasons, protocol.REASON_POWER_MASK)
    cap_share = share(throttle.REASON_POWER_CAP).share
    if limit is not None and default and limit < 0.95 * float(default):
        draw = _nanmean(s["power_w"][busy])
        binding = cap_share >= 0.05 or (draw is not None and draw >= 0.9 * limit)
        vals = {
            "power_limit_w": limit,
            "power_default_w": default,
            "power_w": draw,
            "binding": binding,
            "variant": "changed" if changes else "" if binding else "not_binding",
            "changes": changes,
        }
        vals.update(clock_vals(busy))
        out.append(Finding("diag_power_limit", WARN if binding else INFO, gpu, vals, t0, t1))
    elif cap_share >= 0.3:
        vals = {"share": cap_share}
        vals.update(clock_vals(power_bit & busy))
        out.append(Finding("diag_power_cap", INFO, gpu, vals, t0, t1))

    if cmax:
        low_clock = ~np.isnan(clock) & (clock < CLOCK_LOW_FRAC * float(cmax))
        setting = _bits(reasons, throttle.SETTING_MASK) & ~_bits(reasons, throttle.THROTTLE_MASK)
        sel = low_clock & setting
        frac = _share(sel, busy)
        if frac >= 0.2:
            labels = sorted(
                {
                    lab
                    for x in reasons[sel & busy]
                    for lab in protocol.reason_labels(int(x) & throttle.SETTING_MASK)
                }
            )
            vals = {"share": frac, "reasons": labels}
            vals.update(clock_vals(sel & busy))
            out.append(Finding("diag_clock_setting", WARN, gpu, vals, t0, t1))
        explained = _bits(reasons, REASON_EXPLAINING_MASK)
        low = low_clock & ~explained
        frac = _share(low, busy)
        if frac >= 0.2:
            vals = {"share": frac}
            vals.update(clock_vals(low & busy))
            out.append(Finding("diag_clocks_unexplained", WARN, gpu, vals, t0, t1))

    # Sustained, not peak: a one-sample sensor spike is no finding.
    temp_held = sustained_level(t[busy], s["temp_gpu_c"][busy], TEMP_HOLD_S)
    if (
        temp_held is not None
        and slow
        and temp_held >= float(slow) - 5
        and not any(f.id == "diag_thermal" for f in out)
    ):
        vals = {
            "temp_c": temp_held,
            "temp_slowdown_c": slow,
            "margin_c": float(slow) - temp_held,
            "hold_s": TEMP_HOLD_S,
        }
        out.append(Finding("diag_temperature", WARN, gpu, vals, t0, t1))

    gen, width = s["pcie_gen"], s["pcie_width"]
    mgen, mwidth = nom.get("pcie_max_gen"), nom.get("pcie_max_width")
    pstate = s["pstate"]
    if mgen and mwidth:
        active = busy & (np.isnan(pstate) | (pstate <= 2))
        down = ~np.isnan(gen) & ((gen < float(mgen)) | (width < float(mwidth)))
        if _share(down, active) >= 0.2:
            sel = down & active
            vals = {
                "pcie_gen": _nanmean(gen[sel]),
                "pcie_width": _nanmean(width[sel]),
                "pcie_max_gen": mgen,
                "pcie_max_width": mwidth,
                "share": _share(down, active),
            }
            out.append(Finding("diag_pcie", WARN, gpu, vals, t0, t1))

    # Data starvation: work comes in bursts and PCIe stays far below what the link carries.
    cycles = _cycles(util)
    high = ~np.isnan(util) & (util >= 80)
    lowu = ~np.isnan(util) & (util <= 20)
    n = max(1, int((~np.isnan(util)).sum()))
    pcie = s["pcie_rx_bps"] + np.nan_to_num(s["pcie_tx_bps"])
    pcie_mean = _nanmean(pcie)
    link = LANE_BPS.get(int(mgen or 4), 1.97e9) * float(mwidth or 16)
    if (
        cycles >= 6
        and high.sum() / n >= 0.15
        and lowu.sum() / n >= 0.15
        and pcie_mean is not None
        and pcie_mean < 0.25 * link
    ):
        vals = {"cycles": cycles // 2, "busy_share": float(high.sum()) / n, "pcie_bps": pcie_mean}
        out.append(Finding("diag_starvation", WARN, gpu, vals, float(t[0]), float(t[-1])))

    links, up = nom.get("nvlink_links"), _nanmax(-s["nvlink_up"])
    if links and up is not None and -up < float(links):
        vals = {"nvlink_up": -up, "nvlink_links": links}
        out.append(Finding("diag_nvlink", WARN, gpu, vals, t0, t1))
    return out


def _shared(gpu: int, procs: list[Procs]) -> list[Finding]:
    """Another process on the GPU besides the main job (the one holding the most memory)."""
    seen: dict[tuple[int, int | None], Any] = {}
    mem: dict[tuple[int, int | None], int] = {}
    concurrent = False
    for snap in procs:
        # A process that only holds the device (a dataloader worker with its parent's fds)
        # is not another job on this GPU; NVML's entry of a process outside the container is.
        mine = [p for p in snap.procs if p.gpu == gpu and p.mapping != protocol.MAP_NO_MEMORY]
        if len(mine) > 1:
            concurrent = True
        for p in mine:
            key = (p.pid, p.start_ticks)
            seen[key] = p
            mem[key] = max(mem.get(key, 0), p.mem_bytes or 0)
    if not concurrent or len(seen) < 2:
        return []
    main = max(mem, key=lambda k: mem[k])
    others = [seen[k] for k in seen if k != main]
    vals = {
        "processes": [
            {"pid": p.pid, "name": p.name, "user": p.user, "cmd": p.cmd, "mem_bytes": p.mem_bytes}
            for p in others
        ],
        "mem_bytes": max(mem[k] for k in seen if k != main),
    }
    t0 = procs[0].t if procs else None
    t1 = procs[-1].t if procs else None
    return [Finding("diag_shared", WARN, gpu, vals, t0, t1)]


def _hidden(
    gpu: int, s: dict[str, np.ndarray], procs: list[Procs], nom: Mapping[str, Any]
) -> list[Finding]:
    """Memory in use that no listed process holds, in most process snapshots of the window
    (each compared with the sample closest to it in time)."""
    total = nom.get("mem_total_bytes")
    t, used = s["t"], s["mem_used_bytes"]
    if not total or not len(t) or not procs:
        return []
    threshold = max(HIDDEN_MIN_BYTES, HIDDEN_MIN_FRAC * float(total))
    hidden: list[float] = []
    judged = 0
    for snap in procs:
        k = int(np.argmin(np.abs(t - snap.t)))
        if abs(t[k] - snap.t) > PROCS_MATCH_S or np.isnan(used[k]):
            continue
        mine = [p for p in snap.procs if p.gpu == gpu]
        if any(p.mem_bytes is None for p in mine):
            continue
        judged += 1
        h = float(used[k]) - float(sum(int(p.mem_bytes or 0) for p in mine))
        if h >= threshold:
            hidden.append(h)
    if judged < 3 or len(hidden) < 0.5 * judged:
        return []
    vals = {
        "mem_hidden_bytes": float(np.median(hidden)),
        "mem_total_bytes": float(total),
        "hidden_frac": float(np.median(hidden)) / float(total),
        "share": len(hidden) / judged,
    }
    return [Finding("diag_hidden_memory", WARN, gpu, vals, procs[0].t, procs[-1].t)]


def _stop_time(samples: list[Sample], gpus: list[int]) -> tuple[float, int] | None:
    """When the work stopped: the last busy sample followed by STOP_QUIET_S of quiet on every
    GPU (lost GPUs count as quiet). Returns (time, index of the first quiet sample)."""
    last_busy: int | None = None
    for k, s in enumerate(samples):
        any_busy = False
        for g in gpus:
            u = s.value(g, "util_gpu_pct")
            if u is not None and u >= BUSY_PCT and not s.value(g, "lost"):
                any_busy = True
                break
        if any_busy:
            last_busy = k
    if last_busy is None or last_busy + 1 >= len(samples):
        return None
    if samples[-1].t - samples[last_busy + 1].t < STOP_QUIET_S:
        return None
    return samples[last_busy + 1].t, last_busy + 1


def diagnose(
    hello: Hello | None,
    samples: Iterable[Sample],
    procs: Iterable[Procs],
    events: Iterable[Event],
    t0: float,
    t1: float,
) -> list[Finding]:
    """Findings explaining a slowdown or a crash within [t0, t1]."""
    ss = [s for s in samples if t0 <= s.t <= t1]
    ss.sort(key=lambda s: s.t)
    ps = sorted((p for p in procs if t0 <= p.t <= t1), key=lambda p: p.t)
    es = sorted((e for e in events if t0 <= e.t <= t1), key=lambda e: e.t)
    if not ss:
        return [Finding("diag_no_data", INFO, None, {}, t0, t1)]
    gpus = (
        [g.index for g in hello.gpus]
        if hello is not None
        else sorted({i for s in ss for i in s.gpu_indices()})
    )
    out: list[Finding] = []
    series: dict[int, dict[str, np.ndarray]] = {}
    mem_limits: dict[int, float | None] = {}
    usable: dict[int, float | None] = {}
    for g in gpus:
        nom: Mapping[str, Any] = {}
        if hello is not None:
            info = hello.gpu(g)
            nom = info.nominal if info is not None else {}
        lim = nom.get("temp_mem_max_c")
        mem_limits[g] = float(lim) if isinstance(lim, (int, float)) and lim else None
        total = nom.get("mem_total_bytes")
        usable[g] = float(total) - float(nom.get("mem_reserved_bytes") or 0) if total else None
        series[g] = _series(ss, g)
        out.extend(_slowdown(g, series[g], nom))
        out.extend(utilization.findings(g, ss))
        out.extend(_shared(g, ps))
        out.extend(_hidden(g, series[g], ps, nom))
    out.extend(_crash(ss, ps, es, gpus, series, mem_limits, usable))
    if not any(f.verdict in (WARN, FAIL) for f in out):
        out.append(Finding("diag_none", PASS, None, {}, t0, t1))
    return out


def _exhausted(
    ss: list[Sample],
    gpus: list[int],
    series: dict[int, dict[str, np.ndarray]],
    t_stop: float,
    k: int,
    usable: Mapping[int, float | None],
) -> list[Finding]:
    """The work stopped at the memory ceiling: used memory within OOM_FRAC of what a job
    can fill just before the stop (the usable total: the card less the driver's reserve)."""
    out: list[Finding] = []
    for g in gpus:
        full = usable.get(g)
        if not full:
            continue
        used = series[g]["mem_used_bytes"][max(0, k - 30) : k]
        peak = _nanmax(used)
        if peak is None or peak < OOM_FRAC * full:
            continue
        first = series[g]["mem_used_bytes"][~np.isnan(series[g]["mem_used_bytes"])][0]
        vals = {
            "at_t": t_stop,
            "mem_peak_bytes": peak,
            "mem_usable_bytes": full,
            "mem_start_bytes": float(first),
        }
        out.append(Finding("diag_oom", WARN, g, vals, float(ss[0].t), t_stop))
    return out


def _crash(
    ss: list[Sample],
    ps: list[Procs],
    es: list[Event],
    gpus: list[int],
    series: dict[int, dict[str, np.ndarray]],
    mem_limits: Mapping[int, float | None],
    usable: Mapping[int, float | None],
) -> list[Finding]:
    out: list[Finding] = []
    stop = _stop_time(ss, gpus)
    for e in es:
        if e.type == "xid" and e.code is not None:
            verdict: Verdict = FAIL if e.code in XID_CRITICAL else WARN
            out.append(Finding("diag_xid", verdict, e.gpu, {"xid": e.code, "at_t": e.t}, e.t, e.t))
        elif e.type == "gpu_lost":
            out.append(Finding("diag_lost", FAIL, e.gpu, {"at_t": e.t}, e.t, e.t))
    for g in gpus:
        s = series[g]
        t = s["t"]
        for metric, kind, verdict in (
            ("ecc_dbe_vol", "uncorrected", FAIL),
            ("ecc_sbe_vol", "corrected", WARN),
        ):
            x = s[metric]
            ok = ~np.isnan(x)
            if ok.sum() < 2:
                continue
            d = np.diff(x[ok])
            if (d > 0).any():
                first = int(np.argmax(d > 0)) + 1
                at = float(t[ok][first])
                vals = {"kind": kind, "at_t": at, "count": f"{x[ok][0]:.0f} → {x[ok][-1]:.0f}"}
                out.append(Finding("diag_ecc", verdict, g, vals, float(t[0]), at))
        if not any(f.id == "diag_lost" and f.gpu == g for f in out):
            lost = s["lost"]
            if (lost[~np.isnan(lost)] > 0).any():
                at = float(t[np.nan_to_num(lost) > 0][0])
                out.append(Finding("diag_lost", FAIL, g, {"at_t": at}, at, at))
    if stop is None:
        return out
    t_stop, k = stop
    before = slice(max(0, k - 30), k)
    after = slice(k, min(len(ss), k + 30))
    util_b = np.nanmean([_nanmean(series[g]["util_gpu_pct"][before]) or 0 for g in gpus])
    util_a = np.nanmean([_nanmean(series[g]["util_gpu_pct"][after]) or 0 for g in gpus])
    mem_b = sum(_nanmean(series[g]["mem_used_bytes"][before]) or 0 for g in gpus)
    mem_a = sum(_nanmean(series[g]["mem_used_bytes"][after]) or 0 for g in gpus)
    pids_before = {p.pid for snap in ps if snap.t < t_stop for p in snap.procs}
    last_after = [snap for snap in ps if snap.t >= t_stop + 10]
    gone = (
        bool(pids_before)
        and bool(last_after)
        and not (pids_before & {p.pid for p in last_after[-1].procs})
    )
    vals = {
        "at_t": t_stop,
        "util_before": round(float(util_b)),
        "util_after": round(float(util_a)),
        "mem_before": mem_b,
        "mem_after": mem_a,
        "procs_gone": gone,
    }
    out.append(Finding("diag_crash", INFO, None, vals, float(ss[0].t), t_stop))
    out.extend(_exhausted(ss, gpus, series, t_stop, k, usable))
    # What came before it: memory temperature (the guide's first suspect), held for at
    # least MEM_TEMP_HOLD_S (a one-sample spike is a sensor glitch), against the memory's
    # own limit where the GPU reports one.
    for g in gpus:
        s = series[g]
        pre = s["t"] < t_stop
        tt, tm = s["t"][pre], s["temp_mem_c"][pre]
        ok = ~np.isnan(tm)
        if ok.sum() < 2:
            continue
        held = sustained_level(tt[ok], tm[ok], MEM_TEMP_HOLD_S)
        if held is None:
            continue
        limit = mem_limits.get(g) or MEM_TEMP_DEFAULT_LIMIT_C
        base = float(tm[ok][: max(1, int(ok.sum()) // 10)].mean())
        rise = held - base
        if held >= limit - 5 or (rise >= 10 and held > limit - 15):
            vals = {"temp_c": held, "rise_c": rise, "limit_c": limit}
            out.append(Finding("diag_mem_temp", WARN, g, vals, float(s["t"][0]), t_stop))
    return out
