"""Fixtures for the GUI tests: the real app (Fleet of local demo sim hosts, bridge, store,
rules, window) on Qt offscreen, stopped and cleaned up (sampler daemons included) after.

Only fixtures live here; helpers that test modules import are in ``ui_helpers.py`` (a
``conftest`` module can be shadowed by another folder's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App, make_qapp, setup_theme
from pytestqt.qtbot import QtBot

# Scenario times run 5× faster (a fault 30 s in shows after 6 s); samples stay at 1 Hz.
TIME_SCALE = "0.2"


@pytest.fixture
def fast_rules(isolated_dirs: Path) -> Path:
    """A user rules.toml (the real override mechanism) so alerts fire within seconds."""
    f = paths.rules_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(
        "[rules.thermal_throttle]\nfor_s = 2\nclear_for_s = 2\n",
        encoding="utf-8",
    )
    return f


@pytest.fixture
def start_app(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[list[HostConfig]], App]]:
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", TIME_SCALE)
    # The tests follow the scenarios from their start: no pre-filled demo history.
    monkeypatch.setenv("GPUFLEET_DEMO_PREFILL_S", "0")
    monkeypatch.setenv("GPUFLEET_THEME", "dark")
    apps: list[App] = []

    def start(hosts: list[HostConfig]) -> App:
        qapp = make_qapp()
        theme = setup_theme(qapp)
        paths.ensure_private_dir(paths.demo_data_dir())
        app = App(hosts, True, theme)
        qtbot.addWidget(app.window)
        app.window.resize(1400, 900)
        app.start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        app.stop()
