"""Plain helpers the GUI tests import (host picks, waits, host edits).

They live here, not in a ``conftest.py``: a test imports helpers from tests.support, and a
conftest holds only fixtures (pytest finds those by itself).
"""

from __future__ import annotations

import dataclasses

import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_host, demo_hosts
from gpufleet.ui.app import App, make_qapp, setup_theme
from gpufleet.ui.offscreen.simfeed import DEMO_PREFILL_S
from pytestqt.qtbot import QtBot


def demo(*names: str) -> list[HostConfig]:
    hosts = {h.name: h for h in demo_hosts()}
    return [hosts[n] for n in names]


def wait_streaming(qtbot: QtBot, app: App, timeout_ms: int = 60_000) -> None:
    qtbot.waitUntil(
        lambda: all(
            app.window.states.get(h, ("",))[0] == "streaming" and app.live.latest(h) is not None
            for h in app.window.hosts
        ),
        timeout=timeout_ms,
    )


def replace_host(h: HostConfig, **kw: object) -> HostConfig:
    return dataclasses.replace(h, **kw)  # type: ignore[arg-type]


def prefilled_demo_app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, name: str) -> App:
    """The demo app of one demo host as `gpufleet --demo` opens it (its half hour of
    history prefilled, the live sampler going on from there), not started yet."""
    monkeypatch.setenv("GPUFLEET_THEME", "dark")
    monkeypatch.setenv("GPUFLEET_SIM_START_S", f"{DEMO_PREFILL_S:g}")
    h = demo_host(f"demo:{name}")
    assert h is not None
    paths.ensure_private_dir(paths.demo_data_dir())
    app = App([h], True, setup_theme(make_qapp()))
    qtbot.addWidget(app.window)
    app.window.resize(1366, 768)
    return app


def provider_app(qtbot: QtBot, host_name: str, provider: str, instance_id: str) -> App:
    """The running app (not the demo) watching one demo host tied to a provider instance,
    started; the caller points the provider at its local server and stops the app."""
    base = next(h for h in demo_hosts() if h.name == host_name)
    host = dataclasses.replace(base, provider=provider, provider_id=instance_id)
    qapp = make_qapp()
    paths.ensure_private_dir(paths.demo_data_dir())
    app = App([host], False, setup_theme(qapp))
    qtbot.addWidget(app.window)
    app.start()
    return app


def stop_provider_app(app: App, host_name: str) -> None:
    """Stops an app made by ``provider_app`` and the local daemon it left sampling: not a
    demo app, so it leaves its host's daemon running, as it would a real host's."""
    app.stop()
    assert app.fleet.stop_samplers([host_name]) == {host_name: None}
