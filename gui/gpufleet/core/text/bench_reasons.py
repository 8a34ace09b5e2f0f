"""The arrival benchmark's verdict reasons, worded from their structured form.

Why: the verdict (``core.verdicts.arrival``) carries each reason as an id and its values
(``{"id": "shortfall", "values": {"metric": …, "pct": 71.2, …}}``) besides the English
``reason`` of the documented JSON (docs/cli.md). Both are worded here from one set of
templates: in English for the JSON (``translate=False``), in the user's language for the GUI
dialog, the host line and the CLI text. A result stored before reasons were structured has
only its English ``reason``; ``reason_of`` shows that as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated
from gpufleet.core.text.sanitize import clean

CTX = "BenchReasons"
Reason = dict[str, Any]  # {"id": str, "values": {...}, "because": [Reason, ...] (optional)}

# The metrics as a sentence names them (the table's headers are core.text.bench's).
METRIC_IN_SENTENCE = {
    "matmul_bf16_tflops": QT_TRANSLATE_NOOP("BenchReasons", "BF16 matmul (TFLOPS)"),
    "matmul_fp16_tflops": QT_TRANSLATE_NOOP("BenchReasons", "FP16 matmul (TFLOPS)"),
    "matmul_tf32_tflops": QT_TRANSLATE_NOOP("BenchReasons", "TF32 matmul (TFLOPS)"),
    "hbm_gbps": QT_TRANSLATE_NOOP("BenchReasons", "memory bandwidth (GB/s)"),
    "h2d_gbps": QT_TRANSLATE_NOOP("BenchReasons", "host-to-device copy (GB/s)"),
    "d2h_gbps": QT_TRANSLATE_NOOP("BenchReasons", "device-to-host copy (GB/s)"),
    "p2p_gbps": QT_TRANSLATE_NOOP("BenchReasons", "peer copy (GB/s)"),
}
# The SM clock during the run, inside a cause's sentence ({clock}).
_CLOCK = {
    "both": QT_TRANSLATE_NOOP("BenchReasons", "SM clock {sm:.0f} MHz of {top:.0f} MHz max"),
    "sm": QT_TRANSLATE_NOOP("BenchReasons", "SM clock {sm:.0f} MHz"),
    "none": QT_TRANSLATE_NOOP("BenchReasons", "its clock was not read"),
}
TEMPLATES = {
    # why a GPU has no figures
    "refused": QT_TRANSLATE_NOOP("BenchReasons", "not run: {why}; --force runs it anyway"),
    "refused_busy": QT_TRANSLATE_NOOP(
        "BenchReasons", "not run: in use by another process; --force runs it anyway"
    ),
    "ended_early": QT_TRANSLATE_NOOP("BenchReasons", "the run ended early ({status}): {message}"),
    "ended_early_silent": QT_TRANSLATE_NOOP("BenchReasons", "the run ended early ({status})"),
    "step_skipped": QT_TRANSLATE_NOOP("BenchReasons", "{metric} not measured: {why}"),
    "nothing_measured": QT_TRANSLATE_NOOP("BenchReasons", "nothing was measured"),
    "no_reference": QT_TRANSLATE_NOOP(
        "BenchReasons", "no reference figures for {name}: the figures are shown, not judged"
    ),
    # the verdict
    "shortfall": QT_TRANSLATE_NOOP(
        "BenchReasons", "{metric} at {pct:.0f} % of a good card ({measured:.1f} of {good:.1f})"
    ),
    "within_reach": QT_TRANSLATE_NOOP(
        "BenchReasons", "every measured figure is within reach of a good card of this model"
    ),
    "below_advertised": QT_TRANSLATE_NOOP(
        "BenchReasons", "{metric} under the offer's advertised {advertised:g} ({measured:.1f})"
    ),
    # the likely cause of a shortfall (core.verdicts.arrival_reasons)
    "heat": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "clock held down by heat ({clock}): check the cooling or ask the provider",
    ),
    "heat_at": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "clock held down by heat at {temp:.0f} °C ({clock}): check the cooling or ask the provider",
    ),
    "power_lowered": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "clock held by a lowered power limit: {limit:.0f} W of its {default:.0f} W default "
        "({clock}); ask the provider to restore it",
    ),
    "power_limit": QT_TRANSLATE_NOOP("BenchReasons", "clock held at the power limit ({clock})"),
    "compute_unexplained": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "no power or heat limit held it ({clock}): a slower card or host than a good one",
    ),
    "pcie_width": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "PCIe link trained at x{width:.0f} of x{wmax:.0f}: a riser, slot or bifurcation setting",
    ),
    "pcie_gen": QT_TRANSLATE_NOOP(
        "BenchReasons", "PCIe link at gen {gen:.0f} of {gmax:.0f}: the slot or its setting"
    ),
    "pcie_full": QT_TRANSLATE_NOOP(
        "BenchReasons",
        "the PCIe link is at full width and generation: the host side (NUMA placement, a "
        "shared switch)",
    ),
    "nvlink_down": QT_TRANSLATE_NOOP(
        "BenchReasons", "NVLink: {up:.0f} of {links:.0f} links up: a link is down, ask the provider"
    ),
    "no_nvlink": QT_TRANSLATE_NOOP("BenchReasons", "no NVLink: peer copies cross PCIe"),
    "nvlink_up": QT_TRANSLATE_NOOP(
        "BenchReasons", "every NVLink link up: the route between these GPUs (topology)"
    ),
    "mem_clock": QT_TRANSLATE_NOOP("BenchReasons", "memory clock {mem:.0f} of {top:.0f} MHz"),
    "mem_full": QT_TRANSLATE_NOOP(
        "BenchReasons", "memory clock at its maximum: a slower memory stack than a good card's"
    ),
    # the host, from its GPUs
    "host_below": QT_TRANSLATE_NOOP("BenchReasons", "GPU {gpus} below par"),
    "host_also_unmeasured": QT_TRANSLATE_NOOP("BenchReasons", "GPU {gpus} not measured"),
    "host_unmeasured": QT_TRANSLATE_NOOP("BenchReasons", "GPU {gpus} not measured"),
    "no_gpu": QT_TRANSLATE_NOOP("BenchReasons", "no GPU measured"),
    "host_as_expected": QT_TRANSLATE_NOOP("BenchReasons", "every GPU as expected"),
}
# A cause follows the shortfalls it explains after ": ", not "; ".
CAUSES = frozenset(
    {"heat", "heat_at", "power_lowered", "power_limit", "compute_unexplained", "pcie_width",
     "pcie_gen", "pcie_full", "nvlink_down", "no_nvlink", "nvlink_up", "mem_clock", "mem_full"}
)  # fmt: skip


def reason(rid: str, **values: Any) -> Reason:
    return {"id": rid, "values": values}


def _word(template: str, translate: bool) -> str:
    return translated(CTX, template) if translate else template


def _values(values: Mapping[str, Any], translate: bool) -> dict[str, Any]:
    """A reason's values ready for its template: metric ids as their words, GPU lists
    joined, the SM clock as its phrase, free text (from the instance) cleaned."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        if k == "metric":
            out[k] = _word(METRIC_IN_SENTENCE.get(str(v), str(v)), translate)
        elif k == "gpus" and isinstance(v, list | tuple):
            out[k] = ", ".join(str(g) for g in v)
        elif isinstance(v, str):
            out[k] = clean(v)
        else:
            out[k] = v
    sm, top = values.get("sm"), values.get("top")
    kind = "none" if sm is None else "both" if top else "sm"
    try:
        out["clock"] = _word(_CLOCK[kind], translate).format(sm=sm, top=top)
    except (KeyError, ValueError, IndexError, TypeError):
        out["clock"] = _CLOCK[kind].format(sm=sm, top=top)
    return out


def reason_text(r: Mapping[str, Any], translate: bool = True) -> str:
    """One reason in words (its ``because``, the first unmeasured GPU's, after ": ")."""
    template = TEMPLATES.get(str(r.get("id")))
    if template is None:  # an id from a newer gpufleet: say what it is, never fail
        return clean(str(r.get("id")))
    values = _values(r.get("values") or {}, translate)
    try:
        text = _word(template, translate).format(**values)
    except (KeyError, ValueError, IndexError, TypeError):  # a bad translation or value
        try:
            text = template.format(**values)
        except (KeyError, ValueError, IndexError, TypeError):
            text = clean(str(r.get("id")))
    because = r.get("because")
    if isinstance(because, list) and because:
        text += ": " + reasons_text(because, translate)
    return text


def reasons_text(reasons: Sequence[Mapping[str, Any]], translate: bool = True) -> str:
    """Reasons joined as the verdict reads: "; " between them, ": " before a cause."""
    out = ""
    prev: str | None = None
    for r in reasons:
        rid = str(r.get("id"))
        if prev is not None:
            out += ": " if rid in CAUSES and prev not in CAUSES else "; "
        out += reason_text(r, translate)
        prev = rid
    return out


def reason_of(obj: Mapping[str, Any]) -> str:
    """A verdict's (a GPU's or the host's) reason in the user's language: from its
    structured ``reasons``, else (a result stored before they were) its English ``reason``."""
    reasons = obj.get("reasons")
    if isinstance(reasons, list) and reasons and all(isinstance(r, Mapping) for r in reasons):
        return reasons_text(reasons)
    return clean(str(obj.get("reason") or ""))
