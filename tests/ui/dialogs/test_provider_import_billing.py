"""The window's "Import from a provider…" records billing states as `gpufleet hosts import`
does: a stopped vast.ai instance is billed as storage, not running (billing.json and the cost
tracker), and gpufleet does not connect to it (no reconnect loop, no "unreachable" alert)
until it runs again; a running one is connected to. Against a local server speaking vast.ai's
API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpufleet.core.cost.billing import BillingLedger
from gpufleet.ui.app import App, make_qapp, setup_theme
from gpufleet.ui.dialogs.hosts import ProviderImportDialog
from pytestqt.qtbot import QtBot

from tests.support.provider_payloads import VAST_INSTANCES
from tests.support.provider_server import ProviderServer, Reply, serve


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


def test_import_bills_a_stopped_instance_as_storage_and_does_not_connect(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, server: ProviderServer
) -> None:
    monkeypatch.setenv("VAST_API_KEY", "k-test")
    monkeypatch.setenv("GPUFLEET_VAST_API_URL", server.url)
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    app = App([], False, setup_theme(make_qapp()))
    qtbot.addWidget(app.window)
    app.start()
    try:
        app.actions.import_from_provider()
        (dlg,) = app.window.findChildren(ProviderImportDialog)
        dlg.provider.setCurrentText("vast")
        dlg.list_button.click()
        qtbot.waitUntil(lambda: dlg.ok.isEnabled(), timeout=10_000)
        assert dlg.list.count() == 2
        with qtbot.waitSignal(dlg.imported, timeout=10_000):
            dlg.ok.click()
        names = {h.provider_id: h.name for h in app.fleet.hosts()}
        running, stopped = names["4242001"], names["4242002"]
        ledger = BillingLedger.load()
        assert ledger.state(running) == "running" and ledger.state(stopped) == "storage"
        # Not connected to: no session, shown as stopped with the reason.
        assert app.fleet.session(stopped) is None and app.fleet.session(running) is not None
        st = app.fleet.status(stopped)
        assert st.state == "stopped" and "stopped at the provider" in (st.reason or "")
        cost = app.pipeline.engine.cost
        qtbot.waitUntil(lambda: cost.billing(stopped) == "storage", timeout=10_000)
        qtbot.waitUntil(
            lambda: app.window.states.get(stopped, ("", None))[0] == "stopped", timeout=10_000
        )
        assert not [a for a in app.pipeline.alerting.active() if a.host == stopped]
        # It runs again (set by hand, as after a resume): connected to again.
        app.actions.set_billing(stopped, "running")
        qtbot.waitUntil(lambda: app.fleet.session(stopped) is not None, timeout=10_000)
    finally:
        app.stop()
