"""The likely cause of a figure below par, read from what the card did during the run.

Why separate: the causes are the part of the judgment a user acts on (raise the power limit
or ask the provider, look at cooling, reseat or move the card, report a dead link), and
each one is a plain test of the run's telemetry, kept apart from the arithmetic of verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LABELS = {
    "matmul_bf16_tflops": "BF16 matmul (TFLOPS)",
    "matmul_fp16_tflops": "FP16 matmul (TFLOPS)",
    "matmul_tf32_tflops": "TF32 matmul (TFLOPS)",
    "hbm_gbps": "memory bandwidth (GB/s)",
    "h2d_gbps": "host-to-device copy (GB/s)",
    "d2h_gbps": "device-to-host copy (GB/s)",
    "p2p_gbps": "peer copy (GB/s)",
}
HELD_SHARE = 0.3  # a limit counts as the cause when it held the clock this share of the run


def metric_label(metric: str) -> str:
    return LABELS.get(metric, metric)


def _num(t: Mapping[str, Any], key: str) -> float | None:
    v = t.get(key)
    return float(v) if isinstance(v, int | float) else None


def _clock(t: Mapping[str, Any]) -> str:
    sm, top = _num(t, "sm_clock_mhz"), _num(t, "sm_clock_max_mhz")
    if sm is None:
        return "its clock was not read"
    return f"SM clock {sm:.0f} MHz" + (f" of {top:.0f} MHz max" if top else "")


def compute_cause(t: Mapping[str, Any]) -> str:
    """Why compute was slow: a lowered power limit, the power limit, heat, or unexplained."""
    limit, default = _num(t, "power_limit_w"), _num(t, "power_default_w")
    temp = _num(t, "temp_max_c")
    if (_num(t, "thermal_share") or 0.0) >= HELD_SHARE:
        hot = f" at {temp:.0f} °C" if temp is not None else ""
        return f"clock held down by heat{hot} ({_clock(t)}): check the cooling or ask the provider"
    if (_num(t, "power_share") or 0.0) >= HELD_SHARE:
        if limit is not None and default is not None and limit < default - 1.0:
            return (
                f"clock held by a lowered power limit: {limit:.0f} W of its {default:.0f} W "
                f"default ({_clock(t)}); ask the provider to restore it"
            )
        return f"clock held at the power limit ({_clock(t)})"
    return f"no power or heat limit held it ({_clock(t)}): a slower card or host than a good one"


def pcie_cause(t: Mapping[str, Any]) -> str:
    width, wmax = _num(t, "pcie_width"), _num(t, "pcie_max_width")
    gen, gmax = _num(t, "pcie_gen"), _num(t, "pcie_max_gen")
    if width is not None and wmax is not None and width < wmax:
        return (
            f"PCIe link trained at x{width:.0f} of x{wmax:.0f}: "
            "a riser, slot or bifurcation setting"
        )
    if gen is not None and gmax is not None and gen < gmax:
        return f"PCIe link at gen {gen:.0f} of {gmax:.0f}: the slot or its setting"
    return (
        "the PCIe link is at full width and generation: "
        "the host side (NUMA placement, a shared switch)"
    )


def peer_cause(t: Mapping[str, Any]) -> str:
    links, up = _num(t, "nvlink_links"), _num(t, "nvlink_up")
    if links and up is not None and up < links:
        return f"NVLink: {up:.0f} of {links:.0f} links up: a link is down, ask the provider"
    if not links:
        return "no NVLink: peer copies cross PCIe"
    return "every NVLink link up: the route between these GPUs (topology)"


def cause_of(metric: str, t: Mapping[str, Any]) -> str:
    if metric.startswith("matmul"):
        return compute_cause(t)
    if metric == "hbm_gbps":
        mem, top = _num(t, "mem_clock_mhz"), _num(t, "mem_clock_max_mhz")
        if mem is not None and top and mem < top * 0.95:
            return f"memory clock {mem:.0f} of {top:.0f} MHz"
        return "memory clock at its maximum: a slower memory stack than a good card's"
    if metric == "p2p_gbps":
        return peer_cause(t)
    return pcie_cause(t)
