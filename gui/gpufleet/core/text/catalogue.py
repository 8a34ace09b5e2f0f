"""Every sentence gpufleet says about alerts, health findings, diagnoses and cost.

Alerts and findings leave the core as data; this catalogue turns them into sentences saying
what happened (with the numbers), what it costs (at the host's price), and what to do. The
strings are marked for Qt's ``lupdate`` with ``QT_TRANSLATE_NOOP(context, text)`` (lupdate
recognises the call in .py files) without importing Qt: the marker returns the text, and
``tr`` translates it through a hook the UI sets at startup
(``set_translator(QCoreApplication.translate)``). Placeholders are ``{name}`` fields filled
with ``str.format``; a translation must keep them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from gpufleet_sampler import protocol

from gpufleet.core.model.alert import Alert
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.sanitize import clean

Translator = Callable[[str, str], str]
_translator: Translator | None = None


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Marks ``text`` for lupdate under ``context``; returns it unchanged."""
    return text


def set_translator(fn: Translator | None) -> None:
    """Install the translation function (``QCoreApplication.translate`` in the GUI)."""
    global _translator
    _translator = fn


def translated(context: str, text: str) -> str:
    """``text`` (marked under ``context``) in the installed language; the text itself
    when no translator is set or it has no translation. Not named ``tr``: lupdate would
    take every ``tr(context, ...)`` call for a message whose source is the context."""
    fn = _translator
    if fn is None:
        return text
    try:
        out = fn(context, text)
    except Exception:  # a broken translation must never hide an alert
        return text
    return out if isinstance(out, str) and out else text


tr = translated  # the former name, kept for callers


def join_sentences(parts: list[str]) -> str:
    """Sentences one after the other: a space after Latin punctuation, none after a CJK
    full stop (a translation into Chinese reads "。它" not "。 它")."""
    out = ""
    for p in (p.strip() for p in parts):
        if not p:
            continue
        out += p if not out or out[-1] in "。！？；：）」" else " " + p
    return out


class _Values(dict[str, Any]):
    """format_map source: a missing placeholder shows as "?" rather than raising. String
    values (process names, command lines, GPU names, messages: many come from the instance)
    are shown with their control and bidi characters escaped."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__({k: clean(v) if isinstance(v, str) else v for k, v in values.items()})

    def __missing__(self, key: str) -> str:
        return "?"


def _fill(context: str, text: str, values: Mapping[str, Any]) -> str:
    template = translated(context, text)
    try:
        return template.format_map(_Values(values))
    except (ValueError, IndexError, AttributeError):  # a bad translation: use the source
        return text.format_map(_Values(values))


# --- number formatting ---------------------------------------------------------------------

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


# --- Xid names -----------------------------------------------------------------------------

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


# --- alert sentences -----------------------------------------------------------------------
# Per condition: (title, what happened, what it costs, what to do). The cost part is used
# only when the host has a price; NO_PRICE otherwise.

ALERT_TEXT: Final[dict[str, tuple[str, str, str, str]]] = {
    "thermal_throttle": (
        QT_TRANSLATE_NOOP("Alerts", "Thermal throttling on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been slowed by its temperature ({reasons}) for {window}: its SM clock is "
            "{clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at {temp} °C (slowdown at "
            "{slowdown} °C). Utilization can still read 99 %: the GPU is busy, just slower.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Compare with the other GPUs: if only this one is hot, its cooling is at fault. Save "
            "this evidence and ask the provider to fix the cooling or move you to another machine.",
        ),
    ),
    "hw_slowdown": (
        QT_TRANSLATE_NOOP("Alerts", "HW slowdown on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been held down by its hardware slowdown signal ({reasons}) for "
            "{window}: its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, "
            "at {temp} °C and {power} W. A healthy GPU never asserts it: the board's "
            "over-temperature or power-supply protection is tripping.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A fault of the machine, not of your job: save this evidence and ask the provider "
            "to check its power supply and cooling, or to move you to another machine.",
        ),
    ),
    "clock_setting_low": (
        QT_TRANSLATE_NOOP("Alerts", "Clocks held low by a setting on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is busy ({util} % utilization) but a setting ({reasons}) holds its SM "
            "clock at {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, for {window}.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Applications clocks or a sync boost group are set by whoever administers the "
            "machine: reset them ('sudo nvidia-smi -rac') if you may, or ask the provider.",
        ),
    ),
    "mem_unaccounted": (
        QT_TRANSLATE_NOOP("Alerts", "Memory held by no visible process on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{hidden} of the memory of {where} is in use ({used} used) but the processes you "
            "can see hold only {held}, for {window}: {hidden_pct} of the card is taken by "
            "something invisible.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Another tenant's job, a reservation of the virtualization layer or a context "
            "leaked by a killed process: your job may run out of memory sooner than the card's "
            "size says. Check for leftover processes (a reset frees a leaked context) and ask "
            "the provider.",
        ),
    ),
    "watchdog": (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog on {host} will act at {deadline}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{host} has been idle while billed, and the watchdog on the instance will {act} at "
            "{deadline}{dry}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If the job is meant to wait, cancel it (Hosts ▸ Watchdog on the selected host…, or "
            "gpufleet watchdog {host} cancel); it stands down by itself once the GPUs work again.",
        ),
    ),
    "sampler_restarted": (
        QT_TRANSLATE_NOOP("Alerts", "Sampler restarted on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The sampler on {host} started a new run (the daemon, or the host, restarted) "
            "after {gap} without samples.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A note: recording goes on. If you did not restart it, check whether the host "
            "rebooted (uptime) and why.",
        ),
    ),
    "power_limit_low": (
        QT_TRANSLATE_NOOP("Alerts", "Power capped below default on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of "
            "it), drawing {power} W now. The job runs slower than the same card elsewhere.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Up to {lost_pct} slower at {price}/h: up to {waste} an hour paid for nothing.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Save the evidence (nvidia-smi -q -d POWER shows the same limit) and ask the provider "
            "for the full power limit or another instance.",
        ),
    ),
    "power_cap_active": (
        QT_TRANSLATE_NOOP("Alerts", "Power limit reached on {where} (note)"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is pulling its full {limit} W limit (default {default} W) and holds its SM "
            "clock at {clock} MHz, {clock_pct} of the {clock_max} MHz maximum, to stay within it.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "This is the card working as designed at its default limit: nothing to do.",
        ),
    ),
    "clocks_below_nominal": (
        QT_TRANSLATE_NOOP("Alerts", "Clocks below nominal on {where} with no reason"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is busy ({util} % utilization) but its SM clock is {clock} MHz, {clock_pct} "
            "of its {clock_max} MHz maximum, for {window}, and the driver reports no reason.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A limit set outside this machine (the virtualization host or the provider) is the "
            "usual cause. Compare with another instance and ask the provider, with this evidence.",
        ),
    ),
    "temp_near_slowdown": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} close to its slowdown temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is at {temp} °C, within {margin} °C of its slowdown temperature "
            "({limit} °C), for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It will start slowing down soon. If the room or its airflow is the cause, ask the "
            "provider; a cooler instance is worth more than a cheaper one.",
        ),
    ),
    "mem_temp_near_max": (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} close to its maximum temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} is at {temp} °C, within {margin} °C of its limit "
            "({limit} °C), for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Hot memory throttles and then fails. Watch for ECC errors and ask the provider to "
            "check the cooling.",
        ),
    ),
    "mem_temp_high": (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} over {above} °C"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} has been at {temp} °C (over {above} °C) for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Memory this hot risks errors and damage: save a checkpoint, stop training, and move "
            "to another instance.",
        ),
    ),
    "idle_billed": (
        QT_TRANSLATE_NOOP("Alerts", "{host} idle while billed"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "All {gpus} GPUs of {host} have been idle for {window} (utilization under "
            "{util_max} %, memory under {mem_max} of capacity). The job has probably crashed "
            "or finished.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "That has cost {spent} so far, and costs {price} every hour it stays so.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Check the job. If it is done or dead, stop the instance (or let an action of this "
            "rule do it).",
        ),
    ),
    "foreign_process": (
        QT_TRANSLATE_NOOP("Alerts", "Unexpected process on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{procs} on {where} is not in this host's allow-list.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you do not recognise it, kill it and change the instance's password and keys; "
            "if it is yours, add it to the host's allowed processes.",
        ),
    ),
    "miner_process": (
        QT_TRANSLATE_NOOP("Alerts", "Mining program on {where}"),
        QT_TRANSLATE_NOOP("Alerts", "{procs} on {where} looks like a cryptocurrency miner."),
        QT_TRANSLATE_NOOP("Alerts", "It takes compute you pay {price}/h for."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Kill it now, change the instance's password and SSH keys, and tell the provider.",
        ),
    ),
    "p8_with_process": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} in P{pstate} while a process runs"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has sat in its low-power state P{pstate} for {window} while {procs} "
            "runs on it.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "Every hour like this costs {price} for almost no work."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The job is probably stuck, or the driver is. Check the job; if it persists, reset "
            "the GPU or change instance.",
        ),
    ),
    "ecc_dbe_increase": (
        QT_TRANSLATE_NOOP("Alerts", "Uncorrectable memory error on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The uncorrectable (double-bit) ECC error count of {where} rose from {before} to "
            "{after}.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "If the job died, every hour until it restarts costs {price}."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The job on this GPU may have crashed or computed garbage: restart it from the last "
            "checkpoint, save this evidence and ask the provider to check the GPU.",
        ),
    ),
    "remap_pending": (
        QT_TRANSLATE_NOOP("Alerts", "Row remapping pending on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has a memory row remapping pending: it takes effect only after a GPU reset.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Until the reset the bad row may fail again. Reset the GPU or reboot when your job "
            "allows, or ask the provider to.",
        ),
    ),
    "remap_failed": (
        QT_TRANSLATE_NOOP("Alerts", "Row remapping failed on {where}"),
        QT_TRANSLATE_NOOP("Alerts", "{Where} could not remap a failing memory row."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "This GPU should be replaced: move to another instance and report it to the provider.",
        ),
    ),
    "retired_pending": (
        QT_TRANSLATE_NOOP("Alerts", "Page retirement pending on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{Where} has memory pages waiting to be retired at the next reset."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts", "Reset the GPU or reboot when convenient, or ask the provider to."
        ),
    ),
    "xid": (
        QT_TRANSLATE_NOOP("Alerts", "Xid {xid} on {where}: {xid_name}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The driver reported Xid {xid} ({xid_name}) on {where} (seen {count}×).",
        ),
        QT_TRANSLATE_NOOP("Alerts", "If the job died, every hour until it restarts costs {price}."),
        "",
    ),
    "gpu_lost": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} lost"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{Where} no longer answers the driver (it has fallen off the bus)."
        ),
        QT_TRANSLATE_NOOP("Alerts", "The instance still costs {price}/h with this GPU dead."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It needs at least a reboot. Save this evidence, report it to the provider and move "
            "your job to another instance.",
        ),
    ),
    "pcie_downtrained": (
        QT_TRANSLATE_NOOP("Alerts", "PCIe link of {where} below its maximum"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "While busy, {where}'s PCIe link runs at Gen{gen} x{width} instead of Gen{max_gen} "
            "x{max_width}, for {window}: transfers to and from the GPU are slower.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Jobs that load a lot of data suffer most. Ask the provider to reseat the card or "
            "move you; save this evidence.",
        ),
    ),
    "pcie_replays": (
        QT_TRANSLATE_NOOP("Alerts", "PCIe replays rising on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The PCIe link of {where} (Gen{gen} x{width}) retransmitted {replays} times within "
            "{replay_window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Replays are the link correcting its own errors: each one stalls transfers, and a "
            "rising count is a bad riser, slot or signal. Save the evidence and ask the "
            "provider to reseat the card or move you.",
        ),
    ),
    "nvlink_down": (
        QT_TRANSLATE_NOOP("Alerts", "NVLink link down on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "Only {up} of {links} NVLink links of {where} are up, for {window}."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Multi-GPU communication falls back to slower paths. Save this evidence and report "
            "it to the provider.",
        ),
    ),
    "nvlink_slow": (
        QT_TRANSLATE_NOOP("Alerts", "NVLink degraded on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "NVLink of {where} carries less than the job asks of it, for {window}."
        ),
        "",
        QT_TRANSLATE_NOOP("Alerts", "Save the evidence and report it to the provider."),
    ),
    "host_unreachable": (
        QT_TRANSLATE_NOOP("Alerts", "{host} unreachable"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} has been unreachable for {window} ({status}: {reason})."
        ),
        QT_TRANSLATE_NOOP("Alerts", "Billing goes on meanwhile: {price}/h."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The sampler keeps recording on the host, and the data is filled in when the link "
            "returns. Check your network, the instance's state and its SSH access.",
        ),
    ),
    "sampler_stalled": (
        QT_TRANSLATE_NOOP("Alerts", "Sampler stalled on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} sent no sample for {gap} although the connection was up."
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The host may be overloaded or the driver hung (nvidia-smi hanging is a sign). Log "
            "in and check; a reboot may be needed.",
        ),
    ),
    "budget": (
        QT_TRANSLATE_NOOP("Alerts", "{host} has used {budget_pct} of its budget"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{host} has cost {used} of its {budget} budget ({budget_pct})."
        ),
        QT_TRANSLATE_NOOP("Alerts", "It costs {price} every further hour."),
        QT_TRANSLATE_NOOP("Alerts", "Stop the instance if the work is done, or raise the budget."),
    ),
    "metric_above": (
        QT_TRANSLATE_NOOP("Alerts", "{metric} high on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{metric} of {where} is {value}, above {threshold}, for {window}."
        ),
        "",
        "",
    ),
    "metric_below": (
        QT_TRANSLATE_NOOP("Alerts", "{metric} low on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts", "{metric} of {where} is {value}, below {threshold}, for {window}."
        ),
        "",
        "",
    ),
    "mem_nearly_full": (
        QT_TRANSLATE_NOOP("Alerts", "Memory nearly full on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has {mem_used} of its {mem_total} in use ({mem_pct}) for {window}.{card_note}",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            'The next allocation on it fails with "CUDA out of memory": lower the batch size, '
            "or move the job to a larger slice.",
        ),
    ),
}

# Variants of an alert's text, keyed by (condition, variant); ``_alert_variant`` picks one
# from the evidence. The default is ``ALERT_TEXT``'s.
ALERT_VARIANTS: Final[dict[tuple[str, str], tuple[str, str, str, str]]] = {
    ("hw_slowdown", "brake"): (
        QT_TRANSLATE_NOOP("Alerts", "HW power brake on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has been held down by its hardware power brake ({reasons}) for {window}: "
            "its SM clock is {clock} MHz, {clock_pct} of its {clock_max} MHz maximum, at "
            "{power} W. The brake is asserted by the machine's power supply, not by the GPU's "
            "own limit: the power delivery of this machine is failing or overloaded.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} "
            "an hour.",
        ),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A fault of the machine, not of your job: save this evidence and ask the provider "
            "to check its power supply, or to move you to another machine.",
        ),
    ),
    ("power_limit_low", "not_binding"): (
        QT_TRANSLATE_NOOP("Alerts", "Power capped below default on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is limited to {limit} W against its default of {default} W ({limit_pct} of "
            "it). It draws {power} W now, under the limit, and the power-cap reason is not "
            "set: the limit does not slow this job at the moment, but it will slow a heavier "
            "one.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Nothing is lost yet. If your work will need the full power, ask the provider for "
            "the default limit (nvidia-smi -q -d POWER shows it).",
        ),
    ),
    ("temp_near_slowdown", "over"): (
        QT_TRANSLATE_NOOP("Alerts", "{Where} at its slowdown temperature"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} is at {temp} °C, at or over its slowdown temperature ({limit} °C), for "
            "{window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "It slows itself down from here on. If the room or its airflow is the cause, ask "
            "the provider; a cooler instance is worth more than a cheaper one.",
        ),
    ),
    ("mem_temp_high", "own"): (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} at its temperature limit"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The memory of {where} has been at {temp} °C, at or over its own limit of "
            "{mem_limit} °C, for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Memory this hot throttles, then risks errors and damage: save a checkpoint, stop "
            "training, and move to another instance.",
        ),
    ),
    ("nvlink_slow", "peers"): (
        QT_TRANSLATE_NOOP("Alerts", "NVLink of {where} slower than its peers"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink of {where} carried {bw} against {peers_bw} on the host's other {peers} "
            "NVLink GPUs ({peer_pct} of theirs), for {window}, in the same job.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "In one collective every GPU carries about the same: a GPU at half its peers' rate "
            "has a degraded link. Save the evidence and report it to the provider.",
        ),
    ),
    ("nvlink_slow", "lane"): (
        QT_TRANSLATE_NOOP("Alerts", "Dead NVLink lane on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink link(s) {lanes} of {where} are up but carry next to nothing while its other "
            "links carry {lane_bw} each, for {window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Traffic is spread over all links: one that carries nothing is dead or degraded. "
            "Save the evidence and report it to the provider.",
        ),
    ),
    ("nvlink_slow", "errors"): (
        QT_TRANSLATE_NOOP("Alerts", "NVLink errors rising on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "NVLink of {where} logged {errors} errors (CRC, replay, recovery) within "
            "{errors_window}.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Each error costs a retransmission; a rising count is a failing link or cable. Save "
            "the evidence and report it to the provider.",
        ),
    ),
    ("watchdog", "done"): (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog acted on {host}"),
        QT_TRANSLATE_NOOP("Alerts", "The watchdog on {host} {acted}{dry}: {outcome}."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Check in the provider's console that billing stopped; start the instance again "
            "when you need it, and arm the watchdog again there.",
        ),
    ),
    ("watchdog", "failed"): (
        QT_TRANSLATE_NOOP("Alerts", "Watchdog on {host} could not act"),
        QT_TRANSLATE_NOOP("Alerts", "The watchdog on {host} tried to {act} and failed: {outcome}."),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The instance is still billed: stop it from the provider's console, then check the "
            "watchdog's settings (Hosts ▸ Watchdog on the selected host…).",
        ),
    ),
    ("sampler_restarted", "lost"): (
        QT_TRANSLATE_NOOP("Alerts", "Sampler restarted on {host}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "The sampler on {host} started a new run after {gap} without samples, and what "
            "the previous run recorded but had not yet sent is gone.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you did not restart it, check whether the host rebooted (uptime) and why.",
        ),
    ),
}

THROTTLE_NOTE_MIN_S: Final = 15.0
THROTTLE_NOTE: Final = QT_TRANSLATE_NOOP(
    "Alerts", "Over {window} the clocks were held down {held_share} of the time ({held_by})."
)

XID_TODO_CRITICAL: Final = QT_TRANSLATE_NOOP(
    "Alerts",
    "A hardware or driver fault: save this evidence, restart your job from its checkpoint on "
    "another GPU or instance, and report it to the provider.",
)
XID_TODO_APP: Final = QT_TRANSLATE_NOOP(
    "Alerts",
    "Usually a fault of the application (a bad memory access, a killed job): check the job's "
    "log first. If it repeats with code that ran fine elsewhere, report it.",
)
NO_PRICE: Final = QT_TRANSLATE_NOOP(
    "Alerts", "Set this host's price per hour to see what it costs."
)
ENDED: Final = QT_TRANSLATE_NOOP("Alerts", "Resolved after {duration}.")

# Conditions whose cost part matters enough to ask for a price when there is none.
_COST_RELEVANT: Final = frozenset(
    {
        "thermal_throttle",
        "hw_slowdown",
        "clock_setting_low",
        "power_limit_low",
        "clocks_below_nominal",
        "idle_billed",
        "budget",
    }
)

# What the rule means, for `gpufleet rules list` and the rule editor.
RULE_MEANINGS: Final[dict[str, str]] = {
    "thermal_throttle": QT_TRANSLATE_NOOP(
        "Rules",
        "SW or HW thermal slowdown reason bits set: the GPU slows itself down because it is hot",
    ),
    "hw_slowdown": QT_TRANSLATE_NOOP(
        "Rules",
        "HW slowdown (0x8) or HW power brake (0x80) reason set: the board's power-supply or "
        "over-temperature protection holds the clock down (a machine fault)",
    ),
    "clock_setting_low": QT_TRANSLATE_NOOP(
        "Rules",
        "busy and held well under the max clock by a setting: applications clocks (0x2), sync "
        "boost (0x10) or the display clock (0x100)",
    ),
    "mem_unaccounted": QT_TRANSLATE_NOOP(
        "Rules",
        "memory in use that no listed process holds (used minus the processes' memory): "
        "another tenant, a hidden reservation, a leaked context",
    ),
    "sampler_restarted": QT_TRANSLATE_NOOP(
        "Rules", "the sampler started a new run (a new run_id): the daemon or the host restarted"
    ),
    # One condition, three shipped rules: each its own meaning (by rule id).
    "watchdog_pending": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog will act on the idle, billed host unless cancelled"
    ),
    "watchdog_acted": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog acted: stopped, powered off or ran your command"
    ),
    "watchdog_failed": QT_TRANSLATE_NOOP(
        "Rules", "the instance's own watchdog failed to act: the host is still billed"
    ),
    "watchdog": QT_TRANSLATE_NOOP(
        "Rules", "what the instance's own watchdog said last: it will act, it acted, it failed"
    ),
    "power_limit_low": QT_TRANSLATE_NOOP(
        "Rules", "enforced power limit below the card's default (e.g. 300 W against 450 W)"
    ),
    "power_cap_active": QT_TRANSLATE_NOOP(
        "Rules", "power-cap reason while busy at the default limit: working as designed (a note)"
    ),
    "clocks_below_nominal": QT_TRANSLATE_NOOP(
        "Rules", "busy, SM clock well under its maximum, and no reason reported"
    ),
    "temp_near_slowdown": QT_TRANSLATE_NOOP(
        "Rules", "GPU temperature within a few degrees of its slowdown threshold"
    ),
    "mem_temp_near_max": QT_TRANSLATE_NOOP(
        "Rules", "memory temperature within a few degrees of its maximum"
    ),
    "mem_temp_high": QT_TRANSLATE_NOOP(
        "Rules",
        "memory temperature at its own limit (NVML's MEM_MAX threshold), or over 100 °C where "
        "no limit is reported",
    ),
    "idle_billed": QT_TRANSLATE_NOOP(
        "Rules", "every GPU under 5 % utilization and 10 % memory: paying for an idle host"
    ),
    "foreign_process": QT_TRANSLATE_NOOP(
        "Rules", "a process not in the host's allow-list uses a GPU"
    ),
    "miner_process": QT_TRANSLATE_NOOP("Rules", "a well-known mining program uses a GPU"),
    "p8_with_process": QT_TRANSLATE_NOOP(
        "Rules", "GPU in its idle P-state (P8) while a process works on it"
    ),
    "ecc_dbe_increase": QT_TRANSLATE_NOOP(
        "Rules", "the uncorrectable (double-bit) ECC error count increased"
    ),
    "remap_pending": QT_TRANSLATE_NOOP("Rules", "a memory row remapping waits for a GPU reset"),
    "remap_failed": QT_TRANSLATE_NOOP("Rules", "a memory row remapping failed"),
    "retired_pending": QT_TRANSLATE_NOOP(
        "Rules", "memory pages wait to be retired at the next reset"
    ),
    "xid": QT_TRANSLATE_NOOP(
        "Rules",
        "the driver reported an Xid error (critical codes named: 48, 63, 64, 74, 79, 92, 94, "
        "95, 119, 120, ...)",
    ),
    "gpu_lost": QT_TRANSLATE_NOOP("Rules", "a GPU stopped answering (fell off the bus)"),
    "pcie_downtrained": QT_TRANSLATE_NOOP(
        "Rules", "PCIe link below its max generation or width while busy (not at idle P-states)"
    ),
    "nvlink_down": QT_TRANSLATE_NOOP("Rules", "fewer NVLink links up than the GPU has"),
    "pcie_replays": QT_TRANSLATE_NOOP(
        "Rules", "the PCIe replay counter rising (retransmissions on the link), not its total"
    ),
    "nvlink_slow": QT_TRANSLATE_NOOP(
        "Rules",
        "NVLink carrying under half what the host's other GPUs carry, a link up but idle while "
        "its siblings are busy, or rising NVLink error counters (never nominal alone)",
    ),
    "host_unreachable": QT_TRANSLATE_NOOP("Rules", "the host cannot be reached over SSH"),
    "sampler_stalled": QT_TRANSLATE_NOOP(
        "Rules",
        "no sample from the host's sampler although the link is up and it did not restart",
    ),
    "budget": QT_TRANSLATE_NOOP("Rules", "the host's cost reached a share of its budget"),
    "metric_above": QT_TRANSLATE_NOOP("Rules", "a metric above a threshold (user rule)"),
    "metric_below": QT_TRANSLATE_NOOP("Rules", "a metric below a threshold (user rule)"),
    "mem_nearly_full": QT_TRANSLATE_NOOP(
        "Rules", "memory used above a share of its own capacity (a MIG slice: of the slice's)"
    ),
}


def rule_meaning(condition: str, rule_id: str = "") -> str:
    """What a rule watches for: its own words where one condition serves several shipped
    rules, else its condition's."""
    text = RULE_MEANINGS.get(rule_id) or RULE_MEANINGS.get(condition)
    return translated("Rules", text) if text else condition


def _procs_text(procs: Any) -> str:
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


def alert_values(alert: Alert) -> dict[str, Any]:
    """The placeholders of an alert's sentences, formatted for display."""
    ev = alert.evidence
    v: Mapping[str, Any] = ev.get("values") or {}
    th: Mapping[str, Any] = ev.get("thresholds") or {}
    cur = str(ev.get("currency") or "USD")
    price = ev.get("price_per_hour")
    out: dict[str, Any] = {
        "host": alert.host,
        "where": alert_where(alert.host, alert.gpu),
        "Where": alert_where(alert.host, alert.gpu, start=True),
        "window": duration(ev.get("window_s")),
        "price": money(price, cur),
    }
    clock, cmax = v.get("sm_clock_mhz"), v.get("sm_clock_max_mhz")
    clock_frac = float(clock) / float(cmax) if clock is not None and cmax else None
    out.update(
        clock=num(clock),
        clock_max=num(cmax),
        clock_pct=pct(clock_frac),
        temp=num(v.get("temp_gpu_c", v.get("temp_c", v.get("temp_mem_c")))),
        slowdown=num(v.get("temp_slowdown_c")),
        reasons=", ".join(reason_name(str(r)) for r in v.get("reasons") or []) or "?",
        util=num(v.get("util_gpu_pct")),
        power=num(v.get("power_w")),
        limit=num(v.get("power_limit_w", v.get("limit_c"))),
        default=num(v.get("power_default_w")),
        margin=num(th.get("margin_c")),
        above=num(v.get("above_c", th.get("above_c"))),
        procs=_procs_text(v.get("processes")),
        pstate=num(v.get("pstate")),
        before=num(v.get("ecc_dbe_before")),
        after=num(v.get("ecc_dbe_after")),
        gen=num(v.get("pcie_gen")),
        width=num(v.get("pcie_width")),
        max_gen=num(v.get("pcie_max_gen")),
        max_width=num(v.get("pcie_max_width")),
        up=num(v.get("nvlink_up")),
        links=num(v.get("nvlink_links")),
        bw=rate_h(v.get("nvlink_bps")),
        nominal=rate_h(v.get("nvlink_nominal_bps")),
        bw_pct=pct(None if v.get("nvlink_pct") is None else float(v["nvlink_pct"]) / 100.0),
        status=v.get("status") or "?",
        reason=v.get("reason") or "?",
        gap=duration(v.get("gap_s")),
        gpus=num(v.get("gpus")),
        util_max=num(v.get("util_below_pct")),
        mem_max=pct(v.get("mem_below_frac")),
        xid=num(v.get("xid")),
        xid_name=xid_name(v.get("xid")),
        count=num(v.get("count")),
        message=v.get("message") or "",
        metric=v.get("metric") or "?",
        value=num(v.get("value"), 1),
        threshold=num(v.get("above", v.get("below")), 1),
        hidden=bytes_h(v.get("mem_hidden_bytes")),
        used=bytes_h(v.get("mem_used_bytes")),
        held=bytes_h(v.get("mem_procs_bytes")),
        hidden_pct=pct(v.get("hidden_frac")),
        peers_bw=rate_h(v.get("peers_bps")),
        peers=num(v.get("peers")),
        peer_pct=pct(v.get("peer_frac")),
        lanes=", ".join(str(x) for x in v.get("links_slow") or []) or "?",
        lane_bw=rate_h(v.get("link_median_bps")),
        errors=num(v.get("errors")),
        errors_window=duration(v.get("window_s")),
        mem_limit=num(v.get("limit_c")),
        replays=num(v.get("replays_rise")),
        replay_window=duration(v.get("window_s")),
        mem_used=bytes_h(v.get("mem_used_bytes")),
        mem_total=bytes_h(v.get("mem_total_bytes")),
        mem_pct=pct(v.get("used_frac")),
        card_note=translated(
            "Alerts", QT_TRANSLATE_NOOP("Alerts", " The card as a whole is at {card_pct}.")
        ).format(card_pct=pct(v.get("card_frac")))
        if v.get("card_frac") is not None
        else "",
    )
    thr = ev.get("throttle")
    # The note needs a span to speak of: "over 0 s ... 100 %" said nothing.
    if isinstance(thr, Mapping) and float(thr.get("span_s") or 0) >= THROTTLE_NOTE_MIN_S:
        out["held_share"] = pct(thr.get("share"))
        out["held_by"] = _held_by(thr)
        out["held_window"] = duration(thr.get("span_s"))
    if alert.condition == "power_limit_low":
        out["limit_pct"] = pct(
            float(v["power_limit_w"]) / float(v["power_default_w"])
            if v.get("power_limit_w") is not None and v.get("power_default_w")
            else None
        )
    # What it costs: the share of compute lost, at the host's price.
    lost: float | None = None
    if alert.condition in _CLOCK_LOSS and clock_frac is not None:
        lost = max(0.0, 1.0 - clock_frac)
    elif (
        alert.condition == "power_limit_low"
        and v.get("binding", True)
        and v.get("power_limit_w")
        and v.get("power_default_w")
    ):
        lost = max(0.0, 1.0 - float(v["power_limit_w"]) / float(v["power_default_w"]))
    out["lost_pct"] = pct(lost)
    out["waste"] = money(None if lost is None or price is None else lost * float(price), cur)
    if alert.condition == "idle_billed" and price is not None:
        idle_s = float(ev.get("window_s") or 0.0)
        if alert.ended_t is not None and ev.get("since_t") is not None:
            idle_s = alert.ended_t - float(ev["since_t"])
        out["spent"] = money(idle_s / 3600.0 * float(price), cur)
    if alert.condition == "watchdog":
        action = str(v.get("action") or "")
        out["deadline"] = clock_time(v.get("deadline_t"))
        out["act"] = translated("Alerts", _WATCHDOG_ACT.get(action, _WATCHDOG_ACT[""]))
        out["acted"] = translated("Alerts", _WATCHDOG_ACTED.get(action, _WATCHDOG_ACTED[""]))
        out["outcome"] = str(v.get("outcome") or "?")
        out["dry"] = (
            translated("Alerts", QT_TRANSLATE_NOOP("Alerts", " (a dry run: nothing is done)"))
            if v.get("dry_run")
            else ""
        )
    if alert.condition == "budget":
        frac = v.get("budget_frac")
        out["budget_pct"] = pct(frac)
        out["used"] = money(v.get("budget_used"), cur)
        out["budget"] = money(v.get("budget"), cur)
    for hook in ALERT_VALUE_HOOKS:
        out.update(hook(alert))
    return out


_WATCHDOG_ACT: Final = {
    "provider": QT_TRANSLATE_NOOP("Alerts", "stop the instance through its provider"),
    "shutdown": QT_TRANSLATE_NOOP("Alerts", "power the instance off"),
    "command": QT_TRANSLATE_NOOP("Alerts", "run your command"),
    "": QT_TRANSLATE_NOOP("Alerts", "act"),
}
_WATCHDOG_ACTED: Final = {
    "provider": QT_TRANSLATE_NOOP("Alerts", "stopped the instance through its provider"),
    "shutdown": QT_TRANSLATE_NOOP("Alerts", "powered the instance off"),
    "command": QT_TRANSLATE_NOOP("Alerts", "ran your command"),
    "": QT_TRANSLATE_NOOP("Alerts", "acted"),
}

_CLOCK_LOSS: Final = frozenset(
    {"thermal_throttle", "clocks_below_nominal", "hw_slowdown", "clock_setting_low"}
)
_COUNTER_NAMES: Final = {"power": "power-violation", "thermal": "thermal-violation"}


# Later modules' sentences (``text.judgment``) add their values and variants through these.
ALERT_VALUE_HOOKS: Final[list[Callable[[Alert], Mapping[str, Any]]]] = []
ALERT_VARIANT_HOOKS: Final[list[Callable[[Alert], str | None]]] = []
FINDING_VALUE_HOOKS: Final[list[Callable[[Finding], Mapping[str, Any]]]] = []


def _alert_variant(alert: Alert) -> str | None:
    v: Mapping[str, Any] = alert.evidence.get("values") or {}
    c = alert.condition
    for hook in ALERT_VARIANT_HOOKS:
        variant = hook(alert)
        if variant is not None:
            return variant
    if c == "hw_slowdown" and v.get("power_brake"):
        return "brake"
    if c == "power_limit_low" and v.get("binding") is False:
        return "not_binding"
    if c == "temp_near_slowdown" and v.get("over"):
        return "over"
    if c == "mem_temp_high" and v.get("own_limit"):
        return "own"
    if c == "nvlink_slow" and v.get("variant"):
        return str(v["variant"])
    if c == "sampler_restarted" and v.get("lost"):
        return "lost"
    if c == "watchdog" and v.get("state") in ("done", "failed"):
        return str(v["state"])
    return None


def _alert_text(alert: Alert) -> tuple[str, str, str, str] | None:
    variant = _alert_variant(alert)
    if variant is not None:
        text = ALERT_VARIANTS.get((alert.condition, variant))
        if text is not None:
            return text
    return ALERT_TEXT.get(alert.condition)


def alert_title(alert: Alert) -> str:
    """The alert's one-line title; it always names the host."""
    if alert.condition == "alertmanager":  # received from Alertmanager: its own words
        return str(alert.evidence.get("summary") or alert.rule_id)
    text = _alert_text(alert)
    if text is None:
        return f"{alert.rule_id} ({alert_where(alert.host, alert.gpu)})"
    return _fill("Alerts", text[0], alert_values(alert))


def alert_sentence(alert: Alert) -> str:
    """What happened (with the numbers), what it costs (at the host's price), what to do."""
    if alert.condition == "alertmanager":  # received from Alertmanager: its own words
        ev = alert.evidence
        return str(ev.get("description") or ev.get("summary") or alert.rule_id)
    text = _alert_text(alert)
    values = alert_values(alert)
    if text is None:
        return f"{alert.rule_id} on {alert.host}: {dict(alert.evidence.get('values') or {})}"
    _title, what, cost, todo = text
    parts = [_fill("Alerts", what, values)]
    if "held_share" in values:
        parts.append(_fill("Alerts", THROTTLE_NOTE, {**values, "window": values["held_window"]}))
    if cost:
        if alert.evidence.get("price_per_hour") is not None:
            parts.append(_fill("Alerts", cost, values))
        elif alert.condition in _COST_RELEVANT:
            parts.append(translated("Alerts", NO_PRICE))
    if alert.condition == "xid":
        v = alert.evidence.get("values") or {}
        todo = XID_TODO_CRITICAL if v.get("critical") else XID_TODO_APP
    if todo:
        parts.append(_fill("Alerts", todo, values))
    if alert.ended_t is not None:
        parts.append(
            _fill("Alerts", ENDED, {"duration": duration(alert.evidence.get("duration_s"))})
        )
    return join_sentences(parts)


# --- findings (health check and diagnosis) -------------------------------------------------
# Keyed by (finding id, verdict); "*" matches any verdict.

FINDING_TEXT: Final[dict[tuple[str, str], str]] = {
    ("driver", "*"): QT_TRANSLATE_NOOP(
        "Findings", "Driver {driver_version}, CUDA {cuda_version}{gpu_names}."
    ),
    ("persistence_mode", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: persistence mode is on."),
    ("persistence_mode", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: persistence mode is off, so every CUDA start and nvidia-smi call re-initializes "
        "the GPU (slow). Ask the provider, or run 'sudo nvidia-smi -pm 1' if you may.",
    ),
    ("pstate", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: P-state P{pstate}, as expected."),
    ("pstate", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: in P{pstate} (its idle power state) although a process is running on it: the "
        "driver or the job has a problem.",
    ),
    ("power_limit", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: power limit {limit} W, the card's default ({default} W)."
    ),
    ("power_limit", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: power limited to {limit} W against its default of {default} W ({limit_pct}): "
        "this instance will be slower than the same card elsewhere. Save this and ask the "
        "provider for the full limit or another instance.",
    ),
    ("temperature", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: {temp} °C, well under its slowdown temperature ({slowdown} °C)."
    ),
    ("temperature", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: already {temp} °C {load} (slowdown at {slowdown} °C): poor cooling, expect "
        "throttling under load.",
    ),
    ("temperature", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {temp} °C, at or near its slowdown temperature ({slowdown} °C): it will "
        "throttle. Ask for another instance.",
    ),
    ("mem_temperature", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: memory at {temp} °C (limit {limit} °C)."
    ),
    ("mem_temperature", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: memory already at {temp} °C (limit {limit} °C): watch it under load.",
    ),
    ("mem_temperature", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: memory at {temp} °C, over 100 °C: risk of errors and damage. Change instance.",
    ),
    ("processes", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no other process uses it."),
    ("processes", "yours"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only your own processes use it: {procs}."
    ),
    ("processes", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} already use it ({mem} of memory). Leftover jobs or someone else's: "
        "check before you start.",
    ),
    ("processes", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} looks like a mining program. Kill it, change the password and keys, "
        "and tell the provider.",
    ),
    ("not_here", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {mem} of memory is held by {count} process(es) that are not in this "
        "container (another tenant or the host): NVML reports them, but they cannot be seen or "
        "killed from here. If it stays taken, ask the provider.",
    ),
    ("orphans", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {procs} still hold the GPU after their job ended: the next job may run out "
        "of memory. End them with Kill tree… in the window or gpufleet kill --tree.",
    ),
    ("where", "container"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs in a container with its own PID namespace: NVML reports the host's "
        "PIDs, so GPU processes are matched to this container's by the device files they hold.",
    ),
    ("where", "container_host_pids"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs in a container that shares the host's PID namespace: NVML's PIDs "
        "are the processes'.",
    ),
    ("where", "host"): QT_TRANSLATE_NOOP(
        "Findings",
        "The sampler runs on the host itself (bare metal or a VM): NVML's PIDs are the processes'.",
    ),
    ("pcie_link", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: PCIe Gen{gen} x{width} (max Gen{max_gen} x{max_width}){idle_note}."
    ),
    ("pcie_link", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: PCIe link at Gen{gen} x{width} against a maximum of Gen{max_gen} x{max_width}: "
        "transfers will be slower. Ask the provider to check the slot.",
    ),
    ("nvlink", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: all {links} NVLink links up."),
    ("nvlink", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only {up} of {links} NVLink links are up. Report it to the provider."
    ),
    ("ecc", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no ECC errors."),
    ("ecc", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a history of memory errors ({sbe} corrected, {dbe_agg} uncorrected over its "
        "life): usable, but watch it.",
    ),
    ("ecc", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {dbe} uncorrectable ECC error(s) since the driver loaded: results on this GPU "
        "may be wrong. Ask for another instance.",
    ),
    ("ecc", "unsupported"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: ECC is not reported (off, or not supported on this board)."
    ),
    ("remapped_rows", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no memory rows remapped."),
    ("remapped_rows", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {corr} memory row(s) remapped after correctable errors, {unc} after "
        "uncorrectable ones: the board has a history; usable.",
    ),
    ("remapped_rows", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a row remapping is {state}: the GPU needs {fix}. Ask the provider before you "
        "start.",
    ),
    ("retired_pages", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no retired pages pending."),
    ("retired_pages", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: memory pages wait to be retired: the GPU needs a reset first."
    ),
    ("xid", "pass"): QT_TRANSLATE_NOOP("Findings", "{Where}: no Xid error seen since {since}."),
    ("xid", "unknown"): QT_TRANSLATE_NOOP(
        "Findings",
        "Xid errors could not be checked: no sampler daemon has been watching this host yet "
        "(from now on they are recorded).",
    ),
    ("xid", "warn"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: Xid {xids} seen ({xid_names}): usually application faults."
    ),
    ("xid", "fail"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: Xid {xids} seen ({xid_names}): a hardware or driver fault. Ask for another "
        "instance.",
    ),
    ("gpu_lost", "fail"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: lost (it does not answer the driver). The instance needs a reboot."
    ),
    ("reserved_memory", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: {usable} of {total} memory usable ({reserved} reserved)."
    ),
    ("reserved_memory", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {reserved} of its {total} memory ({reserved_pct}) is reserved by the driver or "
        "the virtualization layer: a model sized for the full card will run out of memory.",
    ),
    ("hidden_memory", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: the memory in use is held by the processes listed."
    ),
    ("hidden_memory", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {hidden} of its memory is in use ({used} used) but the processes you can see "
        "hold only {held}: another tenant, a hidden reservation or a leaked context. Your job "
        "has that much less memory.",
    ),
    ("virtualization", "pass"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: virtualization {mode}: the sensors are the card's own."
    ),
    ("virtualization", "warn"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: a vGPU guest: some sensors (temperature, power, clocks reasons) may be hidden "
        "or shared with other tenants.",
    ),
    ("mig", "info"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: MIG is enabled: you see a slice of the GPU, not all of it."
    ),
    # Diagnosis.
    ("diag_thermal", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was slowed by temperature for {share} of the window: its SM clock averaged "
        "{clock} MHz ({clock_pct} of {clock_max} MHz) at up to {temp} °C (slowdown {slowdown} "
        "°C). That alone makes it about {lost_pct} slower: check the cooling or change instance.",
    ),
    ("diag_power_limit", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is power limited to {limit} W against its default {default} W ({limit_pct}); "
        "its clocks averaged {clock_pct} of maximum while busy. Ask the provider for the full "
        "limit.",
    ),
    ("diag_power_limit", "not_binding"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is power limited to {limit} W against its default {default} W ({limit_pct}), "
        "but it drew {power} W on average while busy and the power-cap reason was rarely set: "
        "the limit did not slow this job (it would slow a heavier one).",
    ),
    ("diag_throttled", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s clocks were held down by a limit for {share} of the busy time ({held} of "
        "{span}): {held_by}.",
    ),
    ("diag_hw_slowdown", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was held down by its hardware {hw_kind} for {share} of the busy time (clocks "
        "averaged {clock_pct} of maximum): a fault of the machine's power supply or cooling, "
        "not of your job. Report it to the provider with this evidence.",
    ),
    ("diag_clock_setting", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} ran at {clock_pct} of its maximum clock for {share} of the busy time because "
        "of a setting ({reasons}): reset applications clocks ('sudo nvidia-smi -rac') or ask "
        "the provider.",
    ),
    ("diag_hidden_memory", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: {hidden} of its memory ({hidden_pct} of the card) was in use but held by no "
        "process you can see: another tenant, a reservation of the virtualization layer or a "
        "leaked context. Your job has that much less memory than the card's size says.",
    ),
    ("diag_power_cap", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} held its clocks down to stay within its default power limit for {share} of the "
        "busy time (clocks averaged {clock_pct} of maximum): normal for a heavy load.",
    ),
    ("diag_clocks_unexplained", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} ran at {clock_pct} of its maximum clock while busy for {share} of the window "
        "with no reason reported: a limit outside the machine (virtualization host, provider) "
        "is likely. Compare with another instance.",
    ),
    ("diag_temperature", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} held {temp} °C for a minute or more against a slowdown temperature of "
        "{slowdown} °C.",
    ),
    ("diag_shared", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} was shared: {procs} ran on it besides the main job, taking up to {mem} of "
        "memory. Two jobs on one GPU both run slower.",
    ),
    ("diag_pcie", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s PCIe link ran at Gen{gen} x{width} instead of Gen{max_gen} x{max_width} while "
        "busy: transfers were slower.",
    ),
    ("diag_starvation", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s utilization went up and down {cycles} times (busy {busy_share} of the time) "
        "while PCIe carried only {pcie}: the GPU waits for data. Look at the data loader "
        "(workers, storage, preprocessing) before the hardware.",
    ),
    ("diag_mem_temp", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Before the crash, the memory of {where} held {temp} °C for 30 s or more (limit "
        "{mem_limit} °C; rising {rise} °C over the window).",
    ),
    ("diag_ecc", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} logged {kind} memory errors at {at} ({count}): a hardware cause. Report it to "
        "the provider with this evidence.",
    ),
    ("diag_xid", "*"): QT_TRANSLATE_NOOP(
        "Findings", "At {at}, {where} reported Xid {xid} ({xid_name})."
    ),
    ("diag_lost", "*"): QT_TRANSLATE_NOOP(
        "Findings", "At {at}, {where} fell off the bus (GPU lost): the job could not survive it."
    ),
    ("diag_crash", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "At {at} the work stopped: utilization fell from {util_before} % to {util_after} % and "
        "memory from {mem_before} to {mem_after}{procs_note}.",
    ),
    ("diag_nvlink", "*"): QT_TRANSLATE_NOOP(
        "Findings", "{Where}: only {up} of {links} NVLink links were up."
    ),
    ("diag_none", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Nothing in the hardware data explains it: clocks, power, temperatures, PCIe, memory "
        "errors and processes look normal over the window. Look at the code, the data pipeline "
        "and the checkpointing.",
    ),
    ("diag_no_data", "*"): QT_TRANSLATE_NOOP(
        "Findings", "No samples in the window: nothing to diagnose."
    ),
    # Cost advice.
    ("smaller_instance", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Memory use peaked at {mem_peak} of the card: a smaller GPU or a shared instance would "
        "do for this job.",
    ),
    ("fractional_gpu", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "Memory use peaked at {mem_peak} of the card and the GPU works in bursts (busy about "
        "{busy_share} of the time, {cycles} cycles): a fractional (vGPU) instance would cost less.",
    ),
    # Diagnosis: how much of the GPU worked (GPM, or the power draw where there is none).
    ("diag_not_compute_bound", "gpm"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} looked busy ({util_pct} % utilization) but its SMs were active only "
        "{sm_active} % of the time ({share} of the busy window): utilization counts the time "
        "any kernel ran, not how much of the GPU it used. The kernels are too small or run "
        "one after another: raise the batch size, fuse small kernels (torch.compile, CUDA "
        "graphs) and keep the host from feeding launches one by one.",
    ),
    ("diag_not_compute_bound", "power"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} looked busy ({util_pct} % utilization) but drew only {power_pct} of its "
        "{limit} W power limit: a GPU doing full work draws near its limit, so most of it "
        "waited. This GPU has no GPM counters (SM activity); the power draw stands in. Raise "
        "the batch size or fuse small kernels, and profile (Nsight Systems) to confirm.",
    ),
    ("diag_memory_bound", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} is memory-bound: DRAM was busy {dram_active} % of the time while its SMs were "
        "active only {sm_active} % ({share} of the busy window). More FLOPs will not help: "
        "fuse element-wise operations, use fused attention kernels, keep data in lower "
        "precision, or pick a GPU with more memory bandwidth.",
    ),
    ("diag_tensor_idle", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s SMs worked ({sm_active} % active) but its tensor cores stayed idle "
        "({tensor_active} % active) for {share} of the busy window. In a mixed-precision job "
        "the matrix products are not reaching the tensor cores: check that autocast "
        "(bf16/fp16) covers them, that TF32 is allowed, and that the dimensions are multiples "
        "of 8.",
    ),
    ("diag_tensor_idle", "fp16"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} computed in half precision (its FP16 pipes busy {fp16_active} % of the time) "
        "but its tensor cores stayed idle ({tensor_active} % active) for {share} of the busy "
        "window: the half-precision matrix products run on the ordinary cores, several times "
        "slower. Use the library's matmul and convolution kernels (cuBLAS, cuDNN) rather than "
        "hand-written ones, and keep the dimensions multiples of 8.",
    ),
}


def finding_values(f: Finding) -> dict[str, Any]:
    v = f.values
    limit, default = v.get("power_limit_w"), v.get("power_default_w")
    total, reserved = v.get("mem_total_bytes"), v.get("mem_reserved_bytes")
    out: dict[str, Any] = {
        "where": where(f.gpu),
        "Where": where(f.gpu, start=True),
        "driver_version": v.get("driver_version") or "?",
        "cuda_version": v.get("cuda_version") or "?",
        "gpu_names": f" ({v['gpu_names']})" if v.get("gpu_names") else "",
        "pstate": num(v.get("pstate")),
        "limit": num(limit if limit is not None else v.get("limit_c")),
        "default": num(default),
        "limit_pct": pct(float(limit) / float(default) if limit is not None and default else None),
        "temp": num(v.get("temp_c")),
        "slowdown": num(v.get("temp_slowdown_c")),
        "margin": num(v.get("margin_c")),
        "load": translated("Findings", QT_TRANSLATE_NOOP("Findings", "at idle"))
        if v.get("idle")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "under load")),
        "procs": _procs_text(v.get("processes")),
        "mem": bytes_h(v.get("mem_bytes")),
        "gen": num(v.get("pcie_gen")),
        "width": num(v.get("pcie_width")),
        "max_gen": num(v.get("pcie_max_gen")),
        "max_width": num(v.get("pcie_max_width")),
        "idle_note": translated(
            "Findings",
            QT_TRANSLATE_NOOP("Findings", "; the generation drops at idle on purpose"),
        )
        if v.get("idle_note")
        else "",
        "up": num(v.get("nvlink_up")),
        "links": num(v.get("nvlink_links")),
        "sbe": num(v.get("ecc_sbe_agg")),
        "dbe": num(v.get("ecc_dbe_vol")),
        "dbe_agg": num(v.get("ecc_dbe_agg")),
        "corr": num(v.get("remapped_rows_correctable")),
        "unc": num(v.get("remapped_rows_uncorrectable")),
        "state": translated("Findings", QT_TRANSLATE_NOOP("Findings", "failed"))
        if v.get("remap_failed")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "pending")),
        "fix": translated("Findings", QT_TRANSLATE_NOOP("Findings", "replacing"))
        if v.get("remap_failed")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "a reset")),
        "since": clock_time(v.get("since")) if v.get("since") else "?",
        "xids": ", ".join(str(x) for x in v.get("xids") or []) or "?",
        "xid_names": "; ".join(xid_name(x) for x in v.get("xids") or []) or "?",
        "total": bytes_h(total),
        "reserved": bytes_h(reserved),
        "usable": bytes_h(float(total) - float(reserved))
        if total and reserved is not None
        else "?",
        "reserved_pct": pct(float(reserved) / float(total) if total and reserved else None),
        "mode": v.get("mode") or "?",
        # diagnosis
        "share": pct(v.get("share")),
        "busy_share": pct(v.get("busy_share")),
        "clock": num(v.get("sm_clock_mhz")),
        "clock_max": num(v.get("sm_clock_max_mhz")),
        "clock_pct": pct(v.get("clock_frac")),
        "lost_pct": pct(None if v.get("clock_frac") is None else 1.0 - float(v["clock_frac"])),
        "cycles": num(v.get("cycles")),
        "pcie": rate_h(v.get("pcie_bps")),
        "rise": num(v.get("rise_c")),
        "kind": v.get("kind") or "?",
        "count": v.get("count") or "?",
        "at": clock_time(v.get("at_t")),
        "xid": num(v.get("xid")),
        "xid_name": xid_name(v.get("xid")),
        "util_before": num(v.get("util_before")),
        "util_after": num(v.get("util_after")),
        "mem_before": bytes_h(v.get("mem_before")),
        "mem_after": bytes_h(v.get("mem_after")),
        "procs_note": translated(
            "Findings", QT_TRANSLATE_NOOP("Findings", ", and its process disappeared")
        )
        if v.get("procs_gone")
        else "",
        "mem_peak": pct(v.get("mem_peak_frac")),
        "held": duration(v.get("held_s")),
        "span": duration(v.get("span_s")),
        "held_by": _held_by(v),
        "hw_kind": translated("Findings", QT_TRANSLATE_NOOP("Findings", "power brake"))
        if v.get("brake")
        else translated("Findings", QT_TRANSLATE_NOOP("Findings", "slowdown signal")),
        "reasons": ", ".join(reason_name(str(r)) for r in v.get("reasons") or []) or "?",
        "hidden": bytes_h(v.get("mem_hidden_bytes")),
        "hidden_pct": pct(v.get("hidden_frac")),
        "used": bytes_h(v.get("mem_used_bytes")),
        "mem_limit": num(v.get("limit_c")),
        # how much of the GPU worked
        "util_pct": num(v.get("util_pct")),
        "sm_active": num(v.get("sm_active_pct")),
        "tensor_active": num(v.get("tensor_active_pct")),
        "dram_active": num(v.get("dram_active_pct")),
        "power_pct": pct(v.get("power_frac")),
        "fp16_active": num(v.get("fp16_active_pct")),
    }
    if f.id in ("hidden_memory",):
        out["held"] = bytes_h(v.get("mem_procs_bytes"))
    for hook in FINDING_VALUE_HOOKS:
        out.update(hook(f))
    return out


def _held_by(v: Mapping[str, Any]) -> str:
    """Seconds per reason (and per violation counter) as "hw_thermal 4 min, ..."."""
    by = v.get("by_reason") or {}
    counters = v.get("counter_s") or {}
    parts = [f"{reason_name(str(k))} {duration(float(x))}" for k, x in dict(by).items()]
    parts += [
        f"{_COUNTER_NAMES.get(str(k), str(k))} counter {duration(float(x))}"
        for k, x in dict(counters).items()
        if float(x) > 0
    ]
    return ", ".join(parts) or "-"


def finding_sentence(finding: Finding) -> str:
    variant = finding.values.get("variant")
    text = (
        (FINDING_TEXT.get((finding.id, str(variant))) if variant else None)
        or FINDING_TEXT.get((finding.id, finding.verdict))
        or FINDING_TEXT.get((finding.id, "*"))
    )
    if text is None:
        vals = ", ".join(f"{k}={v}" for k, v in finding.values.items())
        return clean(f"{finding.id} ({finding.verdict}): {vals}")
    return _fill("Findings", text, finding_values(finding))


def verdict_label(verdict: str) -> str:
    labels = {
        "pass": QT_TRANSLATE_NOOP("Findings", "PASS"),
        "warn": QT_TRANSLATE_NOOP("Findings", "WARN"),
        "fail": QT_TRANSLATE_NOOP("Findings", "FAIL"),
        "info": QT_TRANSLATE_NOOP("Findings", "INFO"),
        "unknown": QT_TRANSLATE_NOOP("Findings", "?"),
        "unsupported": QT_TRANSLATE_NOOP("Findings", "N/A"),
    }
    text = labels.get(verdict)
    return translated("Findings", text) if text else verdict.upper()


def severity_label(severity: str) -> str:
    labels = {
        "info": QT_TRANSLATE_NOOP("Alerts", "info"),
        "warning": QT_TRANSLATE_NOOP("Alerts", "warning"),
        "critical": QT_TRANSLATE_NOOP("Alerts", "critical"),
    }
    text = labels.get(severity)
    return translated("Alerts", text) if text else severity


# --- cost summary --------------------------------------------------------------------------

COST_LINE: Final = QT_TRANSLATE_NOOP(
    "Cost",
    "{host}: {total} over {billed} at {price}/h: busy {busy} ({busy_time}), idle {idle} "
    "({idle_time}), not observed {unknown} ({unknown_time}); effective compute {effective}.",
)
COST_LINE_NO_PRICE: Final = QT_TRANSLATE_NOOP(
    "Cost",
    "{host}: {billed} observed: busy {busy_time}, idle {idle_time}, not observed "
    "{unknown_time}; effective compute {effective}. Set a price per hour to see the cost.",
)
COST_BUDGET: Final = QT_TRANSLATE_NOOP(
    "Cost", "Budget {budget}: {budget_pct} used; at this rate it runs out at {exhausted}."
)
COST_PROJECTION: Final = QT_TRANSLATE_NOOP("Cost", "In 24 h at this rate: {projection}.")


def cost_sentence(summary: Any) -> str:
    """One or two sentences for a ``gpufleet.core.cost.rental.CostSummary``."""
    s = summary
    cur = s.currency
    values = {
        "host": s.host,
        "total": money(s.total, cur),
        "billed": duration(s.billed_s),
        "price": money(s.price_per_hour, cur),
        "busy": money(s.busy, cur),
        "idle": money(s.idle, cur),
        "unknown": money(s.unknown, cur),
        "busy_time": duration(s.busy_s),
        "idle_time": duration(s.idle_s),
        "unknown_time": duration(s.unknown_s),
        "effective": pct(s.effective_ratio),
        "budget": money(s.budget, cur),
        "budget_pct": pct(s.budget_used_frac),
        "exhausted": clock_time(s.budget_exhausted_t),
        "projection": money(s.projection_24h, cur),
    }
    parts = [
        _fill("Cost", COST_LINE if s.price_per_hour is not None else COST_LINE_NO_PRICE, values)
    ]
    if s.price_per_hour is not None:
        parts.append(_fill("Cost", COST_PROJECTION, values))
    if s.budget:
        parts.append(_fill("Cost", COST_BUDGET, values))
    for a in s.advice:
        parts.append(finding_sentence(Finding(a.id, "info", None, a.values)))
    return join_sentences(parts)


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
