"""Per-host and per-GPU summaries for the fleet list, the overview, the cards and the tray
(plain data computed from the live buffers, the session state and the active alerts).

The state is always one of theme.OK / WAIT / WARN / CRIT / DOWN, and comes with a one-line
reason, so that the list can show "✖ reconnecting 12 s" or "▲ thermal throttling GPU 3".
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.text.judgment import transparency_lines
from gpufleet.core.text.sampler_cost import sampler_cost_text
from gpufleet.core.verdicts.sensors import sensor_reports
from gpufleet.core.wire.gpu_kind import Slice, mig_slice
from gpufleet.core.wire.messages import Hello, Procs, Sample
from gpufleet.ui.i18n import state_name
from gpufleet.ui.widgets.theme import CRIT, DOWN, LIST_RANK, OK, SEVERITY_RANK, WAIT, WARN

# lupdate extracts translate("Context", "text") calls.
translate = QCoreApplication.translate


# A streaming host whose newest sample is older than this many intervals counts as down.
STALE_INTERVALS = 10


@dataclass(frozen=True)
class GpuSummary:
    gpu: int
    name: str
    util: float | None
    mem_used: float | None
    mem_total: float | None
    sm: float | None
    sm_max: float | None
    temp: float | None
    temp_slowdown: float | None
    power: float | None
    power_cap: float | None
    pstate: float | None
    reasons: tuple[str, ...]
    state: str
    note: str
    # GPM (Hopper and newer): how much of the GPU works; None where the GPU has no GPM.
    sm_active: float | None = None
    tensor: float | None = None
    mig: Slice | None = None  # a MIG slice of GPU mig.parent, listed under it

    @property
    def mem_pct(self) -> float | None:
        if self.mem_used is None or not self.mem_total:
            return None
        return 100.0 * self.mem_used / self.mem_total


@dataclass(frozen=True)
class HostSummary:
    host: str
    state: str
    reason: str
    session_state: str
    model: str
    gpus: tuple[GpuSummary, ...]
    util: float | None
    hottest: float | None
    price: float | None
    currency: str
    last_t: float | None
    host_reason: str = ""  # a reason about the whole host (down, idle, a host-level alert)
    sampler_cost: str = ""  # what the sampler costs the host's CPU, and what it reads less often
    bench: str = ""  # its latest arrival benchmark in one line (or how to run one)
    sensors: str = ""  # what the instance reports and hides (one line per set of GPUs alike)
    provider: str = ""  # its provider's API changed under gpufleet (until a call succeeds)

    @property
    def rank(self) -> int:
        return SEVERITY_RANK.get(self.state, 0)

    @property
    def order(self) -> int:
        """Place in a worst-first list: critical, warning, unreachable, waiting, healthy."""
        return LIST_RANK.get(self.state, 0)


def _f(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) else None


def _worse(a: str, b: str) -> str:
    return a if SEVERITY_RANK[a] >= SEVERITY_RANK[b] else b


# The sample columns a GPU summary reads, in this order (see _summary_values).
_SUMMARY_COLUMNS = (
    "clock_reasons",
    "lost",
    "util_gpu_pct",
    "mem_used_bytes",
    "sm_clock_mhz",
    "temp_gpu_c",
    "power_w",
    "power_limit_w",
    "pstate",
    "sm_active_pct",
    "tensor_active_pct",
)
_positions: dict[tuple[str, ...], tuple[int | None, ...]] = {}
# host -> (hello, sample, summaries): the fleet summaries are recomputed once a second for
# every host; a host whose newest sample did not change (down, paused) costs nothing.
_last: dict[str, tuple[Any, Any, tuple[GpuSummary, ...]]] = {}


def _summary_values(row: tuple[Any, ...] | None, pos: tuple[int | None, ...]) -> list[float | None]:
    if row is None:
        return [None] * len(pos)
    n = len(row)
    return [_f(row[p]) if p is not None and p < n else None for p in pos]


def summarize_gpus(host: str, live: LiveBuffers) -> tuple[GpuSummary, ...]:
    hello = live.hello(host)
    s = live.latest(host)
    if hello is None:
        return ()
    hit = _last.get(host)
    if hit is not None and hit[0] is hello and hit[1] is s:
        return hit[2]
    out = []
    pos: tuple[int | None, ...] = (None,) * len(_SUMMARY_COLUMNS)
    rows: dict[Any, tuple[Any, ...]] = {}
    if s is not None:
        cols = tuple(s.columns)
        cached = _positions.get(cols)
        if cached is None:
            where = {c: i + 1 for i, c in enumerate(cols)}
            cached = _positions[cols] = tuple(where.get(c) for c in _SUMMARY_COLUMNS)
        pos = cached
        rows = {r[0]: r for r in s.rows}
    for g in hello.gpus:
        mask, lost, util, mem_used, sm, temp, power, cap, pstate, sm_act, tensor = _summary_values(
            rows.get(g.index), pos
        )
        labels = tuple(protocol.reason_labels(int(mask))) if mask else ()
        state, note = OK, ""
        bits = int(mask or 0)
        if lost:
            state, note = CRIT, translate("Summary", "GPU lost")
        elif bits & protocol.REASON_THERMAL_MASK:
            state, note = WARN, translate("Summary", "thermal throttling")
        elif bits & (0x08 | 0x80):
            state, note = WARN, translate("Summary", "HW slowdown")
        elif bits & 0x04 and (util or 0) > 50:
            state, note = OK, translate("Summary", "at power cap")
        out.append(
            GpuSummary(
                gpu=g.index,
                name=g.name,
                util=util,
                mem_used=mem_used,
                mem_total=_f(g.nominal_value("mem_total_bytes")),
                sm=sm,
                sm_max=_f(g.nominal_value("sm_clock_max_mhz")),
                temp=temp,
                temp_slowdown=_f(g.nominal_value("temp_slowdown_c")),
                power=power,
                power_cap=cap or _f(g.nominal_value("power_enforced_w")),
                pstate=pstate,
                reasons=labels,
                state=state,
                note=note,
                sm_active=sm_act,
                tensor=tensor,
                mig=mig_slice(g),
            )
        )
    res = tuple(out)
    _last[host] = (hello, s, res)
    return res


def model_text(gpus: Sequence[GpuSummary]) -> str:
    if not gpus:
        return "—"
    cards = [g for g in gpus if g.mig is None]  # a MIG slice is part of its card
    names = {short_name(g.name) for g in cards}
    name = names.pop() if len(names) == 1 else translate("Summary", "mixed")
    slices = len(gpus) - len(cards)
    extra = translate("Summary", " ({n} MIG slices)").format(n=slices) if slices else ""
    return f"{len(cards)}× {name}{extra}"


def short_name(name: str) -> str:
    """ "NVIDIA H100 80GB HBM3" → "H100", "NVIDIA A100-SXM4-40GB" → "A100",
    "NVIDIA GeForce RTX 4090" → "RTX 4090": enough to tell rentals apart in a narrow list."""
    words = name.replace("NVIDIA ", "").replace("GeForce ", "").split()
    if not words:
        return "GPU"
    if words[0] in ("RTX", "GTX", "Tesla", "Quadro") and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0].split("-")[0]


# Within one severity, what is worse for the rental (the reason the fleet list names): a GPU
# gone or broken before a link or a setting, heat before a cap. Conditions not listed: 0.
_GRAVITY: dict[str, int] = {
    "gpu_lost": 9,
    "xid": 8,
    "ecc_dbe_increase": 8,
    "provider_action": 7,
    "watchdog": 7,
    "miner_process": 6,
    "mem_temp_near_max": 5,
    "hw_slowdown": 4,
    "temp_near_slowdown": 3,
    "nvlink_down": 2,
}


# What joins a leading host name to the rest of a title: "a100-eval idle…", "a100-eval: …",
# zh_CN's "h100-a 的 GPU 5 的显存…" ("of").
_JOINERS = " :·,，：的"


def without_host_suffix(title: str, host: str) -> str:
    """``title`` without its "… of HOST" / "… on HOST" ("GPU 2 of a100-ecc lost" → "GPU 2
    lost"), where the line names the host already."""
    return re.sub(rf"\s+(?:of|on)\s+{re.escape(host)}(?=$|[\s:,.;)])", "", title, flags=re.I)


def _without_host(title: str, host: str) -> str:
    """``title`` without the host's name: the row already names the host, and in a narrow
    column the reason was cut to it (zh_CN's titles open with it more often)."""
    if not host:
        return title
    if title.lower().startswith(host.lower()):
        rest = title[len(host) :].lstrip(_JOINERS)
        if rest:
            return rest[0].upper() + rest[1:] if rest[0].isascii() else rest
    return without_host_suffix(title, host)


def _worst_alert(alerts: Sequence[Any]) -> tuple[str, Any] | None:
    """(state, alert) of the worst warning or critical alert: by severity, then by what it
    means (``_GRAVITY``; a throttle before other warnings), then the oldest."""
    best: tuple[tuple[int, int, float], str, Any] | None = None
    for a in alerts:
        sev = CRIT if a.severity == "critical" else WARN if a.severity == "warning" else OK
        if sev == OK:
            continue
        throttle = "thrott" in a.rule_id or "thermal" in a.rule_id
        gravity = _GRAVITY.get(str(getattr(a, "condition", "") or ""), 3 if throttle else 0)
        key = (SEVERITY_RANK[sev], gravity, -float(getattr(a, "started_t", 0.0) or 0.0))
        if best is None or key > best[0]:
            best = (key, sev, a)
    return None if best is None else (best[1], best[2])


def summarize_host(
    cfg: HostConfig,
    live: LiveBuffers,
    session_state: str,
    session_reason: str | None,
    alerts: Sequence[Any] = (),
    titles: Mapping[str, str] | None = None,
    now: float | None = None,
) -> HostSummary:
    """``alerts``: firing alerts of this host (objects with severity, gpu, id); ``titles``:
    alert id → short title for the reason column."""
    now = time.time() if now is None else now
    gpus = summarize_gpus(cfg.name, live)
    latest = live.latest(cfg.name)
    hello = live.hello(cfg.name)
    last_t = latest.t if latest is not None else None
    state, reason = OK, ""
    if session_state in ("no_gpu", "nvml_failed"):
        # Reached, but nothing to monitor: billed all the same, so it is critical, with its
        # own words and advice (not "unreachable: check your network").
        state, reason = CRIT, session_reason or state_name(session_state)
    elif session_state in ("connecting", "deploying"):
        state, reason = WAIT, state_name(session_state)
    elif session_state in ("reconnecting", "failed", "stopped"):
        state, reason = DOWN, session_reason or state_name(session_state)
        if session_state == "reconnecting":
            reason = (
                translate("Summary", "reconnecting: {reason}").format(reason=session_reason)
                if session_reason
                else state_name("reconnecting")
            )
    elif latest is None:
        state, reason = WAIT, translate("Summary", "waiting for data")
    elif (
        hello is not None
        and now - latest.t > STALE_INTERVALS * max(1.0, hello.interval_s)
        # Sim streams under --no-wait carry simulated times; only wall-clock streams go stale.
        and abs(now - latest.t) < 3600
    ):
        state, reason = (
            DOWN,
            translate("Summary", "no data for {n} s").format(n=f"{now - latest.t:.0f}"),
        )
    if state in (OK, WAIT):
        for g in gpus:
            if SEVERITY_RANK[g.state] > SEVERITY_RANK[state]:
                state, reason = (
                    g.state,
                    translate("Summary", "{note} GPU {n}").format(note=g.note, n=g.gpu),
                )
    worst_alert = _worst_alert(alerts)
    if worst_alert is not None and state != DOWN:
        sev, a = worst_alert
        state = _worse(state, sev)
        title = _without_host((titles or {}).get(a.id) or a.rule_id.replace("_", " "), cfg.name)
        reason = title + (
            translate("Summary", " GPU {n}").format(n=a.gpu)
            if a.gpu is not None and "GPU" not in title
            else ""
        )
    # Alerts about one GPU mark that GPU (the overview shows them on its row only).
    per_gpu: dict[int, tuple[str, str]] = {}
    host_level = ""
    for a in alerts:
        sev = CRIT if a.severity == "critical" else WARN if a.severity == "warning" else OK
        title = _without_host((titles or {}).get(a.id) or a.rule_id.replace("_", " "), cfg.name)
        if a.gpu is None:
            if sev != OK and not host_level:
                host_level = title
            continue
        old = per_gpu.get(a.gpu)
        if old is None or SEVERITY_RANK[sev] > SEVERITY_RANK[old[0]]:
            per_gpu[a.gpu] = (sev, title)
    gpus = tuple(
        replace(g, state=_worse(g.state, per_gpu[g.gpu][0]), note=per_gpu[g.gpu][1])
        if g.gpu in per_gpu and SEVERITY_RANK[per_gpu[g.gpu][0]] >= SEVERITY_RANK[g.state]
        else g
        for g in gpus
    )
    utils = [g.util for g in gpus if g.util is not None]
    temps = [g.temp for g in gpus if g.temp is not None]
    if state == OK and gpus and all((g.util or 0) < 5 and (g.mem_pct or 0) < 10 for g in gpus):
        reason = state_name("idle")
    return HostSummary(
        host=cfg.name,
        state=state,
        reason=reason,
        session_state=session_state,
        model=model_text(gpus),
        gpus=gpus,
        util=sum(utils) / len(utils) if utils else None,
        hottest=max(temps) if temps else None,
        price=cfg.price_per_hour,
        currency=cfg.currency,
        last_t=last_t,
        host_reason=(
            host_level
            if state != DOWN and session_state not in ("no_gpu", "nvml_failed")
            else reason
        ),
        sampler_cost=sampler_cost_text(hello.raw if hello is not None else None),
        sensors=sensors_text(hello, latest, live.procs(cfg.name)),
    )


def sensors_text(hello: Hello | None, latest: Sample | None, procs: Procs | None) -> str:
    """What the instance reports and hides, read from the latest sample and process list
    (the slow-tier columns are sent with their last value, so one sample tells)."""
    if hello is None or latest is None:
        return ""
    reports = sensor_reports(hello, [latest], [procs] if procs is not None else [])
    return "\n".join(transparency_lines(reports))


CURRENCY_SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£", "CNY": "¥", "JPY": "¥"}


def money(x: float | None, currency: str, digits: int = 2) -> str:
    if x is None:
        return "—"
    sym = CURRENCY_SYMBOL.get(currency)
    return f"{sym}{x:,.{digits}f}" if sym else f"{x:,.{digits}f} {currency}"


def state_advice(session_state: str) -> str:
    """What to do about a host in a state that is not a network problem ("" otherwise)."""
    if session_state == "no_gpu":
        return translate(
            "Summary",
            "The machine answers but has no usable NVIDIA GPU (no driver loaded, or none "
            "the driver sees): it is billed for nothing. Ask the provider, or move to "
            "another instance.",
        )
    if session_state == "nvml_failed":
        return translate(
            "Summary",
            "The NVIDIA driver is there but NVML does not start. Run nvidia-smi on the host: "
            "a driver/library version mismatch needs a reboot; no permission needs root.",
        )
    return ""
