"""``gpufleet rules export --format prometheus [--out FILE]``: the rules for Prometheus.

Registered as a subcommand of ``gpufleet rules`` (through ``rules.SUBCOMMANDS``). Writes the
shipped rules, overridden by the user's ``rules.toml`` and the hosts' overrides in
``config.toml``, as Prometheus alerting rules
(``gpufleet.core.prometheus.rules_export``); to stdout, or atomically to ``--out``. Rules PromQL
cannot express are listed as comments in the output (and on stderr with ``--out``).

Exit codes: 0 written; 1 a bad rules or config file, or the file cannot be written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, CliError
from gpufleet.cli.hostarg import configured_hosts
from gpufleet.core.alerts.rules import RulesError, load_rules
from gpufleet.core.config import paths
from gpufleet.core.prometheus.rules_export import prom_rules, to_yaml


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write the alert rules in effect as Prometheus alerting rules (PromQL over the "
        "metrics of `gpufleet serve-metrics` and the sampler's exporter), valid for "
        "`promtool check rules`."
    )
    p.add_argument("--format", choices=("prometheus",), default="prometheus")
    p.add_argument("--out", metavar="FILE", help="write here (atomically) instead of stdout")


def run(args: argparse.Namespace) -> int:
    user = paths.rules_file()
    try:
        rules = load_rules()
    except RulesError as e:
        raise CliError(str(e), EXIT_FAILURE) from None
    hosts = configured_hosts()
    try:
        prs, skipped = prom_rules(rules, hosts)
    except RulesError as e:  # a host override in config.toml that does not validate
        raise CliError(str(e), EXIT_FAILURE) from None
    source = f"the shipped rules and {user}" if user.exists() else "the shipped rules"
    text = to_yaml(prs, skipped, source)
    if not args.out:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.out).expanduser()
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except OSError as e:
        raise CliError(f"cannot write {out}: {e.strerror or e}", EXIT_FAILURE) from None
    print(f"wrote {len(prs)} Prometheus alerting rules to {out}", file=sys.stderr)
    for sk in skipped:
        print(f"gpufleet: skipped rule {sk.rule_id}: {sk.reason}", file=sys.stderr)
    return EXIT_OK


ENTRY = ("write the rules as Prometheus alerting rules", add_arguments, run)
