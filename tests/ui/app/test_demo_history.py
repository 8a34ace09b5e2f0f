"""The demo's prefilled half hour is in the demo's own history store, not only in the
window's memory: the "Thermal throttling" alert of h100-a exported from the window holds
those minutes and the alert itself, and ``gpufleet diagnose demo:h100-a``, ``gpufleet export
demo:h100-a`` and ``gpufleet compare demo:h100-a:…`` read them (they refused demo hosts). A
second demo start replaces the minutes it prefills instead of doubling them."""

from __future__ import annotations

import csv
import io
import json
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config import paths
from gpufleet.core.fleet.demo import demo_host
from gpufleet.core.history.store import Store
from gpufleet.core.history.timeparse import parse_time
from gpufleet.core.model.alert import Alert
from gpufleet.ui.app import App, make_qapp, setup_theme
from gpufleet.ui.controllers.evidence_export import EvidenceExporter
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import prefilled_demo_app

HOST = "h100-a"


@pytest.fixture
def demo_app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    app = prefilled_demo_app(qtbot, monkeypatch, HOST)
    yield app
    app.stop()


def _thermal(app: App) -> Alert | None:
    active = app.pipeline.alerting.active()
    return next((a for a in active if a.rule_id == "thermal_throttle"), None)


def _start_and_wait(qtbot: QtBot, app: App) -> None:
    started = time.time()
    app.start()
    # The prefill is in once the rule engine holds its thermal alert; the live sampler runs
    # once a sample newer than the prefill's end (the start) arrives.
    qtbot.waitUntil(lambda: _thermal(app) is not None, timeout=90_000)
    qtbot.waitUntil(
        lambda: (s := app.live.latest(HOST)) is not None and s.t > started + 1, timeout=60_000
    )


def test_the_prefilled_half_hour_is_recorded_and_read_back(
    qtbot: QtBot, demo_app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.time()
    _start_and_wait(qtbot, demo_app)
    alert = _thermal(demo_app)
    assert alert is not None
    # It fired early in the simulated half hour (GPU 5's airflow is blocked 10 s in).
    assert alert.started_t < started - 25 * 60, alert

    # The window's "Export evidence…" on that alert.
    ex = demo_app.evidence
    assert isinstance(ex, EvidenceExporter)
    ex.choose_path = lambda name: str(tmp_path / name)
    with qtbot.waitSignal(ex.finished, timeout=90_000) as sig:
        ex.export_alert(alert)
    z = zipfile.ZipFile(sig.args[0].path)
    ids = {a["rule_id"] for a in json.loads(z.read("alerts.json"))}
    assert "thermal_throttle" in ids, ids
    # The live daemon the demo started itself after its history is no "restart".
    assert "sampler_restarted" not in ids, ids
    assert not [a for a in demo_app.pipeline.alerting.active() if a.rule_id.startswith("sampler_")]
    rows = list(csv.DictReader(io.StringIO(z.read("metrics.csv").decode())))
    ts = sorted({parse_time(r["t"]) for r in rows})
    assert ts[-1] - ts[0] > 25 * 60, (ts[0], ts[-1])  # not the 1.5 live minutes

    demo_app.stop()  # the store closed: the CLI reads what the window wrote
    capsys.readouterr()
    assert main(["diagnose", f"demo:{HOST}", "--window", "35m", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["host"] == HOST and out["samples"] > 800, out["samples"]
    assert any(a["rule_id"] == "thermal_throttle" for a in out["alerts"])
    dest = tmp_path / "cli.zip"
    assert main(["export", f"demo:{HOST}", "--since=-35m", "--bundle", str(dest)]) == 0
    cli_ids = {a["rule_id"] for a in json.loads(zipfile.ZipFile(dest).read("alerts.json"))}
    assert "thermal_throttle" in cli_ids
    # Two windows of the prefilled half hour compared (they refused demo hosts too).
    spec_a, spec_b = f"demo:{HOST}:-25m/10m", f"demo:{HOST}:-13m/10m"
    assert main(["compare", spec_a, spec_b, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)
    # A demo name that is not one: the demo hosts named.
    assert main(["diagnose", "demo:nope"]) != 0
    assert "demo:h100-a" in capsys.readouterr().err


def test_a_second_demo_start_replaces_the_minutes_it_prefills(
    qtbot: QtBot, demo_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    _start_and_wait(qtbot, demo_app)
    demo_app.stop()
    with Store(paths.history_file(demo=True), read_only=True) as st:
        first = [s.t for s in st.samples(HOST, 0, time.time() + 60)]
    h = demo_host(HOST)
    assert h is not None
    again = App([h], True, setup_theme(make_qapp()))
    qtbot.addWidget(again.window)
    try:
        _start_and_wait(qtbot, again)
    finally:
        again.stop()
    with Store(paths.history_file(demo=True), read_only=True) as st:
        second = [s.t for s in st.samples(HOST, 0, time.time() + 60)]
        states = [r for r in st.alert_states(HOST, 0, time.time() + 60)]
    # One run's samples per moment: no time holds two samples of one GPU.
    assert len(second) == len(set(second)), "two runs' samples interleaved"
    assert min(second) >= min(first) - 1
    thermal = [r for r in states if r["rule_id"] == "thermal_throttle"]
    assert len(thermal) == 1, thermal  # the first run's alert in the replaced minutes went
