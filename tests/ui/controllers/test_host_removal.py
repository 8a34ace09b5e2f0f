"""Hosts ▸ Remove selected host…: the window asks whether the host's history stays or goes,
then the host is out of the fleet and config.toml (as `gpufleet hosts remove` does), and its
recorded history is kept or deleted as answered; the other hosts go on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.configfile import AppConfig, load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history.store import Store
from gpufleet.ui.app import App, make_qapp, setup_theme
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot


def _hosts() -> list[HostConfig]:
    # Two sim hosts configured as the user's own (recording to the real data dir).
    return [h for h in demo_hosts() if h.name in ("a100-eval", "4090-x2")]


@pytest.fixture
def app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv("GPUFLEET_THEME", "dark")
    hosts = _hosts()
    save_config(AppConfig(hosts=hosts))
    a = App(hosts, False, setup_theme(make_qapp()))
    qtbot.addWidget(a.window)
    a.start()
    yield a
    a.stop()
    Fleet(hosts).stop_samplers()  # the removed hosts' daemons too


def _answer(qtbot: QtBot, app: App, name: str, button: str) -> None:
    app.window.select_host(name)
    box = app.actions.removal.ask()
    assert isinstance(box, QMessageBox) and name in box.text()
    (b,) = [x for x in box.buttons() if x.text() == button]
    b.click()
    qtbot.waitUntil(lambda: name in app.window.outcome_label.text(), timeout=20_000)


def test_remove_keeping_or_deleting_the_history(qtbot: QtBot, app: App) -> None:
    store = app.store
    assert store is not None
    qtbot.waitUntil(lambda: {"a100-eval", "4090-x2"} <= set(store.hosts()), timeout=60_000)
    _answer(qtbot, app, "a100-eval", "Remove, keep its history")
    assert "history is kept" in app.window.outcome_label.text()
    assert "a100-eval" not in {h.name for h in app.fleet.hosts()}
    assert "a100-eval" not in app.window.hosts
    qtbot.waitUntil(lambda: load_config().host("a100-eval") is None, timeout=10_000)
    _answer(qtbot, app, "4090-x2", "Remove and delete its history")
    assert "history deleted" in app.window.outcome_label.text()
    assert load_config().hosts == []
    store.flush()
    assert "a100-eval" in store.hosts() and "4090-x2" not in store.hosts()
    with Store(paths.history_file(), read_only=True) as ro:
        assert "4090-x2" not in ro.hosts()
