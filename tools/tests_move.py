#!/usr/bin/env python3
"""The one-off script behind the tests' re-lay (``tests/<area>/<stage>/``, ``tests/support/``).

Kept in the repository for the sweep of tests written at the old paths on other branches:
``python tools/tests_move.py --rewrite FILE...`` rewrites their helper imports (bare names such
as ``from webhook_sink import ...``, ``tests.core.provider_server``, ``gpufleet.core.wire.synth``)
and the test paths they name, without moving anything; where the test itself goes is the rule in
docs/architecture.md ("Tests") and the table ``MOVES`` below. ``python tools/tests_move.py``
alone did the move (``git mv`` of every file in ``MOVES``); the path and import fix-ups that
needed judgment (``__file__``-relative paths, subprocess scripts) were made by hand after it.
"""

# ruff: noqa: E501
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# old path -> new path (helpers first, then the tests by area)
MOVES = {
    "tests/core/_lifecycle_app.py": "tests/support/lifecycle_app.py",
    "tests/core/_rules_support.py": "tests/support/rules_support.py",
    "tests/core/compare_streams.py": "tests/support/compare_streams.py",
    "tests/core/fake_sampler.py": "tests/support/fake_sampler.py",
    "tests/core/judgment_streams.py": "tests/support/judgment_streams.py",
    "tests/core/provider_payloads.py": "tests/support/provider_payloads.py",
    "tests/core/provider_server.py": "tests/support/provider_server.py",
    "tests/core/sampler_daemons.py": "tests/support/sampler_daemons.py",
    "tests/restart_case.py": "tests/support/restart_case.py",
    "tests/smi_standin.py": "tests/support/smi_standin.py",
    "tests/waiting.py": "tests/support/waiting.py",
    "tests/webhook_sink.py": "tests/support/webhook_sink.py",
    "tests/integration/promstack.py": "tests/support/promstack.py",
    "tests/integration/sshd.py": "tests/support/sshd.py",
    "tests/integration/stdio_relay.py": "tests/support/stdio_relay.py",
    "tests/integration/tcpproxy.py": "tests/support/tcpproxy.py",
    "tests/ui/ui_helpers.py": "tests/support/ui_helpers.py",
    "tests/remote/bench_standin.py": "tests/support/bench_standin.py",
    "tests/remote/exec_child.py": "tests/support/exec_child.py",
    "tests/remote/gpu_holder_proc.py": "tests/support/gpu_holder_proc.py",
    "tests/remote/nvml_fake.py": "tests/support/nvml_fake.py",
    "tests/remote/pidns.py": "tests/support/pidns.py",
    "gui/gpufleet/core/wire/synth.py": "tests/support/synth.py",
    "tests/core/test_actions.py": "tests/core/alerts/test_actions.py",
    "tests/core/test_alert_causes.py": "tests/core/alerts/test_alert_causes.py",
    "tests/core/test_alert_evidence_records.py": "tests/core/alerts/test_alert_evidence_records.py",
    "tests/core/test_alert_lifecycle.py": "tests/core/alerts/test_alert_lifecycle.py",
    "tests/core/test_alerts_corpus.py": "tests/core/alerts/test_alerts_corpus.py",
    "tests/core/test_clock_history.py": "tests/core/alerts/test_clock_history.py",
    "tests/core/test_rules_builtin.py": "tests/core/alerts/test_rules_builtin.py",
    "tests/core/test_rules_engine.py": "tests/core/alerts/test_rules_engine.py",
    "tests/core/test_watchdog_alerts.py": "tests/core/alerts/test_watchdog_alerts.py",
    "tests/core/test_billing.py": "tests/core/cost/test_billing.py",
    "tests/core/test_cost.py": "tests/core/cost/test_rental.py",
    "tests/core/test_cost_held_idle.py": "tests/core/cost/test_cost_held_idle.py",
    "tests/core/test_cost_idle.py": "tests/core/cost/test_cost_idle.py",
    "tests/core/test_config.py": "tests/core/config/test_configfile.py",
    "tests/core/test_file_modes.py": "tests/core/config/test_file_modes.py",
    "tests/core/test_secrets.py": "tests/core/config/test_secrets.py",
    "tests/core/test_settings.py": "tests/core/config/test_settings.py",
    "tests/core/test_fleet_local.py": "tests/core/fleet/test_fleet_local.py",
    "tests/core/test_hostile_stream.py": "tests/core/fleet/test_hostile_stream.py",
    "tests/core/test_localdaemons.py": "tests/core/fleet/test_localdaemons.py",
    "tests/core/test_session_local.py": "tests/core/fleet/test_session_local.py",
    "tests/core/test_session_no_gpu.py": "tests/core/fleet/test_session_no_gpu.py",
    "tests/core/test_export.py": "tests/core/history/test_export.py",
    "tests/core/test_store.py": "tests/core/history/test_store.py",
    "tests/core/test_store_codec.py": "tests/core/history/test_codec.py",
    "tests/core/test_store_container_procs.py": "tests/core/history/test_store_container_procs.py",
    "tests/core/test_store_durability.py": "tests/core/history/test_store_durability.py",
    "tests/core/test_store_limits.py": "tests/core/history/test_store_limits.py",
    "tests/core/test_timeparse.py": "tests/core/history/test_timeparse.py",
    "tests/core/test_hostkeys.py": "tests/core/link/test_hostkeys.py",
    "tests/core/test_sshcmd.py": "tests/core/link/test_ssh_command.py",
    "tests/core/test_sshconfig.py": "tests/core/link/test_ssh_config.py",
    "tests/core/test_zipapp.py": "tests/core/link/test_zipapp.py",
    "tests/core/test_live.py": "tests/core/live/test_buffers.py",
    "tests/core/test_links.py": "tests/core/live/test_links.py",
    "tests/core/test_links_at.py": "tests/core/live/test_links_at.py",
    "tests/core/test_notify.py": "tests/core/notify/test_webhooks.py",
    "tests/core/test_notify_ordering.py": "tests/core/notify/test_ordering.py",
    "tests/core/test_hub_links.py": "tests/core/pipeline/test_hub_links.py",
    "tests/core/test_am_receiver.py": "tests/core/prometheus/test_am_receiver.py",
    "tests/core/test_http_hardening.py": "tests/core/prometheus/test_http_hardening.py",
    "tests/core/test_promrules.py": "tests/core/prometheus/test_rules_export.py",
    "tests/core/test_provider_actions.py": "tests/core/providers/test_provider_actions.py",
    "tests/core/test_providers.py": "tests/core/providers/test_providers.py",
    "tests/core/test_providers_acceptance.py": "tests/core/providers/test_providers_acceptance.py",
    "tests/core/test_providers_real.py": "tests/core/providers/test_providers_real.py",
    "tests/core/test_sanitize.py": "tests/core/text/test_sanitize.py",
    "tests/core/test_bench_evidence.py": "tests/core/verdicts/test_bench_evidence.py",
    "tests/core/test_bundle_alerts.py": "tests/core/verdicts/test_bundle_alerts.py",
    "tests/core/test_bundle_records.py": "tests/core/verdicts/test_bundle_records.py",
    "tests/core/test_compare.py": "tests/core/verdicts/test_compare.py",
    "tests/core/test_diagnosis.py": "tests/core/verdicts/test_diagnosis.py",
    "tests/core/test_health.py": "tests/core/verdicts/test_health.py",
    "tests/core/test_judgment.py": "tests/core/verdicts/test_judgment.py",
    "tests/core/test_run_window.py": "tests/core/verdicts/test_run_window.py",
    "tests/core/test_transparency.py": "tests/core/verdicts/test_transparency.py",
    "tests/core/test_utilization.py": "tests/core/verdicts/test_utilization.py",
    "tests/core/test_fuzz_protocol.py": "tests/core/wire/test_fuzz_protocol.py",
    "tests/core/test_gpu_kind.py": "tests/core/wire/test_gpu_kind.py",
    "tests/core/test_messages.py": "tests/core/wire/test_messages.py",
    "tests/core/test_nvidia_smi.py": "tests/core/wire/test_nvidia_smi.py",
    "tests/core/test_nvidia_smi_real.py": "tests/core/wire/test_nvidia_smi_real.py",
    "tests/core/test_cli_bench.py": "tests/core/cli/test_cli_bench.py",
    "tests/core/test_cli_hosts.py": "tests/core/cli/test_cli_hosts.py",
    "tests/core/test_cli_providers.py": "tests/core/cli/test_cli_providers.py",
    "tests/core/test_cli_replay.py": "tests/core/cli/test_cli_replay.py",
    "tests/core/test_cli_stream_kill.py": "tests/core/cli/test_cli_stream_kill.py",
    "tests/core/test_cli_validation.py": "tests/core/cli/test_cli_validation.py",
    "tests/core/test_cli_watchdog.py": "tests/core/cli/test_cli_watchdog.py",
    "tests/core/test_desktop_files.py": "tests/integration/package/test_desktop_files.py",
    "tests/core/test_qt_runtime_check.py": "tests/integration/package/test_qt_runtime_check.py",
    "tests/remote/test_bench_libcuda.py": "tests/remote/bench/test_bench_libcuda.py",
    "tests/remote/test_bench_payload.py": "tests/remote/bench/test_bench_payload.py",
    "tests/remote/test_nvlink_links.py": "tests/remote/backends/nvml/test_nvlink_links.py",
    "tests/remote/test_nvml_backend.py": "tests/remote/backends/nvml/test_nvml_backend.py",
    "tests/remote/test_nvml_bill.py": "tests/remote/backends/nvml/test_nvml_bill.py",
    "tests/remote/test_nvml_h200_trace.py": "tests/remote/backends/nvml/test_nvml_h200_trace.py",
    "tests/remote/test_nvml_mig.py": "tests/remote/backends/nvml/test_nvml_mig.py",
    "tests/remote/test_nvml_procs_exec.py": "tests/remote/backends/nvml/test_nvml_procs_exec.py",
    "tests/remote/test_nvml_stream.py": "tests/remote/backends/nvml/test_nvml_stream.py",
    "tests/remote/test_nvml_trace.py": "tests/remote/backends/nvml/test_nvml_trace.py",
    "tests/remote/test_sim_physical.py": "tests/remote/sim/test_sim_physical.py",
    "tests/remote/test_sim_scenarios.py": "tests/remote/sim/test_sim_scenarios.py",
    "tests/remote/test_daemon.py": "tests/remote/daemon/test_daemon.py",
    "tests/remote/test_ring.py": "tests/remote/daemon/test_ring.py",
    "tests/remote/test_container_procs.py": "tests/remote/procs/test_container_procs.py",
    "tests/remote/test_gpu_holders.py": "tests/remote/procs/test_holders.py",
    "tests/remote/test_kill.py": "tests/remote/procs/test_kill.py",
    "tests/remote/test_kill_tree.py": "tests/remote/procs/test_kill_tree.py",
    "tests/remote/test_procfs.py": "tests/remote/procs/test_procfs.py",
    "tests/remote/test_procfs_exec.py": "tests/remote/procs/test_procfs_exec.py",
    "tests/remote/test_redact.py": "tests/remote/procs/test_redact.py",
    "tests/remote/test_watchdog.py": "tests/remote/watchdog/test_watchdog.py",
    "tests/remote/test_watchdog_keeper.py": "tests/remote/watchdog/test_watchdog_keeper.py",
    "tests/remote/test_watchdog_ready.py": "tests/remote/watchdog/test_watchdog_ready.py",
    "tests/remote/test_watchdog_v2.py": "tests/remote/watchdog/test_watchdog_v2.py",
    "tests/remote/test_exporter.py": "tests/remote/exporter/test_exporter.py",
    "tests/remote/test_loop_sampler.py": "tests/remote/loop/test_loop_sampler.py",
    "tests/remote/test_stream_cli.py": "tests/remote/loop/test_stream_cli.py",
    "tests/remote/test_protocol_schema.py": "tests/remote/protocol/test_protocol_schema.py",
    "tests/remote/test_stream_protocol_doc.py": "tests/remote/protocol/test_stream_protocol_doc.py",
    "tests/remote/test_py38.py": "tests/remote/protocol/test_py38.py",
    "tests/ui/test_alert_wiring.py": "tests/ui/controllers/test_alert_wiring.py",
    "tests/ui/test_config_watch.py": "tests/ui/controllers/test_config_watch.py",
    "tests/ui/test_evidence_export.py": "tests/ui/controllers/test_evidence_export.py",
    "tests/ui/test_mark_mine.py": "tests/ui/controllers/test_mark_mine.py",
    "tests/ui/test_prometheus_gui.py": "tests/ui/controllers/test_prometheus_gui.py",
    "tests/ui/test_bench_dialog.py": "tests/ui/dialogs/test_bench_dialog.py",
    "tests/ui/test_compare_view.py": "tests/ui/dialogs/test_compare_view.py",
    "tests/ui/test_hostkey_once.py": "tests/ui/dialogs/test_hostkey_once.py",
    "tests/ui/test_hosts_dialog.py": "tests/ui/dialogs/test_hosts_dialog.py",
    "tests/ui/test_kill_and_status.py": "tests/ui/dialogs/test_kill_and_status.py",
    "tests/ui/test_provider_import_dialog.py": "tests/ui/dialogs/test_provider_import_dialog.py",
    "tests/ui/test_settings_dialog.py": "tests/ui/dialogs/test_settings_dialog.py",
    "tests/ui/test_watchdog_dialog.py": "tests/ui/dialogs/test_watchdog_dialog.py",
    "tests/ui/test_compute_tab.py": "tests/ui/tabs/test_compute_tab.py",
    "tests/ui/test_container_procs_table.py": "tests/ui/tabs/test_container_procs_table.py",
    "tests/ui/test_cost_tab.py": "tests/ui/tabs/test_cost_tab.py",
    "tests/ui/test_interconnect_links.py": "tests/ui/tabs/test_interconnect_links.py",
    "tests/ui/test_links_moment.py": "tests/ui/tabs/test_links_moment.py",
    "tests/ui/test_soak.py": "tests/ui/tabs/test_soak.py",
    "tests/ui/test_tabs.py": "tests/ui/tabs/test_tabs.py",
    "tests/ui/test_history_ranges.py": "tests/ui/window/test_history_ranges.py",
    "tests/ui/test_host_sensors.py": "tests/ui/window/test_host_sensors.py",
    "tests/ui/test_layout.py": "tests/ui/window/test_layout.py",
    "tests/ui/test_mig_rows.py": "tests/ui/window/test_mig_rows.py",
    "tests/ui/test_sampler_cost.py": "tests/ui/window/test_sampler_cost.py",
    "tests/ui/test_small_defects.py": "tests/ui/window/test_small_defects.py",
    "tests/ui/test_status_counts.py": "tests/ui/window/test_status_counts.py",
    "tests/ui/test_memtrim.py": "tests/ui/desktop/test_memtrim.py",
    "tests/ui/test_notify_dunst.py": "tests/ui/desktop/test_notify_dunst.py",
    "tests/ui/test_tray_burst.py": "tests/ui/desktop/test_tray_burst.py",
    "tests/ui/test_demo_prefill.py": "tests/ui/offscreen/test_demo_prefill.py",
    "tests/ui/test_evidence_bundle.py": "tests/ui/offscreen/test_evidence_bundle.py",
    "tests/ui/test_one_engine.py": "tests/ui/app/test_one_engine.py",
    "tests/ui/test_provider_action_app.py": "tests/ui/app/test_provider_action_app.py",
    "tests/ui/test_provider_quit.py": "tests/ui/app/test_provider_quit.py",
    "tests/ui/test_provider_sync.py": "tests/ui/app/test_provider_sync.py",
    "tests/ui/test_restart.py": "tests/ui/app/test_restart.py",
    "tests/ui/test_smoke.py": "tests/ui/app/test_smoke.py",
    "tests/ui/test_translations.py": "tests/ui/i18n/test_translations.py",
    "tests/integration/test_fleet_ssh.py": "tests/integration/ssh/test_fleet_ssh.py",
    "tests/integration/test_hostkey_switch.py": "tests/integration/ssh/test_hostkey_switch.py",
    "tests/integration/test_nvidia_smi_ssh.py": "tests/integration/ssh/test_nvidia_smi_ssh.py",
    "tests/integration/test_ssh_connection.py": "tests/integration/ssh/test_ssh_connection.py",
    "tests/integration/test_secrets_e2e.py": "tests/integration/secrets/test_secrets_e2e.py",
    "tests/integration/test_prometheus_stack.py": "tests/integration/prometheus/test_prometheus_stack.py",
    "tests/integration/test_serve_headless.py": "tests/integration/serve/test_serve_headless.py",
    "tests/integration/test_package.py": "tests/integration/package/test_package.py",
    "tests/integration/test_module_ceiling.py": "tests/integration/tools/test_module_ceiling.py",
}

SUPPORT = "tests/support/"
TEXT_SUFFIXES = {".py", ".toml", ".md", ".sh", ".txt", ".cfg", ".ini", ""}


def helper_names() -> dict[str, str]:
    """Bare module name a test imported (``webhook_sink``) -> its name in tests.support."""
    return {Path(old).stem: Path(new).stem for old, new in MOVES.items() if new.startswith(SUPPORT)}


def dotted_names() -> dict[str, str]:
    """Dotted module names of the old helpers -> their tests.support names."""
    out = {"gpufleet.core.wire.synth": "tests.support.synth"}
    for old, new in MOVES.items():
        if new.startswith(SUPPORT) and old.startswith("tests/"):
            out[old.removesuffix(".py").replace("/", ".")] = new.removesuffix(".py").replace(
                "/", "."
            )
    return out


def rewrite_imports(text: str) -> str:
    names = helper_names()
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # from webhook_sink import X  ->  from tests.support.webhook_sink import X
    text = re.sub(
        rf"^(?P<ind>[ \t]*)from (?P<n>{alt}) import ",
        lambda m: f"{m['ind']}from tests.support.{names[m['n']]} import ",
        text,
        flags=re.M,
    )

    # import compare_streams as cs  ->  from tests.support import compare_streams as cs
    def plain(m: re.Match[str]) -> str:
        new = names[m["n"]]
        alias = m["alias"] or (f" as {m['n']}" if new != m["n"] else "")
        return f"{m['ind']}from tests.support import {new}{alias}"

    text = re.sub(
        rf"^(?P<ind>[ \t]*)import (?P<n>{alt})(?P<alias> as \w+)?$", plain, text, flags=re.M
    )
    text = re.sub(
        r"^(?P<ind>[ \t]*)from gpufleet\.core\.wire import synth\b",
        lambda m: f"{m['ind']}from tests.support import synth",
        text,
        flags=re.M,
    )
    dotted = dotted_names()
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(k) for k in dotted) + r")(?![\w])")
    return pattern.sub(lambda m: dotted[m.group(1)], text)


def rewrite_paths(text: str) -> str:
    table = dict(MOVES)
    table["core/wire/synth.py"] = "tests/support/synth.py"
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w./])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])")
    return pattern.sub(lambda m: table[m.group(1)], text)


def rewrite(path: Path) -> bool:
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        return False
    new = rewrite_paths(text)
    if path.suffix == ".py":
        new = rewrite_imports(new)
    if new != text:
        path.write_text(new)
    return new != text


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True)
    files = []
    for line in out.stdout.splitlines():
        p = ROOT / line
        if p.is_file() and p.suffix in TEXT_SUFFIXES and "fixtures" not in p.parts:
            files.append(p)
    return files


def move() -> None:
    for old, new in MOVES.items():
        (ROOT / new).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", old, new], cwd=ROOT, check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rewrite", nargs="*", type=Path, help="only rewrite these files")
    args = ap.parse_args(argv)
    if args.rewrite is not None:
        for p in args.rewrite or tracked_files():
            if p.resolve() != Path(__file__).resolve() and rewrite(p):
                print(f"rewrote {p}")
        return 0
    move()
    return 0


if __name__ == "__main__":
    sys.exit(main())
