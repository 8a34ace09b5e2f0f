"""The desktop app's Prometheus pieces: Alertmanager's webhook reaches the alert list and the
tray (a wrong token is refused and shows nothing), and a host group read from a real
Prometheus plots the history it scraped from a simulated exporter, while a Prometheus that is
down shows its reason in the fleet list (the window keeps running)."""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gpufleet.core.config import paths, secrets
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from gpufleet.ui.desktop.tray import Notification
from pytestqt.qtbot import QtBot

from tests.support import keyring_lock, promstack
from tests.support.ui_helpers import demo


def write_config(text: str) -> None:
    f = paths.config_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("schema_version = 1\n" + text, encoding="utf-8")


def post(url: str, body: dict, token: str) -> int:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


WEBHOOK = {
    "version": "4",
    "status": "firing",
    "receiver": "laptop",
    "alerts": [
        {
            "status": "firing",
            "labels": {
                "alertname": "GpufleetThermalThrottle",
                "severity": "critical",
                "Hostname": "team-node-7",
                "gpu": "3",
            },
            "annotations": {
                "summary": "team-node-7: Thermal throttling on GPU 3",
                "description": "GPU 3 has been slowed by its temperature for 30 s.",
            },
            "startsAt": "2026-03-01T10:00:00Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": "abc123",
        }
    ],
}


def scraped_points(prom: promstack.Prometheus) -> int:
    now = time.time()
    data = prom.api(
        "/api/v1/query_range",
        query='DCGM_FI_DEV_GPU_TEMP{gpu="0"}',
        start=str(now - 60),
        end=str(now),
        step="1",
    )
    return len(data["result"][0]["values"]) if data["result"] else 0


@pytest.fixture
def am_token() -> Iterator[str]:
    if not os.environ.get("GPUFLEET_TEST_KEYRING_HOME") or secrets.store_available():
        pytest.skip("needs a private Secret Service for the shared token: run tools/run-tests")
    token = uuid.uuid4().hex
    with keyring_lock.holding("alertmanager-token"):
        secrets.set_secret("alertmanager", "token", token)
        yield token
        secrets.delete_secret("alertmanager", "token")


def test_alertmanager_webhook_shows_in_the_alert_list_and_tray(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], am_token: str
) -> None:
    write_config('[settings]\nalertmanager_listen = "127.0.0.1:0"\n')
    # One small demo host: the window always has a host to draw.
    app = start_app(demo("4090-x2"))
    rx = app.prom.receiver
    assert rx is not None, app.prom.problems
    notes: list[Notification] = []
    app.tray.notifier.notified.connect(notes.append)

    def external() -> list:  # the demo host's own alerts (its power cap) are not ours
        return [a for a in app.window.alerts.values() if a.condition == "alertmanager"]

    assert post(rx.url, WEBHOOK, "wrong-token") == 401
    qtbot.wait(300)
    assert external() == [] and not any("team-node-7" in n.title for n in notes)

    assert post(rx.url, WEBHOOK, am_token) == 200
    qtbot.waitUntil(lambda: len(external()) == 1, timeout=10_000)
    (alert,) = external()
    assert (alert.host, alert.gpu, alert.severity) == ("team-node-7", 3, "critical")
    app.window.update_summaries()
    # One line per alert names its host; the whole sentence is its tooltip.
    panel = app.window.panel
    lines = [line for _a, line in panel.alert_rows()]
    assert any(t.startswith("✖ team-node-7") for t in lines), lines
    tips = [panel.alerts.item(i).toolTip() for i in range(panel.alerts.count())]
    assert any("GPU 3 has been slowed by its temperature" in t for t in tips), tips
    qtbot.waitUntil(lambda: any("team-node-7" in n.title for n in notes), timeout=10_000)

    resolved = json.loads(json.dumps(WEBHOOK))
    resolved["alerts"][0].update(status="resolved", endsAt="2026-03-01T10:05:00Z")
    assert post(rx.url, resolved, am_token) == 200
    qtbot.waitUntil(lambda: external() == [], timeout=10_000)


@pytest.mark.skipif(not promstack.have_prometheus(), reason="needs Debian's prometheus package")
def test_prometheus_host_group_plots_scraped_history_and_a_down_one_says_why(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App], tmp_path: Path
) -> None:
    exporter = promstack.start_sampler_exporter(tmp_path, "thermal-throttle-h100", seed=4)
    prom = promstack.Prometheus(tmp_path, {"sampler": [exporter.target]})
    try:
        prom.start()
        promstack.wait_until(lambda: scraped_points(prom) >= 4, 30, "4 s of scraped history")
        down = promstack.free_port()
        write_config(
            f'[[prometheus]]\nname = "team"\nurl = "{prom.url}"\ninterval_s = 1.0\n'
            "backfill_s = 300.0\nprice_per_hour = 2.0\n\n"
            f'[[prometheus]]\nname = "gone"\nurl = "http://127.0.0.1:{down}"\n'
        )
        app = start_app(demo("4090-x2"))
        w = app.window
        host = "team/sim-node"
        qtbot.waitUntil(
            lambda: host in w.hosts and app.live.latest(host) is not None, timeout=30_000
        )
        series = app.live.series(host, 0, "temp_gpu_c")
        assert len(series) >= 4  # the backfilled history, not only the live point
        w.select_host(host)
        w.select_tab("thermal")
        w.redraw()
        thermal = w.tab_list[2]
        curves = [c for c in thermal.temp.curves.values() if c.getData()[0] is not None]
        assert any(len(c.getData()[0]) >= 4 for c in curves)
        # The down one: its reason in words, and the window still answers.
        qtbot.waitUntil(lambda: w.states.get("gone", ("",))[0] == "reconnecting", timeout=15_000)
        reason = w.states["gone"][1] or ""
        assert reason.startswith(f"cannot reach Prometheus at http://127.0.0.1:{down}")
        # Cost from the configured price.
        qtbot.waitUntil(lambda: host in w.cost, timeout=15_000)
        assert w.cost[host].rate_per_h == 2.0
    finally:
        prom.stop()
        exporter.stop()
