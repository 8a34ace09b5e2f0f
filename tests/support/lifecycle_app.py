"""A minimal alerting app for the restart tests: rule engine + dispatcher + webhook notifier
+ action runner + lifecycle on a real SQLite history file, fed a stream this module writes.

``python -m tests.support.lifecycle_app DB PORT ACTION_LOG PHASE END`` runs one life of it: it
restores what the previous life left, feeds PHASE of the stream, and then either waits to be killed
(END = "kill": prints READY and sleeps) or quits cleanly (END = "quit")."""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpufleet.core.alerts.actions import ActionRunner
from gpufleet.core.alerts.lifecycle import AlertLifecycle
from gpufleet.core.alerts.rules import Rule, RuleEngine, load_rules
from gpufleet.core.history.store import Store
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.webhooks import Notifier, Webhook
from gpufleet.core.pipeline.dispatch import AlertDispatcher

from tests.support.rules_support import BUSY, Stream

HOST = "rental-1"
HOT = {**BUSY, "clock_reasons": 0x40, "sm_clock_mhz": 1100, "temp_gpu_c": 88}
BRAKE = {**BUSY, "clock_reasons": 0x80, "sm_clock_mhz": 600}


def rules(action_log: Path) -> list[Rule]:
    shipped = {r.id: r for r in load_rules(include_user=False)}
    action = {
        "type": "local",
        "command": f'echo "$GPUFLEET_ALERT_ID" >> "{action_log}"',
        "grace_s": 0,
    }
    return [
        replace(shipped["thermal_throttle"], notify=("hook",)),
        replace(shipped["hw_slowdown"], notify=("hook",), actions=(action,)),
    ]


def stream(phase: int) -> list[Any]:
    """GPU 0 and 1 hot, GPU 2 braked, from t = 0; phase 1 is the first 60 s, phase 2 the
    next 60 s (everything still true), phase 3 GPU 0 cools down."""
    s = Stream(n_gpus=3)
    out: list[Any] = [s.hello]
    spans = {1: range(0, 60), 2: range(60, 120), 3: range(120, 200)}
    s.seq = spans[phase].start * 10  # the numbers go on across lives
    for t in spans[phase]:
        g0 = BUSY if phase == 3 else HOT
        out.append(s.sample(t, gpus={0: g0, 1: HOT, 2: BRAKE}))
    return out


class App:
    def __init__(self, db: Path, port: int, action_log: Path) -> None:
        self.store = Store(db, retention_raw_days=1e5, retention_rollup_days=1e5)
        self.lifecycle = AlertLifecycle(self.store)
        self.engine = RuleEngine(rules(action_log))
        hook = Webhook("hook", "json", f"http://127.0.0.1:{port}/", min_severity="info")
        self.notifier = Notifier([hook], backoff_s=0.05)
        self.notifier.start()
        self.runner = ActionRunner(audit=lambda entry: None)
        self.dispatcher = AlertDispatcher(self.engine, self.notifier, self.runner, self.lifecycle)
        self.restored = self.dispatcher.restore()
        self.resumed = self.dispatcher.resume()

    def feed(self, phase: int) -> list[Alert]:
        changed: list[Alert] = []
        for m in stream(phase):
            got = self.engine.feed(HOST, m)
            changed += got
            for run in self.dispatcher.handle(got):
                self.runner.wait(run.id, 30)
        self.notifier.flush(30)
        return changed

    def close(self) -> None:
        self.runner.stop()
        self.notifier.stop()
        self.store.close()


def main() -> None:
    db, port, log, phase, end = sys.argv[1:6]
    app = App(Path(db), int(port), Path(log))
    app.feed(int(phase))
    if int(phase) == 1:
        by_gpu = {a.gpu: a for a in app.engine.active()}
        app.dispatcher.ack(by_gpu[0].id)
        app.dispatcher.snooze(by_gpu[1].id, time.time() + 86400)
    if end == "kill":
        print("READY", flush=True)
        time.sleep(600)
    app.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
