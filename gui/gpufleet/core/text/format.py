"""How numbers, times and places read in gpufleet's sentences: money, durations, sizes,
rates, and which GPU (or MIG slice, or host) a sentence is about."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

_CURRENCY_SIGNS: Final = {"USD": "$", "CNY": "¥", "RMB": "¥", "EUR": "€", "GBP": "£", "JPY": "¥"}


def money(amount: float | None, currency: str = "USD") -> str:
    if amount is None or not math.isfinite(amount):
        return "?"
    sign = _CURRENCY_SIGNS.get(currency.upper())
    digits = 0 if currency.upper() == "JPY" else 2
    text = f"{amount:,.{digits}f}"
    return f"{sign}{text}" if sign else f"{text} {currency}"


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "?"
    s = max(0, round(seconds))
    if s < 90:
        return translated("Units", QT_TRANSLATE_NOOP("Units", "{n} s")).format(n=s)
    m = round(s / 60)
    if m < 90:
        return translated("Units", QT_TRANSLATE_NOOP("Units", "{n} min")).format(n=m)
    h, m = divmod(m, 60)
    if h < 48:
        return translated("Units", QT_TRANSLATE_NOOP("Units", "{h} h {m} min")).format(h=h, m=m)
    return translated("Units", QT_TRANSLATE_NOOP("Units", "{d} days {h} h")).format(
        d=h // 24, h=h % 24
    )


def num(v: Any, digits: int = 0) -> str:
    if v is None:
        return "?"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return "?"
    return f"{f:.{digits}f}"


def pct(frac: float | None) -> str:
    return "?" if frac is None else f"{100.0 * frac:.0f} %"


def bytes_h(v: Any) -> str:
    if v is None:
        return "?"
    f = float(v)
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(f) >= size:
            return f"{f / size:.1f} {unit}"
    return f"{f:.0f} B"


def rate_h(v: Any) -> str:
    if v is None:
        return "?"
    f = float(v)
    for unit, size in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(f) >= size:
            return f"{f / size:.1f} {unit}"
    return f"{f:.0f} B/s"


def clock_time(t: float | None) -> str:
    if t is None:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def sentence_start(template: str) -> str:
    """``template`` made fit to open a sentence: its first letter capitalised ("GPU {gpu}",
    "the host" → "The host"), unless it opens with a placeholder: what fills that (a host
    name: "a100-ecc", zh_CN's "{host} 的 GPU {gpu}") is never altered. Scripts without case
    (Chinese) pass unchanged, as ``upper()`` leaves their characters as they are."""
    if template.startswith("{"):
        return template
    return template[:1].upper() + template[1:]


def _place(template: str, start: bool) -> str:
    """The translated ``template`` (context "Alerts"), capitalised when it opens a sentence.
    The template is capitalised before it is filled, so only its own words change case."""
    text = translated("Alerts", template)
    return sentence_start(text) if start else text


def where(gpu: int | None, start: bool = False) -> str:
    """The GPU (or MIG slice, or the host as a whole) a finding is about; ``start``: it opens
    the sentence (the ``{Where}`` placeholder)."""
    if gpu is None:
        return _place(QT_TRANSLATE_NOOP("Alerts", "the host"), start)
    if gpu >= protocol.MIG_INDEX_BASE:  # a MIG slice: protocol.mig_index(parent, slot)
        return _place(
            QT_TRANSLATE_NOOP("Alerts", "MIG slice {slot} of GPU {parent}"), start
        ).format(slot=gpu % protocol.MIG_INDEX_BASE, parent=gpu // protocol.MIG_INDEX_BASE - 1)
    return _place(QT_TRANSLATE_NOOP("Alerts", "GPU {gpu}"), start).format(gpu=gpu)


def alert_where(host: str, gpu: int | None, start: bool = False) -> str:
    """Where an alert happened, always with its host: with several rentals "GPU 2 lost"
    does not say which one is in trouble. ``start``: it opens the sentence (``{Where}``);
    the host name keeps its case even then ("a100-ecc 的 GPU 2", or just "a100-ecc")."""
    if gpu is None:
        return host
    if gpu >= protocol.MIG_INDEX_BASE:  # a MIG slice: protocol.mig_index(parent, slot)
        return _place(
            QT_TRANSLATE_NOOP("Alerts", "MIG slice {slot} of GPU {parent} of {host}"), start
        ).format(
            slot=gpu % protocol.MIG_INDEX_BASE,
            parent=gpu // protocol.MIG_INDEX_BASE - 1,
            host=host,
        )
    return _place(QT_TRANSLATE_NOOP("Alerts", "GPU {gpu} of {host}"), start).format(
        gpu=gpu, host=host
    )


def procs_text(procs: Any) -> str:
    if not isinstance(procs, (list, tuple)) or not procs:
        return "?"
    parts = []
    for p in procs[:3]:
        if isinstance(p, Mapping):
            # The command says more than the name ("python" runs anything).
            name = str(p.get("cmd") or p.get("name") or "?")
            name = name if len(name) <= 60 else name[:57] + "..."
            user = f", {p['user']}" if p.get("user") else ""
            mem = f", {bytes_h(p['mem_bytes'])}" if p.get("mem_bytes") else ""
            parts.append(f"'{name}' (PID {p.get('pid')}{user}{mem})")
    more = len(procs) - 3
    text = ", ".join(parts)
    return text + (f" +{more}" if more > 0 else "")
