"""One judgment of a window: the alerts, the diagnosis and the cost, from one evaluation.

The rules and the diagnosis used to be two judges of the same data that could disagree: an
alert on PCIe replays beside a diagnosis calling PCIe normal; a power limit lowered mid-run
warned about while the diagnosis quoted the average of the two limits. ``judge`` runs the
window through the rule engine once and writes everything from that run:

- every alert that fired in the window appears in the findings, as the diagnosis finding
  that says the same thing (on the same GPU) or, where the diagnosis has none, as a finding
  made from the alert itself (``diag_alert``, or the new conditions' own findings);
- nothing a firing alert concerns is called normal: ``diag_none`` only stands when no
  warning or critical alert fired and no finding warns;
- a finding that needs a sensor this instance hides is replaced by "cannot be judged here"
  (``diag_not_judged``), and the hidden sensors are listed per GPU (``sensors``);
- the cost is the engine's tracker, which counts as idle the time the ``idle_held`` rule
  found paid for nothing (``cost.held_idle``: the live Cost tab counts it the same way).

``Judgment`` is plain frozen data so that the comparison of two runs (``compare``), the CLI
(``diagnose``, ``replay``) and the evidence bundle read the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gpufleet.core.alerts.rules import Rule, RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.model.alert import FIRING, Alert
from gpufleet.core.model.findings import FAIL, INFO, WARN, Finding
from gpufleet.core.verdicts.diagnosis import diagnose
from gpufleet.core.verdicts.sensors import NEEDED_BY, SensorReport, sensor_reports
from gpufleet.core.verdicts.window import RunWindow
from gpufleet.core.wire.messages import Message

# The diagnosis findings that state what an alert of each condition states.
SAYS_THE_SAME: Final[Mapping[str, tuple[str, ...]]] = {
    "thermal_throttle": ("diag_thermal",),
    "hw_slowdown": ("diag_hw_slowdown",),
    "clock_setting_low": ("diag_clock_setting",),
    "power_limit_low": ("diag_power_limit",),
    "power_cap_active": ("diag_power_cap", "diag_power_limit"),
    "clocks_below_nominal": ("diag_clocks_unexplained",),
    "temp_near_slowdown": ("diag_temperature", "diag_thermal"),
    "mem_temp_near_max": ("diag_mem_temp",),
    "mem_temp_high": ("diag_mem_temp",),
    "mem_unaccounted": ("diag_hidden_memory",),
    "pcie_downtrained": ("diag_pcie",),
    "nvlink_down": ("diag_nvlink",),
    "xid": ("diag_xid",),
    "gpu_lost": ("diag_lost",),
    "ecc_dbe_increase": ("diag_ecc",),
}
# The new conditions' findings, written from the alert's evidence.
OWN_FINDING: Final[Mapping[str, str]] = {
    "idle_held": "diag_idle_held",
    "mem_growth": "diag_mem_growth",
    "proc_suspect": "diag_proc_suspect",
}
VERDICT_OF: Final = {"critical": FAIL, "warning": WARN, "info": INFO}
# What a window's verdict would call "normal": it cannot stand beside a firing alert.
NORMAL_IDS: Final = frozenset({"diag_none"})


@dataclass(frozen=True)
class Judgment:
    """One host's window judged once. ``alerts``: every alert state change in the window
    (firing and resolved, in order); ``findings``: the diagnosis, consistent with them;
    ``cost``: the breakdown (None without samples); ``sensors``: per GPU, what the
    instance reported and hid."""

    host: str
    t0: float
    t1: float
    alerts: tuple[Alert, ...]
    findings: tuple[Finding, ...]
    cost: CostSummary | None
    sensors: tuple[SensorReport, ...]
    samples: int = 0
    bad_lines: int = 0

    def fired(self) -> list[Alert]:
        """The alerts that fired in the window (one per occurrence)."""
        return [a for a in self.alerts if a.state == FIRING]

    def findings_for(self, alert: Alert) -> list[Finding]:
        """The findings that say what this alert says."""
        return [f for f in self.findings if concerns(f, alert)]


def concerns(f: Finding, alert: Alert) -> bool:
    """True when finding ``f`` states what ``alert`` fired on (same GPU, or host-wide)."""
    if alert.id in (f.values.get("alert_ids") or ()):
        return True
    same_gpu = f.gpu is None or alert.gpu is None or f.gpu == alert.gpu
    return same_gpu and f.id in SAYS_THE_SAME.get(alert.condition, ())


def feed_order(window: RunWindow) -> list[Message]:
    """The window's messages in time order with each later hello after the messages it
    followed (a sampler restart is then seen as one)."""
    keyed: list[tuple[float, int, Message]] = [
        (float(getattr(m, "t", 0.0)), 0, m) for m in window.messages()[1:]
    ]
    keyed.extend((t, 1, h) for t, h in window.hellos[1:])
    keyed.sort(key=lambda x: (x[0], x[1]))
    return [window.hello, *(m for _t, _k, m in keyed)]


def judge(
    window: RunWindow,
    host: HostConfig,
    rules: Sequence[Rule] | None = None,
    stream: Iterable[Message] | None = None,
) -> Judgment:
    """The one judgment of ``window`` for ``host`` (its price, allow-list, rule overrides).
    ``rules`` defaults to the shipped rules with the user's rules.toml (``RulesError`` when
    that file is broken). ``stream``: the messages as they arrived, where the caller has
    them (a replay: the daemon's notes included), fed to the rules instead of the window's."""
    engine = RuleEngine(list(rules) if rules is not None else load_rules(), [host])
    alerts: list[Alert] = []
    for m in stream if stream is not None else feed_order(window):
        alerts.extend(engine.feed(host.name, m))
    cost = engine.cost.summary(host.name) if window.samples else None
    sensors = sensor_reports(window.hello, window.samples, window.procs)
    found = diagnose(
        window.hello, window.samples, window.procs, window.events, window.t0, window.t1
    )
    findings = reconcile(found, alerts, sensors)
    return Judgment(
        host=host.name,
        t0=window.t0,
        t1=window.t1,
        alerts=tuple(alerts),
        findings=tuple(findings),
        cost=cost,
        sensors=sensors,
        samples=len(window.samples),
        bad_lines=window.bad_lines,
    )


def _alert_finding(alert: Alert) -> Finding:
    """A finding that says what an alert said, from its evidence."""
    ev = alert.evidence
    fid = OWN_FINDING.get(alert.condition, "diag_alert")
    values: dict[str, Any] = dict(ev.get("values") or {})
    values.update(
        alert_ids=[alert.id],
        alert=alert.to_json(),
        rule_id=alert.rule_id,
        condition=alert.condition,
        at_t=alert.started_t,
    )
    verdict = VERDICT_OF.get(alert.severity, WARN)
    since = ev.get("since_t")
    t0 = float(since) if isinstance(since, (int, float)) else alert.started_t
    return Finding(fid, verdict, alert.gpu, values, t0, alert.started_t)


def _attach(f: Finding, alert: Alert) -> Finding:
    ids = [*(f.values.get("alert_ids") or ()), alert.id]
    return Finding(f.id, f.verdict, f.gpu, {**f.values, "alert_ids": ids}, f.t0, f.t1)


def _not_judged(f: Finding, sensors: Mapping[int, SensorReport]) -> Finding | None:
    """ "Cannot be judged here" in place of a finding that needs a hidden sensor."""
    rep = sensors.get(f.gpu) if f.gpu is not None else None
    if rep is None or f.id not in rep.cannot_judge():
        return None
    hidden = [s for s in rep.hidden if f.id in NEEDED_BY.get(s, ())]
    return Finding("diag_not_judged", INFO, f.gpu, {"of": f.id, "hidden": hidden}, f.t0, f.t1)


def reconcile(
    found: Sequence[Finding], alerts: Sequence[Alert], sensors: Sequence[SensorReport]
) -> list[Finding]:
    """The diagnosis made consistent with the alerts and the sensors (see the module)."""
    by_gpu = {r.gpu: r for r in sensors}
    # Unexplained clocks where the reasons are hidden: not "no reason", but not judged.
    out = [
        (_not_judged(f, by_gpu) if f.id == "diag_clocks_unexplained" else None) or f for f in found
    ]
    for a in alerts:
        if a.state != FIRING:
            continue
        k = next((i for i, f in enumerate(out) if concerns(f, a)), None)
        if k is None:
            out.append(_alert_finding(a))
        else:
            out[k] = _attach(out[k], a)
    warned = any(f.verdict in (WARN, FAIL) for f in out) or any(
        a.state == FIRING and a.severity in ("warning", "critical") for a in alerts
    )
    if warned:
        out = [f for f in out if f.id not in NORMAL_IDS]
    hidden = sorted({s for r in sensors for s in r.hidden})
    if hidden:
        # "Look normal" cannot cover what was not reported: say what was not looked at.
        out = [
            Finding(f.id, f.verdict, None, {"variant": "partial", "hidden": hidden}, f.t0, f.t1)
            if f.id == "diag_none"
            else f
            for f in out
        ]
    out.extend(
        Finding("diag_sensors_hidden", INFO, r.gpu, {"hidden": list(r.hidden)})
        for r in sensors
        if r.hidden
    )
    return out
