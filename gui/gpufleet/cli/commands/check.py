"""``gpufleet check HOST``: the start-of-rental health check, as pass / warn / fail findings.

    gpufleet check HOST [--format text|json] [--accept-new]
    gpufleet check [HOST] --facts FILE|-        # judge a recorded check object offline

The sampler on the host gathers the facts (``check``); the verdicts and their sentences are
made here, by ``core.health`` and ``core.catalogue``. Exits 1 when any finding fails, so that
a script can refuse a bad rental before starting a job on it. ``--facts`` reads the JSON the
sampler printed (``python3 -m gpufleet_sampler check``, or the ``facts`` of ``--format
json``) and gives the same verdicts and exit code as the live check; HOST then only names
it (and brings its allow-list, when it is configured).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, CliError
from gpufleet.cli.hostarg import (
    configured_hosts,
    exit_code_for,
    hostkey_hint,
    resolve_host,
    unknown_key_callback,
)
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.history.store import Store
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
        "--accept-new", action="store_true", help="trust the host key if it is not known yet"
    )
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
    return _print(args, host, facts, findings, host.label)


def _print(
    args: argparse.Namespace,
    host: HostConfig,
    facts: Mapping[str, Any],
    findings: list[Any],
    label: str,
) -> int:
    """The same output and exit code live and offline."""
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
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(f"{clean(label)}: {MARK.get(verdict, verdict.upper())}")
        for f in findings:  # the sentences name their GPU themselves
            print(f"  [{MARK.get(f.verdict, f.verdict.upper())}] {finding_sentence(f)}")
        for line in transparency_lines(sensors):
            print(f"  {clean(line)}")
    return EXIT_FAILURE if verdict == "fail" else EXIT_OK
