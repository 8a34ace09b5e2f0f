"""The alert lifecycle across restarts, end to end without the hub: rule engine, dispatcher,
a real local webhook server, a recording local action and the history store, restarted on
the same SQLite file by kill -9 and by a clean quit. Nothing is posted or run twice; an
acknowledgement and a snooze hold."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.alerts.actions import ActionRunner
from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.alerts.rules import RuleEngine
from gpufleet.core.history.store import Store
from gpufleet.core.notify.webhooks import Notifier, Webhook
from gpufleet.core.pipeline.dispatch import AlertDispatcher

from tests.support.lifecycle_app import BRAKE, HOST, App
from tests.support.rules_support import BUSY, ROOT, Stream
from tests.support.webhook_sink import WebhookSink


def life(db: Path, hook: WebhookSink, log: Path, phase: int, end: str) -> None:
    """One life of the app in its own process, ended by kill -9 or a clean quit."""
    env = {
        **os.environ,
        # The repository root, so that ``-m tests.support.lifecycle_app`` and its imports of
        # tests.support resolve in the child.
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "gui"), str(ROOT / "remote")]),
    }
    p = subprocess.Popen(
        [sys.executable, "-m", "tests.support.lifecycle_app", str(db), str(hook.port), str(log),
         str(phase), end],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert p.stdout is not None
    line = p.stdout.readline()
    if end == "kill":
        assert line.strip() == "READY", p.stderr.read() if p.stderr else ""
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        assert p.returncode == -signal.SIGKILL
    else:
        _out, err = p.communicate(timeout=120)
        assert line.strip() == "DONE" and p.returncode == 0, err
    if p.stdout:
        p.stdout.close()
    if p.stderr:
        p.stderr.close()


def posted(hook: WebhookSink) -> list[tuple[str, int | None, str]]:
    return sorted((b["alert"]["rule_id"], b["gpu"], b["alert"]["state"]) for b in hook.bodies)


@pytest.mark.parametrize("first_end", ["kill", "quit"])
def test_restart_repeats_nothing_and_ack_and_snooze_hold(
    tmp_path: Path, webhook_sink: WebhookSink, first_end: str
) -> None:
    db, log = tmp_path / "history.sqlite", tmp_path / "actions.log"
    life(db, webhook_sink, log, 1, first_end)
    first = [
        ("hw_slowdown", 2, "firing"),
        ("thermal_throttle", 0, "firing"),
        ("thermal_throttle", 1, "firing"),
    ]
    assert posted(webhook_sink) == first
    assert all(b["host"] == HOST and HOST in b["title"] for b in webhook_sink.bodies)
    assert len(log.read_text().splitlines()) == 1  # the power brake's action ran once
    # Second life: every condition still holds; the other way of ending.
    life(db, webhook_sink, log, 2, "quit" if first_end == "kill" else "kill")
    assert posted(webhook_sink) == first
    assert len(log.read_text().splitlines()) == 1
    # Third life, here: the acknowledgement and the snooze came back with the alerts.
    app = App(db, webhook_sink.port, log)
    try:
        by_gpu = {a.gpu: a for a in app.engine.active()}
        assert set(by_gpu) == {0, 1, 2}
        assert by_gpu[0].acked and not by_gpu[1].acked
        assert by_gpu[1].snoozed_until is not None and by_gpu[2].snoozed_until is None
        assert app.resumed == []  # the action ran in the first life
        changed = app.feed(3)  # GPU 0 cools down
        assert [(a.rule_id, a.gpu, a.state) for a in changed] == [
            ("thermal_throttle", 0, "resolved")
        ]
        assert changed[0].id == by_gpu[0].id  # the same firing, not a new one
        assert posted(webhook_sink) == first  # acknowledged: its end is not posted either
        assert len(log.read_text().splitlines()) == 1
        history = app.lifecycle.alerts(HOST, 0, float("inf"))
        assert sorted((r["gpu"], r["state"]) for r in history) == [
            (0, "resolved"),
            (1, "firing"),
            (2, "firing"),
        ]
        (brake,) = [r for r in history if r["gpu"] == 2]
        assert brake["sent"] == ["webhook:hook:firing"]
        assert [x["outcome"] for x in brake["actions"]] == ["ran"]
    finally:
        app.close()


def test_backfilled_alert_that_is_already_over_posts_once_and_runs_nothing(
    tmp_path: Path, webhook_sink: WebhookSink
) -> None:
    """After an absence the back-fill replays a brake that came and went 16 minutes ago:
    one post (resolved, with its duration), no action."""
    log = tmp_path / "actions.log"
    with Store(tmp_path / "h.sqlite", retention_raw_days=1e5, retention_rollup_days=1e5) as st:
        app = _app(st, webhook_sink, log)
        s = Stream(n_gpus=3)
        batch = []
        for t in range(120):
            g2 = BRAKE if 10 <= t < 60 else BUSY
            batch += app[0].feed(HOST, s.sample(t, gpus={0: BUSY, 1: BUSY, 2: g2}))
        app[1].handle(batch)  # one back-filled batch
        app[2].flush(30)
        app[3].stop()
        app[2].stop()
    assert posted(webhook_sink) == [("hw_slowdown", 2, "resolved")]
    assert "Resolved after" in webhook_sink.bodies[0]["text"]
    assert not log.exists()


def _app(
    st: Store, hook: WebhookSink, log: Path
) -> tuple[RuleEngine, AlertDispatcher, Notifier, Any]:
    from tests.support.lifecycle_app import rules

    eng = RuleEngine(rules(log))
    notifier = Notifier([Webhook("hook", "json", f"http://127.0.0.1:{hook.port}/", "info")])
    notifier.start()
    runner = ActionRunner(audit=lambda e: None)
    return eng, AlertDispatcher(eng, notifier, runner, AlertLifecycle(st)), notifier, runner


def test_pending_action_stopped_by_a_clean_quit_runs_after_the_restart(tmp_path: Path) -> None:
    """Quit during an action's grace period: not run, not forgotten; the next start
    schedules it again (and only once)."""
    from dataclasses import replace

    from tests.support.lifecycle_app import rules

    log = tmp_path / "actions.log"
    db = tmp_path / "h.sqlite"

    def build(st: Store, grace_s: float) -> tuple[RuleEngine, AlertDispatcher, ActionRunner]:
        # The grace period is no part of an action's identity: a shorter one in the second
        # life keeps the test short and names the same action.
        cmd = f'echo "$GPUFLEET_ALERT_ID" >> "{log}"'
        spec = {"type": "local", "command": cmd, "grace_s": grace_s}
        eng = RuleEngine([replace(r, actions=(spec,), notify=()) for r in rules(log)])
        runner = ActionRunner(audit=lambda e: None)
        return eng, AlertDispatcher(eng, None, runner, AlertLifecycle(st)), runner

    with Store(db, retention_raw_days=1e5, retention_rollup_days=1e5) as st:
        eng, disp, runner = build(st, 60)
        s = Stream(n_gpus=3)
        for t in range(30):
            disp.handle(eng.feed(HOST, s.sample(t, gpus={0: BUSY, 1: BUSY, 2: BRAKE})))
        assert len(runner.pending()) == 1
        runner.stop()
    assert not log.exists()
    with Store(db, retention_raw_days=1e5, retention_rollup_days=1e5) as st:
        eng, disp, runner = build(st, 0)
        assert [a.gpu for a in disp.restore()] == [2]
        (run,) = disp.resume()
        runner.wait(run.id, 30)
        assert disp.resume() == []  # done: never again
        runner.stop()
    assert len(log.read_text().splitlines()) == 1


def test_restore_only_the_configured_hosts() -> None:
    from tests.support.lifecycle_app import rules

    lc = AlertLifecycle()
    eng = RuleEngine(rules(Path("/dev/null")))
    s = Stream(n_gpus=3)
    disp = AlertDispatcher(eng, lifecycle=lc)
    for host in ("kept", "gone"):
        for t in range(20):
            disp.handle(eng.feed(host, s.sample(t, gpus={0: BUSY, 1: BUSY, 2: BRAKE})))
    fresh = AlertDispatcher(RuleEngine(rules(Path("/dev/null"))), lifecycle=lc)
    assert {a.host for a in fresh.restore(hosts=["kept"])} == {"kept"}
    assert {a.host for a in fresh.engine.active()} == {"kept"}
