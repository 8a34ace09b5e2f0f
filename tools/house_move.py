#!/usr/bin/env python3
"""The one-off script behind the mechanical house move: ``git mv`` plus import rewriting.

Kept in the repository so the move can be read (and re-run on a branch that predates it):
``python tools/house_move.py`` moves every module of ``gpufleet.core`` and ``gpufleet.ui`` into
its stage folder, renames the sampler's shared metric names, and rewrites every reference
(absolute imports, ``from package import module`` lines, dotted strings such as
``monkeypatch`` targets, and file paths) in the tracked text files.
"""

# ruff: noqa: E501
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# old module (dotted, under gui/ or remote/) -> new module
CORE = {
    "config": "config.configfile",
    "hostconfig": "config.hostconfig",
    "settings": "config.settings",
    "paths": "config.paths",
    "secrets": "config.secrets",
    "autostart": "config.autostart",
    "messages": "wire.messages",
    "wireformat": "wire.encode",
    "synth": "wire.synth",
    "ssh": "link.ssh",
    "sshcmd": "link.ssh_command",
    "sshconfig": "link.ssh_config",
    "hostkeys": "link.hostkeys",
    "transport": "link.transport",
    "deploy": "link.deploy",
    "zipapp": "link.zipapp",
    "samplercmd": "link.sampler_argv",
    "session": "fleet.session",
    "fleet": "fleet.fleet",
    "fleetevents": "fleet.events",
    "demo": "fleet.demo",
    "localdaemons": "fleet.localdaemons",
    "dispatch": "pipeline.dispatch",
    "live": "live.buffers",
    "links": "live.links",
    "store": "history.store",
    "store_codec": "history.codec",
    "store_rows": "history.rows",
    "store_schema": "history.schema",
    "export": "history.export",
    "timeparse": "history.timeparse",
    "audit": "history.audit",
    "alerts": "alerts.alert",
    "rules": "alerts.rules",
    "conditions": "alerts.conditions",
    "actions": "alerts.actions",
    "notify": "notify.webhooks",
    "cost": "cost.rental",
    "health": "verdicts.health",
    "diagnosis": "verdicts.diagnosis",
    "findings": "verdicts.findings",
    "bundle": "verdicts.bundle",
    "metrics_server": "prometheus.exporter",
    "promrules": "prometheus.rules_export",
    "promsource": "prometheus.source",
    "am_receiver": "prometheus.am_receiver",
    "catalogue": "text.catalogue",
}
UI = {
    "main_window": "window.main_window",
    "fleet_panel": "window.fleet_panel",
    "view": "window.view",
    "summary": "window.summary",
    "tab_base": "tabs.base",
    "tab_clocks": "tabs.clocks",
    "tab_cost": "tabs.cost",
    "tab_interconnect": "tabs.interconnect",
    "tab_memory": "tabs.memory",
    "tab_overview": "tabs.overview",
    "tab_thermal": "tabs.thermal",
    "sentences": "tabs.sentences",
    "link_grid": "tabs.link_grid",
    "curveset": "widgets.curveset",
    "fast_table": "widgets.fast_table",
    "legend": "widgets.legend",
    "plots": "widgets.plots",
    "table_model": "widgets.table_model",
    "theme": "widgets.theme",
    "hosts_dialog": "dialogs.hosts",
    "kill_dialog": "dialogs.kill",
    "settings_dialog": "dialogs.settings",
    "hostkey_prompt": "dialogs.hostkey",
    "tray": "desktop.tray",
    "dbus_notify": "desktop.dbus_notify",
    "i18n": "desktop.i18n",
    "memtrim": "desktop.memtrim",
    "actions": "controllers.actions",
    "alert_wiring": "controllers.alert_wiring",
    "bridge": "controllers.bridge",
    "history": "controllers.history",
    "worker": "controllers.worker",
    "prom_wiring": "controllers.prom_wiring",
    "screenshots": "offscreen.screenshots",
    "evidence": "offscreen.evidence",
    "simfeed": "offscreen.simfeed",
}
SAMPLER = {"prometheus_names": "metric_names"}

PACKAGE_DOCS = {
    "gpufleet.core.config": "Configuration: the TOML file, hosts, settings, paths and keyring secrets.",
    "gpufleet.core.wire": "The wire: sampler JSON lines decoded into typed messages, and back.",
    "gpufleet.core.link": "The link to one host: SSH, host keys, transports, deploying the sampler.",
    "gpufleet.core.fleet": "The fleet: one supervised session per host, their events fanned out.",
    "gpufleet.core.pipeline": "The pipeline hub: drains the fleet and feeds every consumer stage.",
    "gpufleet.core.live": "The live window: fixed-size ring buffers of every host's recent values.",
    "gpufleet.core.history": "History: the SQLite store, its encodings, exports and the audit log.",
    "gpufleet.core.alerts": "Alerts: rules, their conditions, the engine and per-rule actions.",
    "gpufleet.core.notify": "Notifications leaving the app: webhooks with retries.",
    "gpufleet.core.cost": "Rental cost: accrual per host, idle share and advice.",
    "gpufleet.core.verdicts": "Verdicts: the health check, diagnoses, findings and evidence bundles.",
    "gpufleet.core.prometheus": "Prometheus: the app's exporter, rules export, source and receiver.",
    "gpufleet.core.text": "Text: every sentence gpufleet says, in one catalogue.",
    "gpufleet.ui.window": "The main window: its frame, the fleet panel, the view state, summaries.",
    "gpufleet.ui.tabs": "The host tabs: one module per tab, their common frame and sentences.",
    "gpufleet.ui.widgets": "Reusable widgets: plots, curves, legends, fast tables, the theme.",
    "gpufleet.ui.dialogs": "Dialogs: hosts, kill confirmation, settings, host-key prompt.",
    "gpufleet.ui.desktop": "Desktop integration: tray, notifications, translations, memory trim.",
    "gpufleet.ui.controllers": "Controllers: what connects the core's output and the user's input to Qt.",
    "gpufleet.ui.offscreen": "Offscreen rendering: screenshots, evidence plots, simulated history.",
}

TEXT_SUFFIXES = {".py", ".toml", ".md", ".spec", ".sh", ".txt", ".cfg", ".ini", ".json", ""}


def full_map() -> dict[str, str]:
    out: dict[str, str] = {}
    for old, new in CORE.items():
        out[f"gpufleet.core.{old}"] = f"gpufleet.core.{new}"
    for old, new in UI.items():
        out[f"gpufleet.ui.{old}"] = f"gpufleet.ui.{new}"
    for old, new in SAMPLER.items():
        out[f"gpufleet_sampler.{old}"] = f"gpufleet_sampler.{new}"
    return out


def path_of(dotted: str) -> str:
    head = "remote/" if dotted.startswith("gpufleet_sampler") else "gui/"
    return head + dotted.replace(".", "/") + ".py"


FROM_PKG = re.compile(
    r"^(?P<ind>[ \t]*)from (?P<pkg>gpufleet\.core|gpufleet\.ui|gpufleet_sampler) import "
    r"(?P<names>\([^)]*\)|[^\n]+)$",
    re.M,
)


def rewrite_from_package(text: str, mapping: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        ind, pkg = m.group("ind"), m.group("pkg")
        raw = m.group("names").strip()
        comment = ""
        if "#" in raw and not raw.startswith("("):
            raw, comment = raw.split("#", 1)
            comment = "  #" + comment
        names = [n.strip() for n in raw.strip("()").replace("\n", " ").split(",") if n.strip()]
        kept: list[str] = []
        lines: list[str] = []
        for item in names:
            parts = item.split(" as ")
            name = parts[0].strip()
            alias = parts[1].strip() if len(parts) > 1 else None
            old = f"{pkg}.{name}"
            if old not in mapping:
                kept.append(item)
                continue
            new = mapping[old]
            parent, leaf = new.rsplit(".", 1)
            local = alias or name
            suffix = "" if local == leaf else f" as {local}"
            lines.append(f"{ind}from {parent} import {leaf}{suffix}")
        if kept:
            lines.insert(0, f"{ind}from {pkg} import {', '.join(kept)}")
        if comment and lines:
            lines[0] += comment
        return "\n".join(lines)

    return FROM_PKG.sub(sub, text)


def rewrite_dotted(text: str, mapping: dict[str, str]) -> str:
    # One pass over one alternation, longest first: a name is rewritten once, so
    # gpufleet.core.fleet.session (new) is never taken for gpufleet.core.fleet (old) again.
    table: dict[str, str] = dict(mapping)
    for old, new in mapping.items():
        old_path, new_path = path_of(old), path_of(new)
        table[old_path] = new_path
        table[old_path.split("/", 1)[1]] = new_path.split("/", 1)[1]
        if old_path.startswith("gui/gpufleet/"):
            table[old_path.removeprefix("gui/gpufleet/")] = new_path.removeprefix("gui/gpufleet/")
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w./])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])")
    return pattern.sub(lambda m: table[m.group(1)], text)


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True)
    files = []
    for line in out.stdout.splitlines():
        p = ROOT / line
        if p.is_file() and (p.suffix in TEXT_SUFFIXES) and "fixtures" not in p.parts:
            files.append(p)
    return files


def main() -> int:
    mapping = full_map()
    for old, new in mapping.items():
        src, dst = ROOT / path_of(old), ROOT / path_of(new)
        dst.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(src), str(dst)], cwd=ROOT, check=True)
    for pkg, doc in PACKAGE_DOCS.items():
        init = ROOT / "gui" / pkg.replace(".", "/") / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        if not init.exists():
            init.write_text(f'"""{doc}"""\n')
            subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)
    for f in tracked_files():
        if f == Path(__file__).resolve():
            continue
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite_from_package(rewrite_dotted(text, mapping), mapping)
        if new != text:
            f.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
