"""The evidence bundle: one zip with everything about a host over a time window.

``metrics.csv`` (every sample of every GPU), ``plots/*.png`` (rendered by the UI layer, passed
in as ``render_plots`` so this module stays Qt-free), ``inventory.json`` (the hello),
``health_check.json`` (the last check facts, with verdicts when the health rules exist),
``alerts.json``, ``events.json``, ``kills.json`` (from the store and the audit log),
``actions.json`` (rule and provider actions), ``watchdog.json`` (the instance watchdog's
events), ``processes.json`` and ``summary.txt``: a
short text of what the data shows (the diagnosis engine's findings when it is available,
and always per-GPU min / mean / max, time held by throttling, Xid and ECC events). The zip
is private (0600) wherever the user puts it: it holds command lines.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from gpufleet_sampler import protocol

from gpufleet.core.alerts import throttle
from gpufleet.core.alerts.throttle import ThrottleShare, throttled_share
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history import bench_results
from gpufleet.core.history.export import export_csv
from gpufleet.core.history.store import Store, Window
from gpufleet.core.history.timeparse import format_utc
from gpufleet.core.model.alert import alert_from_json
from gpufleet.core.text import catalogue
from gpufleet.core.text.judgment import transparency_lines
from gpufleet.core.text.sanitize import clean, clean_text
from gpufleet.core.verdicts import bundle_records, health
from gpufleet.core.verdicts.judgment import judge
from gpufleet.core.verdicts.window import WindowError, from_store
from gpufleet.core.wire.messages import Hello

# What the plots show: every GPU's series of these metrics.
PLOT_METRICS = (
    "sm_clock_mhz",
    "clock_reasons",
    "temp_gpu_c",
    "temp_mem_c",
    "power_w",
    "power_limit_w",
    "mem_used_bytes",
    "pcie_tx_bps",
    "pcie_rx_bps",
    "nvlink_tx_bps",
    "nvlink_rx_bps",
)
# (metric, label, scale, unit) of the summary table.
SUMMARY_METRICS = (
    ("util_gpu_pct", "utilization", 1.0, "%"),
    ("sm_clock_mhz", "SM clock", 1.0, "MHz"),
    ("temp_gpu_c", "GPU temperature", 1.0, "°C"),
    ("temp_mem_c", "memory temperature", 1.0, "°C"),
    ("power_w", "power", 1.0, "W"),
    ("mem_used_bytes", "memory used", 2.0**-30, "GiB"),
    ("pcie_gen", "PCIe generation", 1.0, ""),
)
THROTTLE_MASK = throttle.THROTTLE_MASK


@dataclass(frozen=True)
class PlotData:
    """What the UI needs to draw the evidence plots (plain data, no Qt)."""

    host: str
    t0: float
    t1: float
    hello: Hello | None
    series: Mapping[tuple[int, str], Window]  # (gpu, metric) -> points


RenderPlots = Callable[[PlotData], Mapping[str, bytes]]


@dataclass
class BundleReport:
    path: Path
    rows: int
    parts: list[str] = field(default_factory=list)
    plot_error: str | None = None


def plot_data(store: Store, host: str, t0: float, t1: float, max_points: int = 1500) -> PlotData:
    series = {
        (gpu, m): store.query_window(host, gpu, m, t0, t1, max_points=max_points)
        for gpu in store.gpus(host)
        for m in PLOT_METRICS
    }
    return PlotData(host, t0, t1, store.hello(host, at=t1), series)


def _json(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2, default=str)


def gpu_throttle(store: Store, host: str, gpu: int, t0: float, t1: float) -> ThrottleShare | None:
    """The throttled share of one GPU's busy time over [t0, t1]: the same computation as
    the diagnosis, the alerts' evidence and the Clocks tab (``throttle.throttled_share``)."""
    t, reasons = store.query(host, gpu, "clock_reasons", t0, t1)
    if not t.size:
        return None

    def aligned(metric: str) -> np.ndarray[Any, Any]:
        tm, v = store.query(host, gpu, metric, t0, t1)
        if tm.size == t.size and np.array_equal(tm, t):
            return v
        out = np.full(t.size, np.nan)
        idx = np.searchsorted(tm, t)
        ok = (
            (idx < tm.size) & (tm[np.minimum(idx, max(tm.size - 1, 0))] == t)
            if tm.size
            else idx < 0
        )
        out[ok] = v[idx[ok]]
        return out

    return throttled_share(
        t,
        reasons,
        util=aligned("util_gpu_pct"),
        viol_power_pct=aligned("viol_power_pct"),
        viol_thermal_pct=aligned("viol_thermal_pct"),
    )


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "-"
    return f"{v:.1f}" if abs(v) < 100 else f"{v:.0f}"


def simple_summary(store: Store, host: str, t0: float, t1: float) -> list[str]:
    """Per GPU: min / mean / max of the key metrics, time throttled, errors."""
    lines: list[str] = []
    for gpu in store.gpus(host):
        lines.append(f"GPU {gpu}:")
        for metric, label, scale, unit in SUMMARY_METRICS:
            _t, v = store.query(host, gpu, metric, t0, t1)
            v = v[~np.isnan(v)] * scale
            if v.size == 0:
                continue
            lines.append(
                f"  {label:<20} min {_fmt(float(v.min()))}  mean {_fmt(float(v.mean()))}  "
                f"max {_fmt(float(v.max()))} {unit}".rstrip()
            )
        share = gpu_throttle(store, host, gpu, t0, t1)
        if share is not None and share.span_s > 0:
            by = ", ".join(f"{k} {v / 60:.1f} min" for k, v in share.by_reason.items())
            lines.append(
                f"  {'clocks held down':<20} {share.held_s / 60:.1f} min of "
                f"{share.span_s / 60:.1f} busy ({100 * share.share:.0f} %)"
                + (f": {by}" if by else "")
            )
        for metric in ("ecc_sbe_vol", "ecc_dbe_vol", "pcie_replays"):
            _, v = store.query(host, gpu, metric, t0, t1)
            v = v[~np.isnan(v)]
            if v.size and v.max() > v.min():
                lines.append(f"  {metric} rose from {v.min():.0f} to {v.max():.0f}")
    events = store.events(host, t0, t1)
    xids = [e for e in events if e.type == protocol.EVENT_XID]
    others = [e for e in events if e.type != protocol.EVENT_XID]
    lines.append(f"Xid errors: {len(xids)}" + (":" if xids else ""))
    lines += [
        f"  {format_utc(e.t)} GPU {e.gpu} Xid {e.code} {clean(e.message)}".rstrip() for e in xids
    ]
    if others:
        lines.append(f"Other events: {len(others)}")
        lines += [
            f"  {format_utc(e.t)} {clean(e.type)} GPU {e.gpu}: {clean(e.message)}"
            for e in others[:50]
        ]
    return lines


def diagnosis_lines(
    store: Store, host: str, t0: float, t1: float, host_cfg: HostConfig | None = None
) -> list[str]:
    """The window's one judgment (``verdicts.judgment``: the diagnosis reconciled with what
    the rules fired on, hidden sensors said as hidden) as sentences, then what the instance
    hides."""
    try:
        j = judge(from_store(store, host, t0, t1), host_cfg or HostConfig(name=host))
    except WindowError as e:
        return [f"- ({clean(e)})"]
    except Exception as e:  # a diagnosis bug must not cost the user the bundle
        return [f"- (diagnosis failed: {type(e).__name__}: {clean(e)})"]
    lines = [f"- {catalogue.finding_sentence(f)}" for f in j.findings]
    lines += [f"- {line}" for line in transparency_lines(j.sensors)]
    return lines


def alerts_in_window(store: Store, host: str, t0: float, t1: float) -> list[dict[str, Any]]:
    """Every alert of ``host`` active at some point of [t0, t1]: the lifecycle table's
    (with the channels each was sent to and the actions run for it), then any older
    record of the plain alerts table, each with its title and sentence."""
    marks: dict[str, list[tuple[str, str, float, str | None]]] = {}
    for key, kind, name, t, outcome in store.alert_marks():
        marks.setdefault(key, []).append((kind, name, t, outcome))
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for row in [*store.alert_states(host, t0, t1), *store.alerts(host, t0, t1)]:
        key = str(row.get("id"))
        if key in seen:
            continue
        seen.add(key)
        r = dict(row)
        mine = marks.get(key, [])
        r["sent"] = sorted(n for kind, n, _t, _o in mine if kind == "sent")
        r["actions"] = [
            {"action": n, "t": format_utc(t), "outcome": o}
            for kind, n, t, o in sorted(mine, key=lambda m: m[2])
            if kind == "action"
        ]
        try:
            a = alert_from_json(row)
            r["title"], r["sentence"] = catalogue.alert_title(a), catalogue.alert_sentence(a)
        except ValueError:
            pass  # a record of another shape: kept as it is
        out.append(r)
    out.sort(key=lambda r: (float(r.get("started_t") or 0.0), str(r.get("id"))))
    return out


def alert_lines(alerts: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"Alerts: {len(alerts)}" + (":" if alerts else "")]
    for a in alerts:
        t = a.get("started_t")
        when = format_utc(float(t)) if isinstance(t, (int, float)) else "?"
        title = a.get("title") or a.get("rule_id")
        lines.append(f"  {when} [{a.get('severity')}, {a.get('state')}] {title}")
    return lines


def check_verdicts(facts: Mapping[str, Any]) -> list[dict[str, Any]]:
    try:
        return [
            {"id": f.id, "verdict": f.verdict, "gpu": f.gpu, "values": dict(f.values)}
            for f in health.evaluate_check(dict(facts))
        ]
    except Exception as e:
        return [{"id": "error", "verdict": "unknown", "gpu": None, "values": {"error": str(e)}}]


def bench_evidence(store: Store, host: str, t0: float, t1: float) -> list[dict[str, Any]]:
    """The arrival benchmarks of the window (or the latest before it), each as judged then:
    what the card delivered against its datasheet, a good card and the offer."""
    try:
        runs = bench_results.runs_for_window(store.path, host, t0, t1)
    except Exception as e:  # the rest of the evidence still counts
        return [{"error": f"the benchmark results could not be read: {e}"}]
    return [{"t": format_utc(r.t), **r.result} for r in runs]


def summary_text(
    store: Store,
    host: str,
    t0: float,
    t1: float,
    rows: int,
    alerts: Sequence[Mapping[str, Any]] = (),
    records: Sequence[str] = (),
) -> str:
    hello = store.hello(host, at=t1)
    head = [
        f"gpufleet evidence bundle for {host}",
        f"window: {format_utc(t0)} to {format_utc(t1)} (UTC), {rows} GPU-samples",
    ]
    if hello is not None:
        # GPU names and the driver version come from the instance: escaped.
        names = sorted({clean(g.name) for g in hello.gpus})
        drv = clean(hello.host.get("driver_version", "?"))
        head.append(f"{len(hello.gpus)} GPU(s): {', '.join(names)}; driver {drv}")
    found = diagnosis_lines(store, host, t0, t1)
    body = ["", "Findings:", *found] if found else []
    lines = [
        *head,
        *body,
        "",
        *alert_lines(alerts),
        *records,
        "",
        "Per GPU:",
        *simple_summary(store, host, t0, t1),
        "",
    ]
    return clean_text("\n".join(lines))


def build_bundle(
    store: Store,
    host: str,
    t0: float,
    t1: float,
    out: Path,
    *,
    render_plots: RenderPlots | None = None,
    audit: Sequence[Mapping[str, Any]] = (),
) -> BundleReport:
    """Write the zip to ``out`` (through a private temporary file, renamed into place);
    ``audit`` is the audit log's records (``history.audit.read_audit``) for the kills and
    actions of the window."""
    out = Path(out)
    tmp = out.with_name(out.name + ".part")
    report = BundleReport(path=out, rows=0)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an older .part of the same name keeps its mode otherwise
    with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:

        def put(name: str, data: bytes | str) -> None:
            z.writestr(name, data)
            report.parts.append(name)

        buf = io.StringIO()
        report.rows = export_csv(store, host, t0, t1, buf)
        put("metrics.csv", buf.getvalue())
        if render_plots is not None:
            try:
                pngs = render_plots(plot_data(store, host, t0, t1))
            except Exception as e:  # no display, no Qt: the rest of the evidence still counts
                report.plot_error = f"{type(e).__name__}: {e}"
                pngs = {}
            for name, png in sorted(pngs.items()):
                z.writestr(f"plots/{name}", png)
                report.parts.append(f"plots/{name}")
        hello = store.hello(host, at=t1)
        put("inventory.json", _json(dict(hello.raw) if hello else None))
        check = store.last_check(host, before=t1)
        if check is not None:
            t, facts = check
            put(
                "health_check.json",
                _json({"t": format_utc(t), "facts": facts, "verdicts": check_verdicts(facts)}),
            )
        alerts = alerts_in_window(store, host, t0, t1)
        put("alerts.json", _json(alerts))
        events = [dict(e.raw) for e in store.events(host, t0, t1)]
        put("events.json", _json(events))
        stored = [{"host": host, **k} for k in store.kills(host, t0, t1)]
        kills = bundle_records.kills_in_window(stored, audit, host, t0, t1)
        actions = bundle_records.actions_in_window(audit, host, t0, t1)
        watchdog = bundle_records.watchdog_events(events)
        put("kills.json", _json(kills))
        put("actions.json", _json(actions))
        put("watchdog.json", _json(watchdog))
        put("benchmarks.json", _json(bench_evidence(store, host, t0, t1)))
        procs: Sequence[Any] = store.procs(host, t0, t1)
        put(
            "processes.json",
            _json(
                [
                    {"t": format_utc(p.t), "seq": p.seq, "procs": [x._asdict() for x in p.procs]}
                    for p in procs
                ]
            ),
        )
        records = ["", *bundle_records.record_lines(kills, actions, watchdog)]
        put("summary.txt", summary_text(store, host, t0, t1, report.rows, alerts, records))
    tmp.replace(out)
    return report
