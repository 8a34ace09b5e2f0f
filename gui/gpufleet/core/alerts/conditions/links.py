"""Conditions on the GPU's links: PCIe down-trained or replaying, NVLink down or slow
against its siblings."""

from __future__ import annotations

import statistics

from gpufleet.core.alerts.conditions.base import (
    CLEAR,
    GPU,
    HOLD,
    GpuView,
    HostState,
    Params,
    condition,
    is_busy,
)
from gpufleet.core.model.evidence import (
    NvlinkDownEvidence,
    NvlinkSlowEvidence,
    PcieDowntrainedEvidence,
    PcieReplaysEvidence,
)

# --- PCIe and NVLink -----------------------------------------------------------------------


@condition("pcie_downtrained", GPU, ("sample",), {"busy_util_pct": 50.0, "pstate_max": 2})
def pcie_downtrained(
    h: HostState, g: GpuView, t: float, p: Params
) -> PcieDowntrainedEvidence | int:
    """Link below its max while busy. Idle GPUs drop to Gen1 on purpose (P8), so idle
    moments neither fire nor clear."""
    gen, width = g.v("pcie_gen"), g.v("pcie_width")
    max_gen, max_width = g.nom("pcie_max_gen"), g.nom("pcie_max_width")
    busy, pstate = is_busy(g, p), g.v("pstate")
    if gen is None or width is None or not max_gen or not max_width or not busy:
        return HOLD
    if pstate is not None and pstate > int(p["pstate_max"]):
        return HOLD
    if gen < max_gen or width < max_width:
        return {
            "pcie_gen": gen,
            "pcie_width": width,
            "pcie_max_gen": max_gen,
            "pcie_max_width": max_width,
            "util_gpu_pct": g.v("util_gpu_pct"),
        }
    return CLEAR


@condition("pcie_replays", GPU, ("sample",), {"min_replays": 100.0, "window_s": 600.0})
def pcie_replays(h: HostState, g: GpuView, t: float, p: Params) -> PcieReplaysEvidence | int:
    """The PCIe replay counter rising: link-level retransmissions (signal integrity, a bad
    riser or slot). A healthy link replays rarely, if ever; judged on the rise over
    ``window_s``, not on the count since boot."""
    now = g.v("pcie_replays")
    hist = h.pcie_replays.get(g.gpu)
    if now is None or not hist:
        return HOLD
    window = float(p["window_s"])
    base = hist[0]
    for pt in hist:
        if pt[0] <= t - window:
            base = pt
        else:
            break
    rise = float(now) - base[1]
    if rise >= float(p["min_replays"]):
        return {
            "pcie_replays": now,
            "replays_rise": rise,
            "from_t": base[0],
            "window_s": window,
            "pcie_gen": g.v("pcie_gen"),
            "pcie_width": g.v("pcie_width"),
        }
    if rise < 1:
        return CLEAR
    return HOLD


@condition("nvlink_down", GPU, ("sample",), {})
def nvlink_down(h: HostState, g: GpuView, t: float, p: Params) -> NvlinkDownEvidence | int:
    links, up = g.nom("nvlink_links"), g.v("nvlink_up")
    if not links or up is None:
        return HOLD
    if up < links:
        return {"nvlink_up": up, "nvlink_links": links}
    return CLEAR


@condition(
    "nvlink_slow",
    GPU,
    ("sample",),
    {
        "min_traffic_bps": 1e9,
        "below_frac": 0.5,
        "clear_frac": 0.75,
        "lane_below_frac": 0.1,
        "errors_min": 100.0,
        "errors_window_s": 600.0,
    },
)
def nvlink_slow(h: HostState, g: GpuView, t: float, p: Params) -> NvlinkSlowEvidence | int:
    """NVLink judged against what the job asks, never against nominal alone: an all-reduce
    that carries 35 % of nominal on every GPU is a normal job. It fires when this GPU
    carries under half what the host's other NVLink GPUs carry (smoothed over a minute),
    when one of its links that is up carries next to nothing while its other links are
    busy (a dead lane), or when its NVLink error counters (CRC, replay, recovery) rise."""
    links = g.nom("nvlink_links")
    if not links:
        return HOLD
    judged = False
    found: NvlinkSlowEvidence | None = None
    mine = h.nvlink_ema.get(g.gpu)
    peers = [v for k, v in h.nvlink_ema.items() if k != g.gpu]
    min_traffic = float(p["min_traffic_bps"])
    if mine is not None and peers:
        ref = statistics.median(peers)
        if ref >= min_traffic:
            if mine < float(p["below_frac"]) * ref:
                found = {
                    "variant": "peers",
                    "nvlink_bps": round(mine),
                    "peers_bps": round(ref),
                    "peers": len(peers),
                    "peer_frac": round(mine / ref, 3),
                }
            elif mine >= float(p["clear_frac"]) * ref:
                judged = True
    lr = h.links.get(g.gpu)
    lanes_ok = False
    if found is None and lr is not None:
        per: list[tuple[int, float]] = []
        for i, up in enumerate(lr.up):
            tx = lr.tx_bps[i] if i < len(lr.tx_bps) else None
            rx = lr.rx_bps[i] if i < len(lr.rx_bps) else None
            if up and (tx is not None or rx is not None):
                per.append((i, max(float(tx or 0.0), float(rx or 0.0))))
        total = sum(v for _, v in per)
        if len(per) >= 2 and total >= min_traffic:
            med = statistics.median(v for _, v in per)
            dead = [i for i, v in per if v < float(p["lane_below_frac"]) * med]
            if dead:
                found = {
                    "variant": "lane",
                    "links_slow": dead,
                    "nvlink_bps": round(total),
                    "link_median_bps": round(med),
                    "nvlink_up": len(per),
                }
            else:
                judged = True
                lanes_ok = True
    errs = h.nvlink_errors.get(g.gpu)
    if errs:
        window = float(p["errors_window_s"])
        while errs and errs[0][0] < t - window:
            errs.popleft()
    # Each entry is (time, new errors) from one of the sampler's nvlink events.
    n_err = float(sum(n for _, n in errs)) if errs else 0.0
    if found is None and n_err >= float(p["errors_min"]):
        found = {"variant": "errors", "errors": int(n_err), "window_s": p["errors_window_s"]}
    if found is not None:
        found.setdefault("nvlink_errors", int(n_err))
        found["nvlink_links"] = links
        return found
    if lr is not None and not lanes_ok:
        return HOLD  # the lanes cannot be judged now (little traffic): neither way
    return CLEAR if judged else HOLD
