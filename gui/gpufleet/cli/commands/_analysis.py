"""Shared by ``replay`` and ``diagnose``: run messages through the rules, cost and diagnosis,
and print the results as text (one line per alert) or JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from gpufleet.cli import argtypes
from gpufleet.cli.errors import EXIT_FAILURE, CliError
from gpufleet.core.alerts.rules import RulesError, load_rules
from gpufleet.core.config import paths
from gpufleet.core.config.configfile import ConfigError, load_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostSummary
from gpufleet.core.model.alert import Alert
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import (
    alert_sentence,
    alert_title,
    cost_sentence,
    finding_sentence,
    severity_label,
    where,
)
from gpufleet.core.text.judgment import transparency_text
from gpufleet.core.verdicts.judgment import Judgment, judge
from gpufleet.core.verdicts.sensors import SensorReport
from gpufleet.core.verdicts.window import WindowError, from_messages
from gpufleet.core.wire.messages import Message


@dataclass
class Analysis:
    host: str
    alerts: list[Alert] = field(default_factory=list)
    cost: CostSummary | None = None
    diagnosis: list[Finding] = field(default_factory=list)
    first_t: float | None = None
    last_t: float | None = None
    samples: int = 0
    bad_lines: int = 0
    last_error: str | None = None
    judgment: Judgment | None = None
    sensors: list[SensorReport] = field(default_factory=list)


def host_config(
    args: argparse.Namespace, default_name: str, base: HostConfig | None = None
) -> HostConfig:
    """The host's config (price, allow-list, rule overrides) when it is configured (or
    ``base``: a demo host's), with the command line's --price-per-hour / --currency /
    --budget applied."""
    name = args.host or default_name
    host: HostConfig | None = base
    try:
        host = host or load_config().host(name)
    except ConfigError as e:  # a file that cannot be used: 1, as docs/cli.md says
        raise CliError(str(e), EXIT_FAILURE) from None
    host = host or HostConfig(name=name)
    changes: dict[str, Any] = {}
    if getattr(args, "price_per_hour", None) is not None:
        changes["price_per_hour"] = args.price_per_hour
    if getattr(args, "currency", None):
        changes["currency"] = args.currency
    if getattr(args, "budget", None) is not None:
        changes["budget"] = args.budget
    return replace(host, **changes) if changes else host


def add_cost_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--price-per-hour",
        type=argtypes.non_negative,
        metavar="P",
        help="the host's price per hour",
    )
    p.add_argument("--currency", metavar="CUR", help="currency of the price (default USD)")
    p.add_argument("--budget", type=argtypes.non_negative, metavar="B", help="budget for the host")
    p.add_argument("--format", choices=("text", "json"), default="text")


def analyse(
    host: HostConfig, msgs: Iterable[Message], t0: float | None = None, t1: float | None = None
) -> Analysis:
    """The one judgment (``verdicts.judgment``) of the messages' window: its alerts, cost and
    diagnosis. A stream without a hello or samples gives an empty analysis (the caller says
    why)."""
    try:
        rules = load_rules(user if (user := paths.rules_file()).exists() else None)
    except RulesError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    res = Analysis(host=host.name)
    stream = list(msgs)
    try:
        window = from_messages(host.name, stream, t0, t1)
    except WindowError:
        return res
    j = judge(window, host, rules, stream)
    res.judgment = j
    res.alerts = list(j.alerts)
    res.cost = j.cost
    res.diagnosis = list(j.findings)
    res.samples = j.samples
    res.first_t, res.last_t = window.samples[0].t, window.samples[-1].t
    res.sensors = list(j.sensors)
    return res


def _hms(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _rel(t: float, first: float | None) -> str:
    if first is None:
        return ""
    return f"+{t - first:.0f}s"


def print_text(res: Analysis, out: Any = None) -> None:
    stream = out or sys.stdout

    def p(text: str = "") -> None:
        print(text, file=stream)

    span = ""
    if res.first_t is not None and res.last_t is not None:
        span = f" from {_hms(res.first_t)} to {_hms(res.last_t)}"
    p(f"{res.host}: {res.samples} samples{span}")
    if res.bad_lines:
        p(f"{res.bad_lines} bad line(s) skipped (last: {res.last_error})")
    p()
    p(f"Alerts ({sum(1 for a in res.alerts if a.state == 'firing')} fired):")
    if not res.alerts:
        p("  none")
    for a in res.alerts:
        t = a.started_t if a.state == "firing" else (a.ended_t or a.started_t)
        state = "FIRING  " if a.state == "firing" else "RESOLVED"
        p(
            f"  {_hms(t)} {_rel(t, res.first_t):>8} {state} {severity_label(a.severity):8} "
            f"{a.rule_id} [{where(a.gpu)}]: {alert_title(a)}"
        )
    p()
    p("Cost:")
    if res.cost is not None:
        p(f"  {cost_sentence(res.cost)}")
    if any(r.hidden for r in res.sensors):
        p()
        p("Sensors:")
        for r in res.sensors:
            p(f"  [{where(r.gpu)}] {transparency_text(r.reported, r.hidden)}")
    p()
    p("Diagnosis:")
    for f in res.diagnosis:
        p(f"  [{f.verdict.upper()}] {finding_sentence(f)}")


def as_json(res: Analysis) -> dict[str, Any]:
    alerts = []
    for a in res.alerts:
        d = a.to_json()
        t = a.started_t if a.state == "firing" else (a.ended_t or a.started_t)
        d["t"] = t
        d["t_rel_s"] = None if res.first_t is None else round(t - res.first_t, 3)
        d["title"] = alert_title(a)
        d["sentence"] = alert_sentence(a)
        alerts.append(d)
    cost = None
    if res.cost is not None:
        cost = res.cost.to_json()
        cost["sentence"] = cost_sentence(res.cost)
    return {
        "host": res.host,
        "samples": res.samples,
        "first_t": res.first_t,
        "last_t": res.last_t,
        "bad_lines": res.bad_lines,
        "last_error": res.last_error,
        "alerts": alerts,
        "cost": cost,
        "diagnosis": [{**f.to_json(), "sentence": finding_sentence(f)} for f in res.diagnosis],
        "sensors": [
            {"gpu": r.gpu, "reported": list(r.reported), "hidden": list(r.hidden)}
            for r in res.sensors
        ],
    }


def print_json(res: Analysis) -> None:
    json.dump(as_json(res), sys.stdout, indent=1, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
