"""``gpufleet check HOST``: the start-of-rental health check, as pass / warn / fail findings.

The sampler on the host gathers the facts (``check``); the verdicts and their sentences are
made here, by ``core.health`` and ``core.catalogue``. Exits 1 when any finding fails, so that
a script can refuse a bad rental before starting a job on it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, CliError
from gpufleet.cli.hostarg import exit_code_for, hostkey_hint, resolve_host, unknown_key_callback
from gpufleet.core.config import paths
from gpufleet.core.fleet.fleet import Fleet, FleetError
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check, overall_verdict

MARK = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "info": "INFO"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "check",
        help="health-check a host (pass/warn/fail; exit 1 on any fail)",
        description="Check a host before you start a job on it: driver, power limits, "
        "clocks, temperatures, PCIe link, ECC and remapped rows, Xids, stray processes. "
        "Exits 1 when any check fails.",
    )
    p.add_argument("host", metavar="HOST")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--accept-new", action="store_true", help="trust the host key if it is not known yet"
    )
    p.set_defaults(func=run)


def _record(host: str, facts: dict[str, Any], demo: bool) -> None:
    try:
        from gpufleet.core.history.store import Store

        with Store(paths.history_file(demo)) as store:
            store.write_check(host, facts)
    except Exception as e:  # the check's answer matters more than its record
        print(f"gpufleet: the check was not recorded in the history: {e}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    host = resolve_host(args.host)
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    try:
        facts = fleet.check(host.name)
    except FleetError as e:
        raise CliError(f"{e}{hostkey_hint(e.kind)}", exit_code_for(e.kind)) from None
    if facts.get("kind") == "error":
        raise CliError(f"{host.name}: the sampler's check failed: {facts.get('message')}")
    findings = evaluate_check(facts, host)
    verdict = overall_verdict(findings)
    _record(host.name, facts, fleet.demo)
    if args.format == "json":
        out = {
            "host": host.name,
            "verdict": verdict,
            "findings": [{**f.to_json(), "sentence": finding_sentence(f)} for f in findings],
            "facts": facts,
        }
        sys.stdout.buffer.write(orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(f"{host.label}: {MARK.get(verdict, verdict.upper())}")
        for f in findings:  # the sentences name their GPU themselves
            print(f"  [{MARK.get(f.verdict, f.verdict.upper())}] {finding_sentence(f)}")
    return EXIT_FAILURE if verdict == "fail" else EXIT_OK
