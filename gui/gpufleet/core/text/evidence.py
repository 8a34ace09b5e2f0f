"""An alert's evidence as a person reads it: one "what: value" line per fact, in the units of
its name (times as local clock times, durations in s / min / h, temperatures in °C, bytes in
GiB...), the rule's measured values first, nothing left as a Python dict or an epoch.

The window's alert tooltip shows these lines under the alert's sentence; the keys are the
rules' own field names, so the labels are those names in words ("last_sample_t" → "last
sample"), with a plain label for the frequent ones."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpufleet.core.text.format import bytes_h, clock_time, duration, rate_h
from gpufleet.core.text.sanitize import clean
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

MAX_VALUE_CHARS = 80
# Evidence keys whose plain words are not their name's (the rest: the name in words).
_LABELS: dict[str, str] = {
    "old_run_id": QT_TRANSLATE_NOOP("Evidence", "previous sampler run"),
    "new_run_id": QT_TRANSLATE_NOOP("Evidence", "new sampler run"),
    "first_t": QT_TRANSLATE_NOOP("Evidence", "first sample of the new run"),
    "gap_s": QT_TRANSLATE_NOOP("Evidence", "time without samples"),
    "lost": QT_TRANSLATE_NOOP("Evidence", "unsent samples lost"),
    "since_t": QT_TRANSLATE_NOOP("Evidence", "condition true since"),
    "price_per_hour": QT_TRANSLATE_NOOP("Evidence", "price per hour"),
    "temp_gpu_c": QT_TRANSLATE_NOOP("Evidence", "GPU temperature"),
    "temp_mem_c": QT_TRANSLATE_NOOP("Evidence", "memory temperature"),
}
_YES = QT_TRANSLATE_NOOP("Evidence", "yes")
_NO = QT_TRANSLATE_NOOP("Evidence", "no")
# Unit suffixes of the field names (protocol.md's metric names) and how their values read.
_UNITS: tuple[tuple[str, str], ...] = (
    ("_c", "°C"),
    ("_w", "W"),
    ("_mhz", "MHz"),
    ("_pct", "%"),
)


def _label(key: str) -> str:
    if key in _LABELS:
        return translated("Evidence", _LABELS[key])
    stem = key
    for suffix in ("_t", "_s", "_bytes", "_bps", *(s for s, _ in _UNITS)):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    return stem.replace("_", " ")


def _short(text: str) -> str:
    text = clean(text)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _number(key: str, v: float) -> str:
    if key.endswith("_t") and v > 1e9:
        return clock_time(v)
    if key.endswith("_s"):
        return duration(v)
    if key.endswith("_bytes"):
        return bytes_h(v)
    if key.endswith("_bps"):
        return rate_h(v)
    text = f"{v:.4g}" if isinstance(v, float) else str(v)
    for suffix, unit in _UNITS:
        if key.endswith(suffix):
            return f"{text} {unit}"
    return text


def value_text(key: str, v: Any) -> str | None:
    """One value in words; None for what says nothing (no value)."""
    if v is None or v == "" or v == [] or v == {}:
        return None
    if isinstance(v, bool):
        return translated("Evidence", _YES if v else _NO)
    if isinstance(v, int | float):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return _number(key, v)
    if isinstance(v, Mapping):
        parts = [f"{_label(str(k))} {t}" for k, x in v.items() if (t := value_text(str(k), x))]
        return _short(", ".join(parts)) if parts else None
    if isinstance(v, list | tuple):
        parts = [t for x in v if (t := value_text(key, x))]
        return _short(", ".join(parts)) if parts else None
    return _short(str(v))


def evidence_lines(evidence: Mapping[str, Any]) -> list[str]:
    """The evidence as "what: value" lines, the rule's values first."""
    flat: dict[str, Any] = {}
    values = evidence.get("values")
    if isinstance(values, Mapping):
        flat.update({str(k): v for k, v in values.items()})
    for k, v in evidence.items():
        if k != "values":
            flat.setdefault(str(k), v)
    lines = []
    for k, v in flat.items():
        text = value_text(k, v)
        if text is not None:
            lines.append(f"{_label(k)}: {text}")
    return lines
