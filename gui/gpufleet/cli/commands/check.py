"""``gpufleet check HOST``: the start-of-rental health check, as pass / warn / fail findings.

    gpufleet check HOST [--format text|json] [--accept-new]
    gpufleet check [HOST] --facts FILE|-        # judge a recorded check object offline
    gpufleet check HOST --bench [--bench-seconds N]  # and the arrival benchmark after it

The sampler on the host gathers the facts (``check``); the verdicts and their sentences are
made here, by ``core.health`` and ``core.catalogue``. Exits 1 when any finding fails, so that
a script can refuse a bad rental before starting a job on it. ``--facts`` reads the JSON the
sampler printed (``python3 -m gpufleet_sampler check``, or the ``facts`` of ``--format
json``) and gives the same verdicts and exit code as the live check; HOST then only names
it (and brings its allow-list, when it is configured). ``--bench`` runs ``gpufleet bench``
after the check (same link, same judging and record) and exits 1 also when a GPU is below par.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from gpufleet.cli import argtypes
from gpufleet.cli.commands.bench import run_for_cli
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import (
    add_live_host_args,
    configured_hosts,
    exit_code_for,
    hostkey_hint,
    resolve_host,
    unknown_key_callback,
)
from gpufleet.cli.termwrap import say
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.history import bench_results
from gpufleet.core.history.store import Store
from gpufleet.core.text.bench import bench_offer, bench_table, verdict_line
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.text.judgment import transparency_lines
from gpufleet.core.text.sanitize import clean
from gpufleet.core.verdicts.health import evaluate_check, overall_verdict
from gpufleet.core.verdicts.sensors import check_reports

MARK = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "info": "INFO"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "check",
        help="health-check a host (pass/warn/fail; exit 1 on any fail)",
        description="Check a host before you start a job on it: driver, power limits, "
        "clocks, temperatures, PCIe link, ECC and remapped rows, Xids, stray processes. "
        "Exits 1 when any check fails.",
    )
    p.add_argument("host", metavar="HOST", nargs="?")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--facts",
        metavar="FILE",
        help="judge a recorded check object (the sampler's JSON; '-' for stdin) offline",
    )
    p.add_argument(
        "--bench",
        action="store_true",
        help="also run the arrival benchmark (gpufleet bench) after the check",
    )
    p.add_argument(
        "--bench-seconds",
        type=argtypes.bench_seconds,
        default=60.0,
        metavar="N",
        help="time for the benchmark (default 60)",
    )
    add_live_host_args(p, host=False)
    p.set_defaults(func=run)


def _record(host: str, facts: dict[str, Any], demo: bool) -> None:
    try:
        with Store(paths.history_file(demo)) as store:
            store.write_check(host, facts)
    except Exception as e:  # the check's answer matters more than its record
        print(f"gpufleet: the check was not recorded in the history: {e}", file=sys.stderr)


def read_facts(source: str) -> dict[str, Any]:
    """A recorded check object from a file or stdin ('-'): the sampler's own JSON, or the
    output of ``gpufleet check --format json`` (its ``facts``). One-line errors."""
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except FileNotFoundError:
        raise CliError(f"{source}: no such file", EXIT_NOT_FOUND) from None
    except OSError as e:
        raise CliError(f"{source}: cannot read: {e.strerror}", EXIT_FAILURE) from None
    name = "standard input" if source == "-" else source
    text = data.strip()
    if not text:
        raise CliError(f"{name}: empty: expected a check object (JSON)", EXIT_USAGE)
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        # A saved stream or log: the last line that is a JSON check object counts.
        obj = None
        for line in reversed(text.splitlines()):
            try:
                cand = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(cand, dict) and cand.get("kind") in ("check", "error"):
                obj = cand
                break
        if obj is None:
            raise CliError(f"{name}: not JSON and no check object in it", EXIT_USAGE) from None
    if isinstance(obj, dict) and obj.get("kind") != "check" and isinstance(obj.get("facts"), dict):
        obj = obj["facts"]  # gpufleet check --format json
    if not isinstance(obj, dict):
        raise CliError(f"{name}: a check object must be a JSON object", EXIT_USAGE)
    return obj


def _offline_host(name: str | None, facts: Mapping[str, Any]) -> HostConfig:
    """The configured host of that name (its allow-list counts), else just a name."""
    if name is not None:
        for h in configured_hosts():
            if h.name == name:
                return h
        return HostConfig(name=name)
    host = facts.get("host") if isinstance(facts.get("host"), Mapping) else {}
    assert isinstance(host, Mapping)
    return HostConfig(name=str(host.get("hostname") or "recorded"))


def run(args: argparse.Namespace) -> int:
    if args.facts is not None:
        if args.bench:
            raise CliError("--bench measures a live host: it cannot go with --facts", EXIT_USAGE)
        facts = read_facts(args.facts)
        host = _offline_host(args.host, facts)
        try:
            findings = evaluate_check(facts, host)
        except ValueError as e:
            raise CliError(f"{args.facts}: {e}", EXIT_FAILURE) from None
        return _print(args, host, facts, findings, host.name)
    if args.host is None:
        raise CliError("check needs a HOST (or --facts FILE to judge a recorded check)", EXIT_USAGE)
    host = resolve_host(args.host)
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    try:
        facts = fleet.check(host.name)
    except FleetError as e:
        raise CliError(f"{e}{hostkey_hint(e.kind)}", exit_code_for(e.kind)) from None
    if facts.get("kind") == "error":
        raise CliError(f"{host.name}: the sampler's check failed: {facts.get('message')}")
    findings = evaluate_check(facts, host)
    _record(host.name, facts, fleet.demo)
    bench = _bench(args, fleet, host) if args.bench else None
    rc = _print(args, host, facts, findings, host.label, bench)
    if bench is None and args.format == "text" and not _benched(host.name, fleet.demo):
        say(bench_offer(host.name))  # a new rental: is it the card paid for?
    return rc


def _benched(host: str, demo: bool) -> bool:
    try:
        return bool(bench_results.runs_of_host(paths.history_file(demo), host, limit=1))
    except Exception:  # an unreadable history: the offer costs nothing
        return False


def _bench(args: argparse.Namespace, fleet: Fleet, host: HostConfig) -> dict[str, Any]:
    """The arrival benchmark after the check, its progress on stderr in text mode."""
    return run_for_cli(fleet, host, args.format == "text", None, args.bench_seconds)


def _print(
    args: argparse.Namespace,
    host: HostConfig,
    facts: Mapping[str, Any],
    findings: list[Any],
    label: str,
    bench: dict[str, Any] | None = None,
) -> int:
    """The same output and exit code live and offline; the benchmark's after the findings."""
    verdict = overall_verdict(findings)
    sensors = check_reports(facts)  # what this instance hides, to compare providers by
    if args.format == "json":
        out = {
            "host": host.name,
            "verdict": verdict,
            "findings": [{**f.to_json(), "sentence": finding_sentence(f)} for f in findings],
            "sensors": [
                {"gpu": r.gpu, "reported": list(r.reported), "hidden": list(r.hidden)}
                for r in sensors
            ],
            "facts": dict(facts),
        }
        if bench is not None:
            out["bench"] = bench
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        say(f"{clean(label)}: {MARK.get(verdict, verdict.upper())}")
        for f in findings:  # the sentences name their GPU themselves
            say(f"  [{MARK.get(f.verdict, f.verdict.upper())}] {finding_sentence(f)}", 9)
        for line in transparency_lines(sensors):
            say(f"  {clean(line)}")
        if bench is not None:
            say(verdict_line(bench))
            say(bench_table(bench))
    below = bench is not None and bench["verdict"] == "below_par"
    return EXIT_FAILURE if verdict == "fail" or below else EXIT_OK
