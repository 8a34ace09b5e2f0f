"""``gpufleet rules list``: the alert rules in effect (shipped, overridden by the user's file).

    gpufleet rules list [--host NAME] [--format text|json]

Other ``rules`` subcommands register in ``SUBCOMMANDS`` below: ``rules export --format
prometheus`` (alerting rules for a Prometheus server) is one.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from gpufleet.cli.commands._rules_export import ENTRY
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, CliError
from gpufleet.cli.hostarg import resolve_host
from gpufleet.cli.termwrap import say
from gpufleet.core.alerts.rules import Rule, RulesError, load_rules
from gpufleet.core.config import paths
from gpufleet.core.text.catalogue import duration, rule_meaning, severity_label

# name -> (help, add_arguments, run): the seam for `rules export --format prometheus`.
SUBCOMMANDS: dict[
    str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rules",
        help="list the alert rules in effect, or export them for Prometheus",
        description=f"Alert rules: the shipped ones, overridden by id from {paths.rules_file()}.",
    )
    sub = p.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")
    sub.required = True
    lp = sub.add_parser("list", help="id, severity, for-duration and meaning of each rule")
    lp.add_argument("--host", metavar="NAME", help="with this host's overrides applied")
    lp.add_argument("--format", choices=("text", "json"), default="text")
    lp.set_defaults(func=run_list)
    SUBCOMMANDS.setdefault("export", ENTRY)
    for name, (help_text, add_args, func) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text)
        add_args(sp)
        sp.set_defaults(func=func)


def _effective(args: argparse.Namespace) -> list[Rule]:
    # A rules.toml that cannot be used is a bad file (exit 1, as docs/cli.md says), not a
    # bad command line.
    try:
        rules = load_rules()
    except RulesError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    if not args.host:
        return rules
    host = resolve_host(args.host)  # a configured host or a demo one, as everywhere
    try:
        return [r.for_host(host) for r in rules]
    except RulesError as e:
        raise CliError(str(e), EXIT_FAILURE) from None


def run_list(args: argparse.Namespace) -> int:
    rules = _effective(args)
    if args.format == "json":
        out = [
            {
                "id": r.id,
                "condition": r.condition,
                "severity": r.severity,
                "for_s": r.for_s,
                "clear_for_s": r.clear_for_s,
                "cooldown_s": r.cooldown_s,
                "enabled": r.enabled,
                "params": dict(r.params),
                "notify": list(r.notify),
                "actions": [dict(a) for a in r.actions],
                "meaning": r.description or rule_meaning(r.condition, r.id),
                "source": r.source,
            }
            for r in rules
        ]
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return EXIT_OK
    width = max(len(r.id) for r in rules)
    print(f"{'RULE':{width}}  {'SEVERITY':8}  {'FOR':>7}  MEANING")
    for r in rules:
        off = "" if r.enabled else " (disabled)"
        meaning = r.description or rule_meaning(r.condition, r.id)
        say(
            f"{r.id:{width}}  {severity_label(r.severity):8}  {duration(r.for_s):>7}  "
            f"{meaning}{off}",
            width + 21,  # under MEANING
        )
    say(f"\nOverride by id in {paths.rules_file()}")
    return EXIT_OK
