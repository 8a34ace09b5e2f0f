"""gpufleet's rules as Prometheus alerting rules: every shipped rule but the allow-list one is
exported, ``promtool check rules`` accepts the file (Debian's promtool), per-host overrides
become host-matched variants, user rules map our column names to the exported ones."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpufleet.core.alerts.rules import load_rules, load_rules_text
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.prometheus.rules_export import export_prometheus, prom_rules

PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def promtool_check(tmp_path: Path, text: str) -> None:
    if not Path(PROMTOOL).exists():
        pytest.skip("needs Debian's prometheus package (promtool)")
    f = tmp_path / "rules.yml"
    f.write_text(text)
    r = subprocess.run([PROMTOOL, "check", "rules", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout + r.stderr


def test_every_shipped_rule_is_exported_and_promtool_accepts_them(tmp_path: Path) -> None:
    rules = load_rules(include_user=False)
    prs, skipped = prom_rules(rules)
    # The allow-list, per-process memory, the hello's run_id and the watchdog's events are
    # not in Prometheus; nor are the states the held-idle, memory-growth and suspect-process
    # conditions keep per GPU (when the GPU last worked, the fit, who started the job).
    unsupported = {
        "idle_held",
        "mem_growth",
        "proc_suspect",
        "foreign_process",
        "mem_unaccounted",
        "sampler_restarted",
        "watchdog_pending",
        "watchdog_acted",
        "watchdog_failed",
        "watchdog_unready",
    }
    assert {s.rule_id for s in skipped} == unsupported
    exported = {p.rule_id for p in prs}
    assert exported == {r.id for r in rules} - unsupported
    by_id = {p.alert: p for p in prs}
    tt = by_id["GpufleetThermalThrottle"]
    assert tt.for_s == 30 and tt.keep_firing_s == 30 and tt.severity == "warning"
    assert "floor(DCGM_FI_DEV_CLOCKS_EVENT_REASONS / 32) % 2 == 1" in tt.expr
    assert "{{ $labels.gpu }}" in tt.summary and "{{ printf" in tt.description
    # Xid codes split by severity: critical ones, and the rest.
    assert by_id["GpufleetXid"].severity == "critical"
    assert 'err_code=~"48|' in by_id["GpufleetXid"].expr
    assert by_id["GpufleetXidOther"].severity == "warning"
    text = export_prometheus(rules)
    assert "# skipped foreign_process: needs each host's allow-list" in text
    promtool_check(tmp_path, text)


def test_host_overrides_become_host_matched_variants(tmp_path: Path) -> None:
    rules = load_rules_text(
        """
[rules.thermal_throttle.hosts."h100-a"]
for_s = 5
[rules.idle_billed]
enabled = false
[rules.hot]
condition = "metric_above"
severity = "critical"
for_s = 10
params = { metric = "temp_gpu_c", above = 80.0, clear_below = 75.0 }
[rules.vram]
condition = "metric_above"
params = { metric = "mem_used_bytes", above = 1073741824.0 }
[rules.bogus]
condition = "metric_below"
params = { metric = "no_such_column", below = 1.0 }
"""
    )
    hosts = [HostConfig(name="4090-x2", rule_overrides={"thermal_throttle": {"enabled": False}})]
    prs, skipped = prom_rules(rules, hosts)
    thermal = [p for p in prs if p.rule_id == "thermal_throttle"]
    assert len(thermal) == 2  # the others, and h100-a; 4090-x2 has it disabled
    base, h100 = thermal
    assert 'Hostname!~"4090\\\\-x2|h100\\\\-a"' in base.expr and base.for_s == 30
    assert 'Hostname="h100-a"' in h100.expr and h100.for_s == 5
    reasons = {(s.rule_id, s.reason) for s in skipped}
    assert ("thermal_throttle", 'disabled for Hostname="4090-x2"') in reasons
    assert ("idle_billed", "disabled") in reasons
    assert any(r == "bogus" and "no_such_column" in why for r, why in reasons)
    hot = next(p for p in prs if p.rule_id == "hot")
    assert hot.expr == "DCGM_FI_DEV_GPU_TEMP > 80" and hot.severity == "critical"
    vram = next(p for p in prs if p.rule_id == "vram")
    assert vram.expr == "DCGM_FI_DEV_FB_USED > 1024"  # bytes → MiB, as exported
    promtool_check(tmp_path, export_prometheus(rules, hosts))
