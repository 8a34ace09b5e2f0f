"""A provider whose API changed is said on the host in the running app, not only in the status
line: a RunPod-backed host whose provider answers 410 Gone on REST v1 and has no v2 list yet
carries the drift sentence in the fleet list's tooltip and in the Cost tab's billing cell,
until a later billing sync succeeds (a local server speaking RunPod's API)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpufleet.core.text.provider_drift import drift_word
from gpufleet.ui.app import App
from pytestqt.qtbot import QtBot

from tests.support.provider_payloads import RUNPOD_PODS
from tests.support.provider_server import ProviderServer, Reply, serve
from tests.support.ui_helpers import provider_app, stop_provider_app

HOST = "a100-eval"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve(retired=("/v1",))  # RunPod's REST v1, retired: 410 Gone


def _host_tooltip(app: App) -> str:
    model = app.window.panel.model
    row = model.row_of(HOST)
    return (model.cell(row, 0).tooltip or "") if row is not None else ""


def _billing_cell(app: App) -> tuple[str, str]:
    w = app.window
    w.select_tab("cost")
    w.redraw()
    tab = w.current_tab()
    model = tab.model
    if model.rowCount() != 1:
        return "", ""
    cell = model.cell(0, model.columnCount() - 1)
    return cell.text, cell.tooltip or ""


def _synced_until(app: App, qtbot: QtBot, done: object) -> None:
    """Sync (again: the app's own first sync may be in flight) until ``done()`` holds."""
    assert callable(done)
    qtbot.waitUntil(lambda: (app.actions.sync_providers(), done())[1], timeout=30_000)


def test_drift_shows_on_the_host_until_a_sync_succeeds(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer, isolated_dirs: object
) -> None:
    pod = dict(RUNPOD_PODS[0])
    monkeypatch.setenv("RUNPOD_API_KEY", "k-test")
    monkeypatch.setenv("GPUFLEET_RUNPOD_API_URL", server.url)
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", "0.2")
    app = provider_app(qtbot, HOST, "runpod", pod["id"])
    try:
        qtbot.waitUntil(lambda: HOST in app.window.cost, timeout=60_000)
        # No /v2/pods route (404) and v1 gone (410): the API changed under gpufleet.
        _synced_until(app, qtbot, lambda: "API changed" in _host_tooltip(app))
        tip = _host_tooltip(app)
        assert "RunPod's API changed (GET /v2/pods: HTTP 404" in tip and "HTTP 410" in tip
        assert "gpufleet needs an update" in tip and "refused" not in tip
        assert "billing is not synced from RunPod" in tip
        text, cell_tip = _billing_cell(app)
        assert text.endswith(" · " + drift_word()), text
        # The tooltip leads with the sentence, after the cell's own text where the column is
        # too narrow for it (the Cost tab then repeats it whole as the tooltip's first line).
        lines = cell_tip.split("\n")
        first = lines[1] if lines[0] == text else lines[0]
        assert first.startswith("RunPod's API changed (GET /v2/pods: "), cell_tip
        assert server.calls("GET", "/v2/pods") and server.calls("GET", "/v1/pods")
        # The provider answers on v2 (or gpufleet was updated): the next sync clears it.
        server.route("GET", "/v2/pods", Reply(200, [pod]))
        _synced_until(app, qtbot, lambda: "API changed" not in _host_tooltip(app))
        app.window.update_summaries()
        text, cell_tip = _billing_cell(app)
        assert text == "running" and "API changed" not in cell_tip
    finally:
        stop_provider_app(app, HOST)
