"""Import from a provider in the GUI: the dialog lists the account's changes (fetched off the
GUI thread from a local server speaking vast.ai's API), the checked ones are saved, a refused
key is one clear line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpufleet.core.config.configfile import load_config
from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.hosts import ProviderImportDialog
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.support.provider_payloads import VAST_INSTANCES
from tests.support.provider_server import ProviderServer, Reply, serve


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


def test_lists_then_imports_the_checked_instances(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    make_qapp()
    monkeypatch.setenv("VAST_API_KEY", "k-test")
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    dlg = ProviderImportDialog(None, [], api_url=server.url)
    qtbot.addWidget(dlg)
    dlg.provider.setCurrentText("vast")
    dlg.list_button.click()
    qtbot.waitUntil(lambda: dlg.ok.isEnabled(), timeout=10_000)
    assert dlg.list.count() == 2
    assert "add train-a: ssh -p 31922 root@ssh5.vast.ai, 0.412 USD/h" in dlg.list.item(0).text()
    dlg.list.item(1).setCheckState(Qt.CheckState.Unchecked)
    with qtbot.waitSignal(dlg.imported, timeout=10_000) as sig:
        dlg.ok.click()
    ((host, old),) = sig.args[0]
    assert (host.name, old, host.provider_id) == ("train-a", None, "4242001")
    assert [h.name for h in load_config().hosts] == ["train-a"]


def test_refused_key_is_one_line(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    make_qapp()
    monkeypatch.setenv("RUNPOD_API_KEY", "k-test")
    server.route("GET", "/v2/pods", Reply(401, {"error": "unauthorized"}))
    dlg = ProviderImportDialog(None, [], api_url=server.url)
    qtbot.addWidget(dlg)
    dlg.provider.setCurrentText("runpod")
    dlg.list_button.click()
    qtbot.waitUntil(lambda: "refused" in dlg.status.text(), timeout=10_000)
    assert "RUNPOD_API_KEY" in dlg.status.text() and "k-test" not in dlg.status.text()
    assert not dlg.ok.isEnabled() and dlg.list_button.isEnabled()


def test_drift_is_said_as_drift_not_as_a_key(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    make_qapp()
    monkeypatch.setenv("RUNPOD_API_KEY", "k-test")
    server.route("GET", "/v2/pods", Reply(410, {"detail": "Gone", "status": 410}))
    dlg = ProviderImportDialog(None, [], api_url=server.url)
    qtbot.addWidget(dlg)
    dlg.provider.setCurrentText("runpod")
    dlg.list_button.click()
    qtbot.waitUntil(lambda: "API changed" in dlg.status.text(), timeout=10_000)
    text = dlg.status.text()
    assert "update gpufleet" in text and "GET /v2/pods: HTTP 410" in text
    assert "refused" not in text and "RUNPOD_API_KEY" not in text
