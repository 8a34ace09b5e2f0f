"""The sentences of the one judgment: the alerts and findings of memory held while idle,
memory growing to full, a disguised or late process, sensors an instance hides, and the
diagnosis findings written from an alert. Translated like the catalogue, whose tables these
join when the text package is loaded (its ``__init__`` imports this module)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from gpufleet.core.model.alert import Alert, alert_from_json
from gpufleet.core.model.findings import Finding
from gpufleet.core.text import alerts, catalogue, findings
from gpufleet.core.text.catalogue import (
    QT_TRANSLATE_NOOP,
    bytes_h,
    clock_time,
    duration,
    money,
    num,
    pct,
    translated,
)

_IDLE_TODO: Final = QT_TRANSLATE_NOOP(
    "Alerts",
    "Look at the job's log and its last step. If it is stuck, kill it (from the process "
    "list) and restart from its checkpoint; if you are done, stop the instance.",
)
ALERTS: Final[dict[str, tuple[str, str, str, str]]] = {
    "idle_held": (
        QT_TRANSLATE_NOOP("Alerts", "{Where} does no work but its memory is held"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has done no work for {idle} (utilization {util} %, P{pstate}, {clock} MHz, "
            "{power} W) while {procs} holds {mem_used} of {mem_total} ({mem_pct}).",
        ),
        QT_TRANSLATE_NOOP("Alerts", "That time has cost {spent} so far at {price}/h."),
        _IDLE_TODO,
    ),
    "mem_growth": (
        QT_TRANSLATE_NOOP("Alerts", "Memory of {where} will be full in {eta}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Memory used on {where} has risen steadily by {growth}/h over {fit_span} and is at "
            "{mem_used} of {mem_usable}: at this rate it is full at {full_at} (in {eta}), and "
            "the job then dies out of memory.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "A leak: tensors kept across steps (a loss summed without .item(), a growing cache "
            "or list). Save a checkpoint now, then find what grows.",
        ),
    ),
    "proc_suspect": (
        QT_TRANSLATE_NOOP("Alerts", "A process on {where} that is not your job's"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{procs} on {where} appeared {late} after your job started, from another user or "
            "outside your container.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "If you did not start it, it shares the GPU you pay for: report it to the "
            "provider. If it is yours, mark it as yours from this alert.",
        ),
    ),
}
VARIANTS: Final[dict[tuple[str, str], tuple[str, str, str, str]]] = {
    ("idle_held", "notebook"): (
        QT_TRANSLATE_NOOP("Alerts", "A notebook kernel holds {where} and does nothing"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} has done no work for {idle} while the notebook kernel {procs} holds "
            "{mem_used} of {mem_total} ({mem_pct}): a forgotten notebook.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "That time has cost {spent} so far at {price}/h."),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Shut the kernel down (or restart it) to free the GPU, and stop the instance if "
            "you are done.",
        ),
    ),
    ("idle_held", "hung"): (
        QT_TRANSLATE_NOOP("Alerts", "Job on {where} looks hung: no work, memory held"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{Where} worked until {worked} and has done no work since, for {idle} "
            "(utilization {util} %, P{pstate}, {clock} MHz, {power} W), while {procs} still "
            "holds {mem_used} of {mem_total}: a job hung in a collective (NCCL) or waiting on "
            "a dead dataloader.",
        ),
        QT_TRANSLATE_NOOP("Alerts", "That time has cost {spent} so far at {price}/h."),
        _IDLE_TODO,
    ),
    ("proc_suspect", "kernel_name"): (
        QT_TRANSLATE_NOOP("Alerts", "A process disguised as a kernel thread on {where}"),
        QT_TRANSLATE_NOOP(
            "Alerts",
            "{procs} uses {where} under a kernel thread's name: kernel threads never hold GPU "
            "memory, so this process hides what it is.",
        ),
        "",
        QT_TRANSLATE_NOOP(
            "Alerts",
            "Treat the instance as compromised: save your work elsewhere, kill the process, "
            "and report it to the provider. If it really is yours, mark it as yours.",
        ),
    ),
}
VARIANTS[("clocks_below_nominal", "reasons_hidden")] = (
    QT_TRANSLATE_NOOP("Alerts", "Clocks of {where} low, and this instance hides why"),
    QT_TRANSLATE_NOOP(
        "Alerts",
        "{Where} is busy ({util} % utilization) but its SM clock is {clock} MHz, {clock_pct} of "
        "its {clock_max} MHz maximum, for {window}. This instance does not report clock event "
        "reasons (nor, often, temperature and power): why cannot be judged here.",
    ),
    QT_TRANSLATE_NOOP(
        "Alerts",
        "About {lost_pct} of the compute you pay {price}/h for is lost: roughly {waste} an hour.",
    ),
    QT_TRANSLATE_NOOP(
        "Alerts",
        "Ask the provider what limits the clock (a host-side cap is the usual cause), or compare "
        "with an instance that reports its sensors.",
    ),
)
RULES: Final[dict[str, str]] = {
    "idle_held": QT_TRANSLATE_NOOP(
        "Rules",
        "no work (utilization and SM activity near zero, P8 or idle power, no PCIe traffic) "
        "while a process holds 10 % or more of the memory: a hung job or a forgotten "
        "notebook; after 5 min where the GPU had been working, else 15 min",
    ),
    "mem_growth": QT_TRANSLATE_NOOP(
        "Rules",
        "used memory rising steadily towards the usable total (a leak): warns with the "
        "projected time to full while it is under 2 h away",
    ),
    "proc_suspect": QT_TRANSLATE_NOOP(
        "Rules",
        "a GPU process under a kernel thread's name, or one that appeared 30 min or more after "
        "the job from another user or outside this container",
    ),
}
FINDINGS: Final[dict[tuple[str, str], str]] = {
    ("diag_alert", "*"): QT_TRANSLATE_NOOP("Findings", "At {at} the rules saw: {alert_sentence}"),
    ("diag_idle_held", "*"): QT_TRANSLATE_NOOP(
        "Findings", "From {quiet_since} the GPU was paid for and did nothing: {alert_sentence}"
    ),
    ("diag_mem_growth", "*"): QT_TRANSLATE_NOOP(
        "Findings", "Memory was running out: {alert_sentence}"
    ),
    ("diag_proc_suspect", "*"): QT_TRANSLATE_NOOP("Findings", "{alert_sentence}"),
    ("diag_oom", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where} ran out of memory: used memory had grown from {mem_start} to {mem_peak} of "
        "{mem_usable} when the work stopped at {at}. The job died of memory exhaustion (a "
        "leak or a batch too large), not of the hardware.",
    ),
    ("diag_not_judged", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: whether the clocks were held down, and why, cannot be judged here: this "
        "instance does not report {hidden}.",
    ),
    ("diag_sensors_hidden", "*"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}: this instance hides {hidden}. What needs them (heat, power limits, "
        "throttling, memory errors) cannot be judged here, and is not called normal.",
    ),
    ("diag_none", "partial"): QT_TRANSLATE_NOOP(
        "Findings",
        "Nothing in what this instance reports explains it; it does not report {hidden}, so "
        "those cannot be judged. Look at the code, the data pipeline and the checkpointing.",
    ),
    ("diag_power_limit", "changed"): QT_TRANSLATE_NOOP(
        "Findings",
        "{Where}'s power limit was changed: {limit_changes} (its default is {default} W). "
        "While it was at {limit} W its clocks averaged {clock_pct} of maximum while busy.",
    ),
}
SENSOR_NAMES: Final[dict[str, str]] = {
    "temperature": QT_TRANSLATE_NOOP("Sensors", "GPU temperature"),
    "memory_temperature": QT_TRANSLATE_NOOP("Sensors", "memory temperature"),
    "power": QT_TRANSLATE_NOOP("Sensors", "power draw"),
    "power_limit": QT_TRANSLATE_NOOP("Sensors", "power limit"),
    "clock_reasons": QT_TRANSLATE_NOOP("Sensors", "clock event reasons"),
    "ecc": QT_TRANSLATE_NOOP("Sensors", "ECC errors"),
    "nvlink": QT_TRANSLATE_NOOP("Sensors", "NVLink"),
    "processes": QT_TRANSLATE_NOOP("Sensors", "processes"),
}
_REPORTS: Final = QT_TRANSLATE_NOOP("Sensors", "Reports {reported}; hides {hidden}.")
_REPORTS_ALL: Final = QT_TRANSLATE_NOOP("Sensors", "Reports every sensor ({reported}).")
_LIMIT_CHANGE: Final = QT_TRANSLATE_NOOP("Findings", "{before} W to {after} W at {at}")
_MARKED: Final = QT_TRANSLATE_NOOP(
    "Alerts", "'{name}' is marked as yours on {host}: it is no longer flagged there."
)


def sensor_list(names: Sequence[str]) -> str:
    return ", ".join(translated("Sensors", SENSOR_NAMES.get(n, n)) for n in names) or "-"


def transparency_text(reported: Sequence[str], hidden: Sequence[str]) -> str:
    """One line on what a GPU's platform shows: the host tooltip and ``check`` say it."""
    if not hidden:
        return translated("Sensors", _REPORTS_ALL).format(reported=sensor_list(reported))
    return translated("Sensors", _REPORTS).format(
        reported=sensor_list(reported), hidden=sensor_list(hidden)
    )


_GPUS: Final = QT_TRANSLATE_NOOP("Sensors", "GPUs {gpus}")
_GPU: Final = QT_TRANSLATE_NOOP("Sensors", "GPU {gpu}")
_ON_GPUS: Final = QT_TRANSLATE_NOOP("Sensors", "{gpus}: {text}")


def _gpu_set(gpus: Sequence[int]) -> str:
    if len(gpus) == 1:
        return translated("Sensors", _GPU).format(gpu=gpus[0])
    run = list(range(gpus[0], gpus[0] + len(gpus)))
    listed = f"{gpus[0]}-{gpus[-1]}" if list(gpus) == run else ", ".join(map(str, gpus))
    return translated("Sensors", _GPUS).format(gpus=listed)


class Transparency(Protocol):
    """One GPU's sensors as ``verdicts.sensors.SensorReport`` holds them."""

    @property
    def gpu(self) -> int: ...
    @property
    def reported(self) -> tuple[str, ...]: ...
    @property
    def hidden(self) -> tuple[str, ...]: ...


def transparency_lines(reports: Sequence[Transparency]) -> list[str]:
    """What the instance reports and hides, one line per set of GPUs that report alike
    ("GPUs 0-7: Reports ...; hides ..."): the host tooltip, ``check`` and the bundle."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[int]] = {}
    for r in reports:
        groups.setdefault((r.reported, r.hidden), []).append(r.gpu)
    return [
        translated("Sensors", _ON_GPUS).format(
            gpus=_gpu_set(gpus), text=transparency_text(reported, hidden)
        )
        for (reported, hidden), gpus in groups.items()
    ]


def marked_text(host: str, name: str) -> str:
    return translated("Alerts", _MARKED).format(host=host, name=name)


def _variant(alert: Alert) -> str | None:
    v: Mapping[str, Any] = alert.evidence.get("values") or {}
    if alert.condition == "idle_held" and v.get("kind") in ("notebook", "hung"):
        return str(v["kind"])
    if alert.condition == "clocks_below_nominal" and v.get("reasons_reported") is False:
        return "reasons_hidden"
    if alert.condition == "proc_suspect" and v.get("why") == "kernel_name":
        return "kernel_name"
    return None


def _alert_values(alert: Alert) -> dict[str, Any]:
    if alert.condition not in ALERTS:
        return {}
    v: Mapping[str, Any] = alert.evidence.get("values") or {}
    cur = str(alert.evidence.get("currency") or "USD")
    first = min(
        (p.get("first_seen_t") or alert.started_t for p in v.get("processes") or []),
        default=alert.started_t,
    )
    return {
        "idle": duration(v.get("idle_s")),
        "mem_pct": pct(v.get("used_frac")),
        "mem_usable": bytes_h(v.get("mem_usable_bytes")),
        "spent": money(v.get("cost_so_far"), cur),
        "worked": clock_time(v.get("worked_t")),
        "quiet_since": clock_time(v.get("quiet_since_t")),
        "growth": bytes_h(None if v.get("growth_bps") is None else float(v["growth_bps"]) * 3600),
        "fit_span": duration(v.get("fit_span_s")),
        "eta": duration(v.get("eta_s")),
        "full_at": clock_time(v.get("full_at_t")),
        "late": duration(None if v.get("job_t") is None else first - float(v["job_t"])),
    }


def _limit_changes(changes: Any) -> str:
    if not isinstance(changes, (list, tuple)):
        return "?"
    return "; ".join(
        translated("Findings", _LIMIT_CHANGE).format(
            before=num(c.get("from_w")), after=num(c.get("to_w")), at=clock_time(c.get("at_t"))
        )
        for c in changes
        if isinstance(c, Mapping)
    )


def _finding_values(f: Finding) -> dict[str, Any]:
    v = f.values
    out: dict[str, Any] = {}
    if f.id == "diag_oom":
        out.update(
            mem_start=bytes_h(v.get("mem_start_bytes")),
            mem_peak=bytes_h(v.get("mem_peak_bytes")),
            mem_usable=bytes_h(v.get("mem_usable_bytes")),
        )
    if f.id in ("diag_not_judged", "diag_sensors_hidden", "diag_none"):
        out["hidden"] = sensor_list(list(v.get("hidden") or []))
    if f.id == "diag_power_limit":
        out["limit_changes"] = _limit_changes(v.get("changes"))
    raw = v.get("alert")
    if isinstance(raw, Mapping):
        try:
            alert = alert_from_json(raw)
        except ValueError:
            return out
        values = catalogue.alert_values(alert)
        out.update({k: x for k, x in values.items() if k not in ("where", "Where")})
        out["alert_sentence"] = catalogue.alert_sentence(alert)
        out["alert_title"] = catalogue.alert_title(alert)
    return out


catalogue.ALERT_TEXT.update(ALERTS)
catalogue.ALERT_VARIANTS.update(VARIANTS)
catalogue.RULE_MEANINGS.update(RULES)
catalogue.FINDING_TEXT.update(FINDINGS)
alerts.ALERT_VARIANT_HOOKS.append(_variant)
alerts.ALERT_VALUE_HOOKS.append(_alert_values)
findings.FINDING_VALUE_HOOKS.append(_finding_values)
