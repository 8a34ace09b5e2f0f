"""The evidence bundle around a crash lists the alerts that fired in its window, from the
alert lifecycle table (with what was sent and run for each), as ``gpufleet export --bundle``
writes it."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

from gpufleet.cli.main import main
from gpufleet.core.alerts.lifecycle import AlertLifecycle, channel
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config import paths
from gpufleet.core.history.store import Store
from gpufleet.core.pipeline.dispatch import AlertDispatcher

from tests.support import synth

HOST = "a100-train"


def test_bundle_lists_the_alerts_of_its_window(tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - 3 * 3600)
    samples = synth.make_samples(t0, 3600, gpus=2)
    crash = samples[1800].t  # GPU 0's thermal episode starts here
    hello = synth.make_hello(HOST, 2)
    with Store(paths.history_file(demo=True)) as st:
        lifecycle = AlertLifecycle(st)
        engine = RuleEngine(load_rules(include_user=False))
        dispatcher = AlertDispatcher(engine, lifecycle=lifecycle)
        st.write(HOST, hello)
        engine.feed(HOST, hello)
        for s in samples:
            st.write(HOST, s)
            dispatcher.handle(engine.feed(HOST, s))
        fired = [a for a in lifecycle.alerts(HOST, 0, float("inf"))]
        assert fired, "the synthetic thermal episode fires an alert"
        lifecycle.mark_sent(fired[0]["id"], channel("webhook", "team", "firing"), crash + 40)
    out = tmp_path / "evidence.zip"
    around = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(crash))
    rc = main(["export", HOST, "--demo", "--around", around, "--window", "30m", "--bundle",
               str(out)])  # fmt: skip
    assert rc == 0
    z = zipfile.ZipFile(out)
    alerts = json.loads(z.read("alerts.json"))
    thermal = [a for a in alerts if a["rule_id"] == "thermal_throttle"]
    assert thermal and thermal[0]["gpu"] == 0 and thermal[0]["host"] == HOST
    assert abs(thermal[0]["started_t"] - crash) < 300
    assert "webhook:team:firing" in alerts[0]["sent"]
    assert f"GPU 0 of {HOST}" in thermal[0]["title"]
    summary = z.read("summary.txt").decode()
    assert f"Alerts: {len(alerts)}:" in summary and thermal[0]["title"] in summary
    # Outside the window: none of them.
    early = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t0 + 300))
    out2 = tmp_path / "early.zip"
    rc = main(["export", HOST, "--demo", "--around", early, "--window", "5m", "--bundle",
               str(out2)])  # fmt: skip
    assert rc == 0
    assert json.loads(zipfile.ZipFile(out2).read("alerts.json")) == []
