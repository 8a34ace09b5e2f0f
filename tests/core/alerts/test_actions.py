"""Actions run real commands (a local one writing a file, a "remote" one through the caller's
runner), not in dry-run, not when cancelled within the grace period; each leaves an audit
line."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from gpufleet.core.alerts.actions import PENDING, ActionRunner, ActionSpec
from gpufleet.core.alerts.rules import RuleEngine, load_rules_text
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.audit import read_audit
from gpufleet.core.model.alert import Alert

from tests.support.rules_support import Stream


def fire(tmp_path: Path, action: str) -> tuple[Alert, tuple[dict[str, object], ...]]:
    rules = load_rules_text(f"[rules.idle_billed]\nfor_s = 0\nactions = [{action}]\n")
    eng = RuleEngine(
        [r for r in rules if r.id == "idle_billed"],
        [HostConfig(name="4090-x2", price_per_hour=1.2)],
    )
    s = Stream()
    eng.feed("4090-x2", s.hello)
    (a,) = eng.feed("4090-x2", s.sample(0, util_gpu_pct=0, mem_used_bytes=0))
    rule = eng.rule("idle_billed", "4090-x2")
    assert rule is not None
    return a, tuple(dict(x) for x in rule.actions)


def test_local_action_runs_with_the_alert_in_its_environment(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    cmd = (
        f'echo "$GPUFLEET_ALERT_RULE $GPUFLEET_ALERT_HOST" > {out}; '
        f'printf %s "$GPUFLEET_ALERT_JSON" > {out}.json'
    )
    alert, actions = fire(tmp_path, "{ type = 'local', command = '" + cmd + "', grace_s = 0 }")
    runner = ActionRunner()
    (run,) = runner.on_alert(alert, actions)
    done = runner.wait(run.id, 30)
    assert done is not None and done.state == "ran" and done.rc == 0
    assert out.read_text() == "idle_billed 4090-x2\n"
    assert json.loads(Path(f"{out}.json").read_text())["id"] == alert.id
    (entry,) = read_audit()
    assert (
        entry["kind"] == "action" and entry["result"] == "ran" and entry["rule_id"] == "idle_billed"
    )


def test_dry_run_does_not_run(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    alert, actions = fire(
        tmp_path, f"{{ type = 'local', command = 'touch {out}', grace_s = 0, dry_run = true }}"
    )
    runner = ActionRunner()
    (run,) = runner.on_alert(alert, actions)
    done = runner.wait(run.id, 30)
    assert done is not None and done.state == "dry_run"
    assert not out.exists()
    (entry,) = read_audit()
    assert entry["result"] == "dry_run" and "would run" in entry["message"]


def test_cancelled_within_the_grace_period(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    alert, actions = fire(tmp_path, f"{{ type = 'local', command = 'touch {out}', grace_s = 30 }}")
    runner = ActionRunner()
    (run,) = runner.on_alert(alert, actions)
    assert [r.id for r in runner.pending()] == [run.id]
    assert runner.cancel(run.id)
    done = runner.wait(run.id, 10)
    assert done is not None and done.state == "cancelled"
    assert not runner.cancel(run.id)  # too late to cancel twice
    assert not out.exists()
    assert read_audit()[0]["result"] == "cancelled"


def test_grace_period_then_runs(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    runner = ActionRunner()
    alert, _ = fire(tmp_path, f"{{ type = 'local', command = 'touch {out}', grace_s = 0 }}")
    t0 = time.monotonic()
    run = runner.schedule(alert, ActionSpec("local", f"touch {out}", grace_s=0.3))
    # Scheduled, not run: the run as schedule returned it (a check of the file here could
    # come after the grace period on a loaded machine).
    assert run.state == PENDING
    done = runner.wait(run.id, 30)
    assert done is not None and done.state == "ran" and out.exists()
    # A lower bound: a slower machine only makes it longer.
    assert time.monotonic() - t0 >= 0.3


def test_remote_action_goes_through_the_callers_runner(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    def run_remote(host: str, command: str) -> tuple[int, str]:
        calls.append((host, command))
        p = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30)
        return p.returncode, p.stdout + p.stderr

    alert, actions = fire(
        tmp_path, "{ type = 'remote', command = 'echo bye; exit 3', grace_s = 0 }"
    )
    runner = ActionRunner(run_remote)
    (run,) = runner.on_alert(alert, actions)
    done = runner.wait(run.id, 30)
    assert calls == [("4090-x2", "echo bye; exit 3")]
    assert done is not None and done.state == "failed" and done.rc == 3 and "bye" in done.output
    assert read_audit()[0]["rc"] == 3


def test_resolved_alerts_run_nothing_and_stop_cancels(tmp_path: Path) -> None:
    from dataclasses import replace

    out = tmp_path / "out.txt"
    alert, actions = fire(tmp_path, f"{{ type = 'local', command = 'touch {out}', grace_s = 60 }}")
    runner = ActionRunner()
    assert runner.on_alert(replace(alert, state="resolved"), actions) == []
    (run,) = runner.on_alert(alert, actions)
    runner.stop()
    assert runner.get(run.id).state == "cancelled"  # type: ignore[union-attr]
    assert not out.exists()


def test_dispatcher_routes_a_firing_alert_to_its_rule_actions(tmp_path: Path) -> None:
    from gpufleet.core.pipeline.dispatch import AlertDispatcher

    out = tmp_path / "out.txt"
    rules = load_rules_text(
        f"[rules.idle_billed]\nfor_s = 0\nactions = [{{ type = 'local', command = 'touch {out}', "
        "grace_s = 0 }]\n"
    )
    eng = RuleEngine(rules, [HostConfig(name="h")])
    runner = ActionRunner()
    disp = AlertDispatcher(eng, None, runner)
    s = Stream()
    eng.feed("h", s.hello)
    (run,) = disp.handle(eng.feed("h", s.sample(0, util_gpu_pct=0, mem_used_bytes=0)))
    assert runner.wait(run.id, 30).state == "ran" and out.exists()  # type: ignore[union-attr]
    assert disp.handle(eng.feed("h", s.sample(100))) == []  # busy again: nothing to run
