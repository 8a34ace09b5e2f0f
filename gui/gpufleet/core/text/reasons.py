"""Why a GPU is slowed or faulted, in words: the clock event reasons (dcgm-style labels),
how long each held the clocks, and the driver's Xid codes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.text.format import duration
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

XID_NAMES: Final[dict[int, str]] = {
    13: QT_TRANSLATE_NOOP("Xid", "graphics engine exception (usually the application)"),
    31: QT_TRANSLATE_NOOP("Xid", "GPU memory page fault (usually the application)"),
    43: QT_TRANSLATE_NOOP("Xid", "GPU stopped processing (usually the application)"),
    45: QT_TRANSLATE_NOOP("Xid", "preemptive cleanup: a process was killed"),
    48: QT_TRANSLATE_NOOP("Xid", "double-bit (uncorrectable) ECC error"),
    61: QT_TRANSLATE_NOOP("Xid", "internal micro-controller breakpoint"),
    62: QT_TRANSLATE_NOOP("Xid", "internal micro-controller halt"),
    63: QT_TRANSLATE_NOOP("Xid", "ECC page retirement or row remapping recorded"),
    64: QT_TRANSLATE_NOOP("Xid", "ECC page retirement or row remapping failed"),
    68: QT_TRANSLATE_NOOP("Xid", "video decoder exception"),
    74: QT_TRANSLATE_NOOP("Xid", "NVLink error"),
    79: QT_TRANSLATE_NOOP("Xid", "GPU has fallen off the bus"),
    92: QT_TRANSLATE_NOOP("Xid", "high single-bit ECC error rate"),
    94: QT_TRANSLATE_NOOP("Xid", "contained ECC error"),
    95: QT_TRANSLATE_NOOP("Xid", "uncontained ECC error"),
    109: QT_TRANSLATE_NOOP("Xid", "context switch timeout"),
    119: QT_TRANSLATE_NOOP("Xid", "GSP RPC timeout"),
    120: QT_TRANSLATE_NOOP("Xid", "GSP error"),
    121: QT_TRANSLATE_NOOP("Xid", "C2C link error"),
    140: QT_TRANSLATE_NOOP("Xid", "unrecovered ECC error"),
    143: QT_TRANSLATE_NOOP("Xid", "GPU initialization failure"),
    154: QT_TRANSLATE_NOOP("Xid", "GPU recovery action required"),
}


def xid_name(code: int | None) -> str:
    if code is None:
        return "?"
    name = XID_NAMES.get(int(code))
    return (
        translated("Xid", name)
        if name
        else translated("Xid", QT_TRANSLATE_NOOP("Xid", "Xid {code}")).format(code=code)
    )


# The clock event reasons by their dcgm-style label (protocol.REASON_BITS). The source text is
# the label itself, so English output keeps the labels users search for.
REASON_NAMES: Final[dict[str, str]] = {
    "gpu_idle": QT_TRANSLATE_NOOP("Reasons", "gpu_idle"),
    "clocks_setting": QT_TRANSLATE_NOOP("Reasons", "clocks_setting"),
    "power_cap": QT_TRANSLATE_NOOP("Reasons", "power_cap"),
    "hw_slowdown": QT_TRANSLATE_NOOP("Reasons", "hw_slowdown"),
    "sync_boost": QT_TRANSLATE_NOOP("Reasons", "sync_boost"),
    "sw_thermal": QT_TRANSLATE_NOOP("Reasons", "sw_thermal"),
    "hw_thermal": QT_TRANSLATE_NOOP("Reasons", "hw_thermal"),
    "hw_power_brake": QT_TRANSLATE_NOOP("Reasons", "hw_power_brake"),
    "display_clocks": QT_TRANSLATE_NOOP("Reasons", "display_clocks"),
}


# What each clock event reason means for the user's job (Clocks tab, evidence, CLI).
REASON_MEANINGS: Final[dict[str, str]] = {
    "gpu_idle": QT_TRANSLATE_NOOP(
        "Reasons", "nothing to run: the GPU lowers its clock on purpose; no loss"
    ),
    "clocks_setting": QT_TRANSLATE_NOOP(
        "Reasons",
        "the applications-clocks setting (nvidia-smi -ac) caps the clock: someone's choice, "
        "reset with nvidia-smi -rac",
    ),
    "power_cap": QT_TRANSLATE_NOOP(
        "Reasons",
        "the software power cap: the GPU keeps within its enforced limit; normal under heavy "
        "load at the default limit, a loss when the limit is below the default",
    ),
    "hw_slowdown": QT_TRANSLATE_NOOP(
        "Reasons",
        "the hardware slowdown signal: the board's over-temperature or power-supply "
        "protection; never seen on a healthy machine",
    ),
    "sync_boost": QT_TRANSLATE_NOOP(
        "Reasons",
        "a sync boost group: every GPU of the group runs at the slowest member's clock",
    ),
    "sw_thermal": QT_TRANSLATE_NOOP(
        "Reasons", "software thermal slowdown: the GPU is near its slowdown temperature"
    ),
    "hw_thermal": QT_TRANSLATE_NOOP(
        "Reasons", "hardware thermal slowdown: the GPU is too hot and cuts its clock hard"
    ),
    "hw_power_brake": QT_TRANSLATE_NOOP(
        "Reasons",
        "the hardware power brake: the machine's power supply asked the GPU to slow down; a "
        "power delivery fault",
    ),
    "display_clocks": QT_TRANSLATE_NOOP(
        "Reasons", "the display clock setting limits the clock (a display-related setting)"
    ),
}
assert set(REASON_MEANINGS) == {label for _, label, _ in protocol.REASON_BITS}


def reason_meaning(label: str) -> str:
    """What a clock event reason (dcgm-style label) means, in the installed language."""
    text = REASON_MEANINGS.get(label)
    return translated("Reasons", text) if text else label


def reason_name(label: str) -> str:
    """A clock event reason label in the installed language."""
    text = REASON_NAMES.get(label)
    return translated("Reasons", text) if text else label


def reason_text(mask: int | None) -> str:
    return ", ".join(reason_name(r) for r in protocol.reason_labels(mask)) or "-"


COUNTER_NAMES: Final = {"power": "power-violation", "thermal": "thermal-violation"}


def held_by(v: Mapping[str, Any]) -> str:
    """Seconds per reason (and per violation counter) as "hw_thermal 4 min, ..."."""
    by = v.get("by_reason") or {}
    counters = v.get("counter_s") or {}
    parts = [f"{reason_name(str(k))} {duration(float(x))}" for k, x in dict(by).items()]
    parts += [
        f"{COUNTER_NAMES.get(str(k), str(k))} counter {duration(float(x))}"
        for k, x in dict(counters).items()
        if float(x) > 0
    ]
    return ", ".join(parts) or "-"
