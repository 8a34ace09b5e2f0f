"""config.toml watched while the app runs: a host added with the real `gpufleet hosts add` (a
separate process) joins the running fleet and the window within 2 s; removed, it leaves; a
broken file is said and changes nothing; the demo hosts (not the file's) stay throughout."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from gpufleet.ui.controllers.config_watch import ConfigWatch
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo, wait_streaming


def cli(*argv: str) -> None:
    subprocess.run([sys.executable, "-m", "gpufleet", *argv], check=True, capture_output=True)


def test_a_host_added_elsewhere_appears_without_a_restart(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    app = start_app(demo("a100-train"))
    wait_streaming(qtbot, app)
    watch = ConfigWatch(app.fleet, app.window, bridge=app.bridge, rules=app.pipeline.engine)
    watch.start()
    try:
        cli("hosts", "add", "sim1", "--backend", "sim", "--scenario", "healthy-8xa100")
        t = time.monotonic()
        # A hang guard, not a speed test: the figure is printed below.
        qtbot.waitUntil(lambda: "sim1" in app.window.hosts, timeout=60_000)
        took = time.monotonic() - t
        assert "sim1" in {h.name for h in app.fleet.hosts()}
        assert "a100-train" in app.window.hosts  # the demo host is not the file's
        # Its session runs: the fleet reports on it (the name resolves nowhere, so it
        # cannot connect; the CLI adds SSH hosts only), and the list shows it.
        qtbot.waitUntil(
            lambda: app.window.states.get("sim1", ("connecting",))[0] != "connecting",
            timeout=60_000,
        )
        app.window.update_summaries()
        assert "sim1" in app.window.panel.host_order()
        print(f"appeared {took:.2f} s after `hosts add` returned")

        # A broken file: said once, nothing changes.
        good = paths.config_file().read_text()
        paths.config_file().write_text("[[hosts]\n")
        qtbot.waitUntil(lambda: "not applied" in app.window.outcome_label.text(), timeout=5_000)
        assert "sim1" in app.window.hosts
        paths.config_file().write_text(good)

        cli("hosts", "remove", "sim1")
        qtbot.waitUntil(lambda: "sim1" not in app.window.hosts, timeout=5_000)
        assert "sim1" not in {h.name for h in app.fleet.hosts()}
        assert "a100-train" in app.window.hosts
    finally:
        watch.stop()
