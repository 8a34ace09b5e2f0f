"""Settings ▸ Providers: a provider's API key is tested, saved to the OS keyring (a private
Secret Service), shown as stored, overridden by its environment variable, and removed, all in
the window; the no-key error then names the variable and this Settings page (not ssh-agent
nor the keyring entry's internal name). Against a local server speaking RunPod's API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpufleet.core.providers import credentials
from gpufleet.core.providers.base import ProviderError
from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.settings import SettingsDialog
from pytestqt.qtbot import QtBot

from tests.support.provider_payloads import RUNPOD_GRAPHQL, RUNPOD_PODS
from tests.support.provider_server import ProviderServer, Reply, serve

TYPED = "rp-typed-key-1"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


def test_enter_test_store_override_and_remove_a_key(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer, secret_service: None
) -> None:
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    monkeypatch.setenv("GPUFLEET_RUNPOD_API_URL", server.url)
    server.route("GET", "/v2/pods", Reply(200, RUNPOD_PODS))
    server.route("POST", "/graphql", Reply(200, RUNPOD_GRAPHQL))
    credentials.delete_key("runpod")
    make_qapp()
    dlg = SettingsDialog()
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.tabs.setCurrentWidget(dlg.providers)
    row = dlg.providers.rows["runpod"]
    qtbot.waitUntil(lambda: "no key" in row.status.text(), timeout=10_000)
    assert "RUNPOD_API_KEY" in row.status.text() and not row.remove.isEnabled()

    row.key.setText(TYPED)
    row.test.click()
    qtbot.waitUntil(lambda: "the key works" in row.outcome.text(), timeout=10_000)
    assert "2 instance(s)" in row.outcome.text()
    assert server.seen[0].headers["authorization"] == f"Bearer {TYPED}"

    row.save.click()
    qtbot.waitUntil(lambda: "stored in the keyring" in row.status.text(), timeout=10_000)
    assert row.key.text() == "" and row.remove.isEnabled()
    found = credentials.find_key("runpod")
    assert (found.value, found.source) == (TYPED, "keyring")

    monkeypatch.setenv("RUNPOD_API_KEY", "rp-env")
    dlg.providers.refresh("runpod")
    qtbot.waitUntil(lambda: "from RUNPOD_API_KEY" in row.status.text(), timeout=10_000)
    assert credentials.find_key("runpod").source == "env:RUNPOD_API_KEY"  # the env var wins
    monkeypatch.delenv("RUNPOD_API_KEY")
    dlg.providers.refresh("runpod")
    qtbot.waitUntil(lambda: row.remove.isEnabled(), timeout=10_000)

    row.remove.click()
    qtbot.waitUntil(lambda: "removed from the keyring" in row.outcome.text(), timeout=10_000)
    qtbot.waitUntil(lambda: "no key" in row.status.text(), timeout=10_000)
    with pytest.raises(ProviderError) as err:
        credentials.find_key("runpod")
    text = str(err.value)
    assert "RUNPOD_API_KEY" in text and "Settings ▸ Providers" in text
    assert "ssh-agent" not in text and "provider/runpod" not in text
    dlg.close()
