"""What ``gpufleet compare`` and the Compare view say: the verdict on B against A, one
sentence per cause with its numbers, and where to look next. Written for a renter who will
forward it to the provider's support, so each sentence names the GPUs and both values.
Plain values in (cause names, figure dicts), so this stays below ``verdicts``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.core.text.catalogue import (
    QT_TRANSLATE_NOOP,
    join_sentences,
    num,
    rate_h,
    translated,
)

# The QT_TRANSLATE_NOOP calls spell the context out: lupdate reads only a literal one.
CTX = "Compare"

_CAUSES: dict[str, str] = {
    "power_limit": QT_TRANSLATE_NOOP(
        "Compare",
        "The power limit of {gpus} was lowered from {a_power_limit_w} W to {b_power_limit_w} W; "
        "held at it, the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. "
        "The provider set this limit: ask them to restore the default.",
    ),
    "power_cap": QT_TRANSLATE_NOOP(
        "Compare",
        "{gpus} reached the same {b_power_limit_w} W power limit more often "
        "({a_held_power_pct} % of the work in A, {b_held_power_pct} % in B), so the SM clock "
        "fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} MHz. Either the job draws more power "
        "now, or the card needs more for the same work (it runs at {b_temp_gpu_c} °C against "
        "{a_temp_gpu_c} °C).",
    ),
    "thermal": QT_TRANSLATE_NOOP(
        "Compare",
        "{gpus} slowed down for heat {b_held_thermal_pct} % of the work (A: "
        "{a_held_thermal_pct} %) at {b_temp_gpu_c} °C on average (A: {a_temp_gpu_c} °C, "
        "peak {b_temp_max_c} °C); the SM clock fell from {a_sm_clock_mhz} to {b_sm_clock_mhz} "
        "MHz. The instance's cooling is worse: ask for a check or another machine.",
    ),
    "hw_slowdown": QT_TRANSLATE_NOOP(
        "Compare",
        "The board held {gpus} in HW slowdown {b_held_hw_slowdown_pct} % of the work (A: "
        "{a_held_hw_slowdown_pct} %); the SM clock fell from {a_sm_clock_mhz} to "
        "{b_sm_clock_mhz} MHz. This is the hardware or its power supply: report it.",
    ),
    "clocks_unexplained": QT_TRANSLATE_NOOP(
        "Compare",
        "The SM clock of {gpus} was {b_sm_clock_mhz} MHz against {a_sm_clock_mhz} MHz in A "
        "(nominal {a_sm_clock_max_mhz} MHz) with no reason reported by the driver: clocks "
        "locked or capped on the host. Ask the provider why.",
    ),
    "shared_gpu": QT_TRANSLATE_NOOP(
        "Compare",
        "Another process ran on {gpus} ({others}): your job had {b_own_share_pct} % of the "
        "GPU against {a_own_share_pct} % in A, while utilization still read "
        "{b_util_gpu_pct} %. The GPU is shared: ask for a dedicated one.",
    ),
    "data_wait": QT_TRANSLATE_NOOP(
        "Compare",
        "{gpus} waited for input: the SMs were busy {b_sm_active_pct} % of the time against "
        "{a_sm_active_pct} % in A (utilization {b_util_gpu_pct} % against {a_util_gpu_pct} %), "
        "with {b_pcie_rx_bps} arriving over PCIe against {a_pcie_rx_bps}. The GPU is not at "
        "fault: look at the storage the data is read from, the network, and the number of "
        "dataloader workers. If the data is on the provider's network storage, it may be "
        "theirs to fix.",
    ),
    "nvlink": QT_TRANSLATE_NOOP(
        "Compare",
        "Only {b_nvlink_up} of {b_nvlink_links} NVLink links of {gpus} were up (A: "
        "{a_nvlink_up}); NVLink traffic fell from {a_nvlink_bps} to {b_nvlink_bps} and the "
        "SMs waited in the collectives. A degraded link is the host's: report it.",
    ),
    "pcie_link": QT_TRANSLATE_NOOP(
        "Compare",
        "The PCIe link of {gpus} ran at Gen {b_pcie_gen} x{b_pcie_width} against Gen "
        "{a_pcie_gen} x{a_pcie_width} in A; transfers took longer and the SMs waited. A "
        "downtrained link is the host's: report it.",
    ),
    "memory_pressure": QT_TRANSLATE_NOOP(
        "Compare",
        "The memory of {gpus} was {b_mem_used_pct} % full at its peak (A: {a_mem_used_pct} %); "
        "the allocator's retries kept the SMs waiting. A larger batch or model in the job, "
        "or memory taken by another process: check both.",
    ),
    "ecc": QT_TRANSLATE_NOOP(
        "Compare",
        "The memory of {gpus} reported errors: {b_ecc_sbe_new} corrected and "
        "{b_ecc_dbe_new} uncorrected in B (A: {a_ecc_sbe_new} and {a_ecc_dbe_new}), a row "
        "remapping pending; the SMs stalled. Failing GPU memory: ask for another GPU.",
    ),
}
_WAITED = QT_TRANSLATE_NOOP("Compare", "{gpus} waited for it at every step.")
_VERDICTS = {
    "platform": QT_TRANSLATE_NOOP(
        "Compare", "The platform: B lost throughput to the card or the host, not to your job."
    ),
    "job": QT_TRANSLATE_NOOP(
        "Compare",
        "Your job: the hardware ran the same in A and B. Same clocks, power and "
        "temperatures, no other process on the GPUs. If B is slower, look at the code, "
        "the config and the data.",
    ),
    "unclear": QT_TRANSLATE_NOOP("Compare", "Unclear: {reason}"),
}
_REASONS = {
    "data_wait": QT_TRANSLATE_NOOP(
        "Compare",
        "the GPUs waited for data; the cards ran as well as in A. Whether the input path "
        "is yours (dataloader, preprocessing) or the platform's (network storage, network) "
        "the data here cannot tell.",
    ),
    "power_cap": QT_TRANSLATE_NOOP(
        "Compare",
        "the GPUs were held at the same power limit more often; that can be the job "
        "(heavier kernels) or the card (needing more power for the same work).",
    ),
    "memory_pressure": QT_TRANSLATE_NOOP(
        "Compare", "the GPUs' memory was nearly full; that is usually the job's own use."
    ),
    "no_common_work": QT_TRANSLATE_NOOP(
        "Compare",
        "A and B have no GPU that worked at least 2 minutes in both: nothing to compare. "
        "Pick windows in which the job ran.",
    ),
    "different_gpus": QT_TRANSLATE_NOOP(
        "Compare",
        "A and B ran on different GPU models ({a_gpu} and {b_gpu}); their clocks and "
        "power cannot be set against each other.",
    ),
    "no_rate": QT_TRANSLATE_NOOP(
        "Compare", "A's GPUs show no utilization in the window: no throughput to compare with."
    ),
}
_SLOWER = QT_TRANSLATE_NOOP(
    "Compare",
    "From the hardware data, B ran about {pct} % slower than A (between {lo} % and {hi} %: "
    "the pace of the slowest GPU, as synchronous training goes, down to the GPUs taken "
    "one by one).",
)
_FASTER = QT_TRANSLATE_NOOP(
    "Compare",
    "From the hardware data, B ran at least as fast as A ({pct} %, between {lo} % and {hi} %).",
)
_NO_ESTIMATE = QT_TRANSLATE_NOOP("Compare", "The data cannot tell how much slower B ran.")
_COMPARED = QT_TRANSLATE_NOOP(
    "Compare", "Compared: {gpus}, {a_work} of work in A and {b_work} in B (pauses left out)."
)
_NOT_COMPARED = QT_TRANSLATE_NOOP("Compare", "Not compared (no work in both): {gpus}.")
_GPU_LIST = QT_TRANSLATE_NOOP("Compare", "GPU {list}")
_GPUS_LIST = QT_TRANSLATE_NOOP("Compare", "GPUs {list}")
_SOMEONE = QT_TRANSLATE_NOOP("Compare", "PID {pid}, outside this container")
_PROC = QT_TRANSLATE_NOOP("Compare", "PID {pid} {name}")
_CAUSE_NAMES = {
    "power_limit": QT_TRANSLATE_NOOP("Compare", "power limit lowered"),
    "power_cap": QT_TRANSLATE_NOOP("Compare", "held at the power limit"),
    "thermal": QT_TRANSLATE_NOOP("Compare", "thermal slowdown"),
    "hw_slowdown": QT_TRANSLATE_NOOP("Compare", "HW slowdown"),
    "clocks_unexplained": QT_TRANSLATE_NOOP("Compare", "clocks low, no reason given"),
    "shared_gpu": QT_TRANSLATE_NOOP("Compare", "GPU shared with another process"),
    "data_wait": QT_TRANSLATE_NOOP("Compare", "waiting for data"),
    "nvlink": QT_TRANSLATE_NOOP("Compare", "NVLink degraded"),
    "pcie_link": QT_TRANSLATE_NOOP("Compare", "PCIe link degraded"),
    "memory_pressure": QT_TRANSLATE_NOOP("Compare", "memory nearly full"),
    "ecc": QT_TRANSLATE_NOOP("Compare", "memory errors (ECC)"),
}
_VERDICT_NAMES = {
    "platform": QT_TRANSLATE_NOOP("Compare", "platform"),
    "job": QT_TRANSLATE_NOOP("Compare", "your job"),
    "unclear": QT_TRANSLATE_NOOP("Compare", "unclear"),
}


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


def _fill(text: str, values: Mapping[str, Any]) -> str:
    template = translated(CTX, text)
    try:
        return template.format_map(_Blank(values))
    except (ValueError, IndexError, AttributeError):  # a bad translation: the source
        return text.format_map(_Blank(values))


def gpu_list(gpus: Sequence[int]) -> str:
    text = ", ".join(str(g) for g in gpus)
    return translated(CTX, _GPU_LIST if len(gpus) == 1 else _GPUS_LIST).format(list=text)


def _shown(key: str, v: Any) -> str:
    if key.endswith("_bps"):
        return rate_h(v)
    if key.endswith("_new") or key in ("pcie_gen", "pcie_width", "nvlink_up", "nvlink_links"):
        return num(v)
    return num(v, 1 if key.endswith("_pct") and v is not None and abs(float(v)) < 10 else 0)


def _others(procs: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for p in procs[:3]:
        if p.get("outside_container") or not p.get("name"):
            out.append(translated(CTX, _SOMEONE).format(pid=p.get("pid")))
        else:
            out.append(translated(CTX, _PROC).format(pid=p.get("pid"), name=p.get("name")))
    return ", ".join(out) or "?"


def cause_says(
    cause: str,
    gpus: Sequence[int],
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    waited: Sequence[int] = (),
) -> str:
    """One cause in a sentence or two, with A's and B's values."""
    values: dict[str, Any] = {"gpus": gpu_list(gpus)}
    for side, figs in (("a", a), ("b", b)):
        for k, v in figs.items():
            if k != "processes":
                values[f"{side}_{k}"] = _shown(k, v)
    values["others"] = _others(b.get("processes") or [])
    text = _fill(_CAUSES.get(cause, cause), values)
    if waited:
        text = join_sentences([text, _fill(_WAITED, {"gpus": gpu_list(waited)})])
    return text


def cause_name(cause: str) -> str:
    return translated(CTX, _CAUSE_NAMES.get(cause, cause))


def verdict_name(verdict: str) -> str:
    return translated(CTX, _VERDICT_NAMES.get(verdict, verdict))


def verdict_says(verdict: str, reason: str | None, a_gpu: str = "", b_gpu: str = "") -> str:
    if verdict != "unclear":
        return translated(CTX, _VERDICTS.get(verdict, verdict))
    why = _fill(_REASONS.get(reason or "", reason or "?"), {"a_gpu": a_gpu, "b_gpu": b_gpu})
    return _fill(_VERDICTS["unclear"], {"reason": why})


def slower_says(pct: float | None, rng: tuple[float, float] | None) -> str:
    if pct is None or rng is None:
        return translated(CTX, _NO_ESTIMATE)
    values = {"pct": f"{pct:.0f}", "lo": f"{rng[0]:.0f}", "hi": f"{rng[1]:.0f}"}
    return _fill(_SLOWER if pct >= 1.0 else _FASTER, values)


def compared_says(gpus: Sequence[int], a_work: str, b_work: str, skipped: Sequence[int]) -> str:
    parts = [_fill(_COMPARED, {"gpus": gpu_list(gpus), "a_work": a_work, "b_work": b_work})]
    if skipped:
        parts.append(_fill(_NOT_COMPARED, {"gpus": gpu_list(skipped)}))
    return join_sentences(parts)
