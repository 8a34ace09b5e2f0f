"""The likely cause of a figure below par, read from what the card did during the run.

Why separate: the causes are the part of the judgment a user acts on (raise the power limit
or ask the provider, look at cooling, reseat or move the card, report a dead link), and
each one is a plain test of the run's telemetry, kept apart from the arithmetic of verdicts.
Each cause is a structured reason (an id and its values, ``core.text.bench_reasons``), worded
in English for the JSON and in the user's language for the GUI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.text.bench_reasons import Reason, reason

HELD_SHARE = 0.3  # a limit counts as the cause when it held the clock this share of the run


def _num(t: Mapping[str, Any], key: str) -> float | None:
    v = t.get(key)
    return float(v) if isinstance(v, int | float) else None


def _clock(t: Mapping[str, Any]) -> dict[str, float | None]:
    """The SM clock during the run, and its maximum (the sentence's {clock})."""
    sm, top = _num(t, "sm_clock_mhz"), _num(t, "sm_clock_max_mhz")
    return {"sm": sm, "top": top if sm is not None and top else None}


def compute_cause(t: Mapping[str, Any]) -> Reason:
    """Why compute was slow: a lowered power limit, the power limit, heat, or unexplained."""
    limit, default = _num(t, "power_limit_w"), _num(t, "power_default_w")
    temp = _num(t, "temp_max_c")
    if (_num(t, "thermal_share") or 0.0) >= HELD_SHARE:
        if temp is not None:
            return reason("heat_at", temp=temp, **_clock(t))
        return reason("heat", **_clock(t))
    if (_num(t, "power_share") or 0.0) >= HELD_SHARE:
        if limit is not None and default is not None and limit < default - 1.0:
            return reason("power_lowered", limit=limit, default=default, **_clock(t))
        return reason("power_limit", **_clock(t))
    return reason("compute_unexplained", **_clock(t))


def pcie_cause(t: Mapping[str, Any]) -> Reason:
    width, wmax = _num(t, "pcie_width"), _num(t, "pcie_max_width")
    gen, gmax = _num(t, "pcie_gen"), _num(t, "pcie_max_gen")
    if width is not None and wmax is not None and width < wmax:
        return reason("pcie_width", width=width, wmax=wmax)
    if gen is not None and gmax is not None and gen < gmax:
        return reason("pcie_gen", gen=gen, gmax=gmax)
    return reason("pcie_full")


def peer_cause(t: Mapping[str, Any]) -> Reason:
    links, up = _num(t, "nvlink_links"), _num(t, "nvlink_up")
    if links and up is not None and up < links:
        return reason("nvlink_down", up=up, links=links)
    if not links:
        return reason("no_nvlink")
    return reason("nvlink_up")


def cause_of(metric: str, t: Mapping[str, Any]) -> Reason:
    if metric.startswith("matmul"):
        return compute_cause(t)
    if metric == "hbm_gbps":
        mem, top = _num(t, "mem_clock_mhz"), _num(t, "mem_clock_max_mhz")
        if mem is not None and top and mem < top * 0.95:
            return reason("mem_clock", mem=mem, top=top)
        return reason("mem_full")
    if metric == "p2p_gbps":
        return peer_cause(t)
    return pcie_cause(t)
