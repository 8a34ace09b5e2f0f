"""A comparison as the documented JSON (docs/cli.md, "compare") and as lines of text."""

from __future__ import annotations

from typing import Any

from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.text import compare as words
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, duration, num, rate_h, translated
from gpufleet.core.verdicts.compare import Comparison, Side


def _side(s: Side) -> dict[str, Any]:
    return {
        "host": s.host,
        "from": format_utc(s.t0, "seconds"),
        "to": format_utc(s.t1, "seconds"),
        "work_s": round(s.work_s, 1),
        "gpu": s.gpu_name,
    }


def says_of(c: Comparison) -> list[str]:
    """Each cause's sentence, in the causes' order."""
    return [words.cause_says(x.cause, x.gpus, x.a, x.b, x.waited) for x in c.causes]


def as_json(c: Comparison) -> dict[str, Any]:
    """The interface: verdict, slower_by_pct and causes (largest share first), with the
    reason of an unclear verdict, the range of the estimate and what was compared."""
    says = says_of(c)
    return {
        "verdict": c.verdict,
        "slower_by_pct": c.slower_by_pct,
        "slower_by_range_pct": list(c.slower_range) if c.slower_range else None,
        "reason": c.reason,
        "says": words.verdict_says(c.verdict, c.reason, c.a.gpu_name, c.b.gpu_name),
        "causes": [
            {
                "cause": x.cause,
                "gpus": list(x.gpus),
                "share_pct": x.share_pct,
                "a": x.a,
                "b": x.b,
                "says": s,
                "waited": list(x.waited),
            }
            for x, s in zip(c.causes, says, strict=True)
        ],
        "gpus": list(c.gpus),
        "not_compared": list(c.not_compared),
        "a": _side(c.a),
        "b": _side(c.b),
        "hardware": {k: {"a": v[0], "b": v[1]} for k, v in c.same.items()},
    }


_C = words.CTX
SAME_ROWS = (
    ("sm_clock_mhz", QT_TRANSLATE_NOOP("Compare", "SM clock"), "MHz"),
    ("power_w", QT_TRANSLATE_NOOP("Compare", "power"), "W"),
    ("power_limit_w", QT_TRANSLATE_NOOP("Compare", "power limit"), "W"),
    ("temp_gpu_c", QT_TRANSLATE_NOOP("Compare", "GPU temperature"), "°C"),
    ("util_gpu_pct", QT_TRANSLATE_NOOP("Compare", "utilization"), "%"),
    ("sm_active_pct", QT_TRANSLATE_NOOP("Compare", "SM activity"), "%"),
    ("own_share_pct", QT_TRANSLATE_NOOP("Compare", "your share of the GPU"), "%"),
    ("pcie_rx_bps", QT_TRANSLATE_NOOP("Compare", "PCIe in"), ""),
    ("nvlink_bps", QT_TRANSLATE_NOOP("Compare", "NVLink"), ""),
)


def figure(key: str, v: float | None) -> str:
    return rate_h(v) if key.endswith("_bps") else num(v)


def text_lines(c: Comparison) -> list[str]:
    """The comparison for a terminal: verdict, estimate, causes, then A and B side by side."""
    head = f"{c.b.host} (B) against {c.a.host} (A): {words.verdict_name(c.verdict)}"
    out = [head, words.verdict_says(c.verdict, c.reason, c.a.gpu_name, c.b.gpu_name)]
    out.append(words.slower_says(c.slower_by_pct, c.slower_range))
    out.append(
        words.compared_says(c.gpus, duration(c.a.work_s), duration(c.b.work_s), c.not_compared)
    )
    for x, s in zip(c.causes, says_of(c), strict=True):
        out.append(f"  {x.share_pct:5.1f} %  {words.cause_name(x.cause)}: {s}")
    out.append(f"  {'':24s} {'A':>12s} {'B':>12s}")
    for key, label, unit in SAME_ROWS:
        a, b = c.same.get(key, (None, None))
        if a is None and b is None:
            continue
        name = f"{translated(_C, label)} ({unit})" if unit else translated(_C, label)
        out.append(f"  {name:24s} {figure(key, a):>12s} {figure(key, b):>12s}")
    return out
