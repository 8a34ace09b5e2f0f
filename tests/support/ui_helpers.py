"""Plain helpers the GUI tests import (host picks, waits, host edits).

They live here, not in a ``conftest.py``: a test imports helpers from tests.support, and a
conftest holds only fixtures (pytest finds those by itself).
"""

from __future__ import annotations

import dataclasses

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.app import App
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
