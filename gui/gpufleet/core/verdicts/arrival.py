"""Judging the arrival benchmark: is this the card that was paid for?

Each GPU's figures are set beside three references (its datasheet, what a good card of that
model measures, and the offer's advertised figures where the provider publishes them); the
verdict comes from the good card, because no card reaches its datasheet. A figure below a
good card's by more than the tolerance makes the GPU ``below_par``, and the telemetry taken
during the run names the likely cause (a power limit, heat, the PCIe link, NVLink links down).
A GPU refused (another process on it) or with nothing measurable is ``not_measured``, with why.

Input: the benchmark's JSON lines (``collect``); output: the documented JSON (docs/cli.md).
Each verdict's ``reason`` (English, the documented interface) is worded from its ``reasons``
(ids and values, ``core.text.bench_reasons``), from which the GUI and the CLI word it in the
user's language.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from gpufleet_sampler.bench_protocol import (
    KIND_END,
    KIND_REFUSED,
    KIND_RESULT,
    KIND_SKIP,
    KIND_START,
    KIND_TELEMETRY,
    METRICS,
)

from gpufleet.core.text.bench_reasons import Reason, reason, reasons_text
from gpufleet.core.verdicts import arrival_refs as refs
from gpufleet.core.verdicts.arrival_reasons import cause_of

VERDICTS = ("as_expected", "below_par", "not_measured")


@dataclass
class BenchRun:
    """What one run's lines said, by GPU."""

    start: dict[str, Any] = field(default_factory=dict)
    end: dict[str, Any] = field(default_factory=dict)
    measured: dict[int, dict[str, float]] = field(default_factory=dict)
    skipped: dict[int, dict[str, str]] = field(default_factory=dict)
    refused: dict[int, dict[str, Any]] = field(default_factory=dict)
    telemetry: dict[int, dict[str, Any]] = field(default_factory=dict)
    bad_lines: int = 0

    def feed(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("kind")
        gpu = obj.get("gpu")
        if kind == KIND_START:
            self.start = dict(obj)
        elif kind == KIND_END:
            # The first end says why: a worker that refused ("no GPU [5] here") exits
            # non-zero, and its supervisor's "the worker died" after it is only the echo.
            self.end = self.end or dict(obj)
        elif not isinstance(gpu, int):
            return
        elif kind == KIND_RESULT and obj.get("metric") in METRICS:
            value = obj.get("value")
            if isinstance(value, int | float) and value > 0:
                self.measured.setdefault(gpu, {})[str(obj["metric"])] = float(value)
        elif kind == KIND_SKIP and obj.get("metric") in METRICS:
            self.skipped.setdefault(gpu, {})[str(obj["metric"])] = str(obj.get("reason") or "")
        elif kind == KIND_REFUSED:
            self.refused[gpu] = dict(obj)
        elif kind == KIND_TELEMETRY:
            self.telemetry[gpu] = dict(obj)


def collect(lines: Iterable[bytes | str]) -> BenchRun:
    """A run from its lines; lines that are not JSON objects are counted, never fatal."""
    run = BenchRun()
    for line in lines:
        feed_line(run, line)
    return run


def feed_line(run: BenchRun, line: bytes | str) -> dict[str, Any] | None:
    """One line into ``run``: its object, or None (blank, or not a JSON object: counted)."""
    text = line.strip()
    if not text:
        return None
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict):
        run.bad_lines += 1
        return None
    run.feed(obj)
    return obj


def _gpu_names(run: BenchRun) -> dict[int, str]:
    gpus = run.start.get("gpus")
    out: dict[int, str] = {}
    if isinstance(gpus, list):
        for g in gpus:
            if isinstance(g, dict) and isinstance(g.get("index"), int):
                out[g["index"]] = str(g.get("name") or "?")
    return out


def _why_not(run: BenchRun, g: int) -> Reason | None:
    """Why a GPU has no figures: refused, or the run ended early."""
    refused = run.refused.get(g)
    if refused is not None:
        why = refused.get("message")
        return reason("refused", why=str(why)) if why else reason("refused_busy")
    status = run.end.get("status")
    if status in ("cancelled", "timeout", "error"):
        message = str(run.end.get("message") or "").strip()
        if message:
            return reason("ended_early", status=str(status), message=message)
        return reason("ended_early_silent", status=str(status))
    return None


def _said(out: dict[str, Any], reasons: list[Reason]) -> dict[str, Any]:
    """The verdict's reasons, structured and in English (the documented ``reason``)."""
    out["reasons"] = reasons
    out["reason"] = reasons_text(reasons, translate=False)
    return out


def judge_gpu(
    run: BenchRun, g: int, name: str, advertised: Mapping[str, float] | None
) -> dict[str, Any]:
    measured = run.measured.get(g, {})
    sheet = refs.datasheet_for(name)
    datasheet = refs.datasheet_figures(sheet) if sheet else {}
    good = refs.good_card_figures(sheet) if sheet else {}
    out: dict[str, Any] = {
        "index": g,
        "name": name,
        "measured": {m: round(v, 1) for m, v in measured.items()},
        "good_card": good,
        "datasheet": datasheet,
        "advertised": dict(advertised) if advertised else None,
        "telemetry": run.telemetry.get(g),
    }
    notes = [reason("step_skipped", metric=m, why=why) for m, why in run.skipped.get(g, {}).items()]
    stopped = _why_not(run, g)
    if not measured:
        out["verdict"] = "not_measured"
        return _said(out, [stopped] if stopped else notes or [reason("nothing_measured")])
    if sheet is None:
        out["verdict"] = "not_measured"
        return _said(out, [reason("no_reference", name=name)])
    low = _shortfalls(measured, good)
    ratios = {m: round(measured[m] / good[m], 3) for m in measured if good.get(m)}
    out["ratios"] = ratios
    out["shortfalls"] = [{"metric": m, "share_of_good": round(r, 3)} for m, r in low]
    short_ad = _below_advertised(measured, advertised)
    if low:
        out["verdict"] = "below_par"
        said = [
            reason("shortfall", metric=m, pct=r * 100, measured=measured[m], good=good[m])
            for m, r in low
        ]
        said += _causes([cause_of(m, run.telemetry.get(g) or {}) for m, _r in low])
    else:
        out["verdict"] = "as_expected"
        said = [reason("within_reach")]
    return _said(out, said + short_ad + notes + ([stopped] if stopped else []))


def _causes(causes: list[Reason]) -> list[Reason]:
    """Each cause once, in the order of their English words (as the reason always read)."""
    by_text = {reasons_text([c], translate=False): c for c in causes}
    return [by_text[k] for k in sorted(by_text)]


def _shortfalls(
    measured: Mapping[str, float], good: Mapping[str, float]
) -> list[tuple[str, float]]:
    low = []
    for m in METRICS:
        if m in measured and good.get(m):
            r = measured[m] / good[m]
            if r < 1.0 - refs.tolerance_of(m):
                low.append((m, r))
    return low


def _below_advertised(
    measured: Mapping[str, float], advertised: Mapping[str, float] | None
) -> list[Reason]:
    out = []
    for m, ad in (advertised or {}).items():
        if m in measured and ad > 0 and measured[m] < ad * (1.0 - refs.tolerance_of(m)):
            out.append(reason("below_advertised", metric=m, advertised=ad, measured=measured[m]))
    return out


def host_verdict(gpus: Sequence[Mapping[str, Any]]) -> tuple[str, list[Reason]]:
    """Below par if any GPU is; not measured if any GPU was not (a host is as expected only
    when every GPU was measured and is); with which GPUs (and why the first one was not
    measured, its own reasons)."""
    below = [g["index"] for g in gpus if g["verdict"] == "below_par"]
    unmeasured = [g["index"] for g in gpus if g["verdict"] == "not_measured"]
    if below:
        said = [reason("host_below", gpus=below)]
        if unmeasured:
            said.append(reason("host_also_unmeasured", gpus=unmeasured))
        return "below_par", said
    if not gpus:
        return "not_measured", [reason("no_gpu")]
    if unmeasured:
        first = next(g for g in gpus if g["verdict"] == "not_measured")
        return "not_measured", [
            {**reason("host_unmeasured", gpus=unmeasured), "because": list(first["reasons"])}
        ]
    return "as_expected", [reason("host_as_expected")]


def judge(
    host: str, run: BenchRun, advertised: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The documented result: ``{"host", "verdict", "reason", "gpus": [...]}`` and the run's
    engine, status and time."""
    names = _gpu_names(run)
    gpus = [judge_gpu(run, g, names[g], advertised) for g in sorted(names)]
    verdict, said = host_verdict(gpus)
    return {
        "host": host,
        "verdict": verdict,
        "reason": reasons_text(said, translate=False),
        "reasons": said,
        "engine": run.start.get("engine"),
        "engine_notes": run.start.get("engine_notes") or [],
        "status": run.end.get("status") or "incomplete",
        "message": run.end.get("message"),
        "elapsed_s": run.end.get("elapsed_s"),
        "seconds": run.start.get("seconds"),
        "gpus": gpus,
    }
