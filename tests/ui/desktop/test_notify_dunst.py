"""Desktop notifications against a real notification daemon: dunst on Xvfb, on a session bus
of the test's own (a dbus-daemon the fixture starts).

The bus is the test's own because tools/run-tests gives the whole run one session bus, and
pytest-xdist runs another test file beside this one: its demo apps fire the same throttle
alert on the same host and would send them to this dunst while it owns the name.

The demo h100-a's thermal-throttle scenario fires the real rule; the app's notifier sends it
over D-Bus; ``dunstctl history`` shows what dunst received (app name, summary, body, the
default action). The rate limit holds at the daemon: the same alert again is not sent. A
click, driven headless with ``dunstctl action 0`` (dunst emits ``ActionInvoked`` to our
connection), opens the host at the alert's moment.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.ui.app import App
from gpufleet.ui.desktop.tray import Notification
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo

NAME = "org.freedesktop.Notifications"


def _name_has_owner(name: str) -> bool:
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection
    from jeepney.wrappers import unwrap_msg

    conn = open_dbus_connection(bus="SESSION")
    try:
        reply = conn.send_and_get_reply(message_bus.NameHasOwner(name), timeout=5.0)
        return bool(unwrap_msg(reply)[0])
    finally:
        conn.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _dunstctl(*args: str) -> str:
    return subprocess.run(
        ["dunstctl", *args], check=True, capture_output=True, text=True, timeout=10
    ).stdout


def dunst_history() -> list[dict[str, Any]]:
    """The notifications dunst has closed, newest first, as plain dicts."""
    data = json.loads(_dunstctl("history"))["data"][0]
    return [{k: v["data"] for k, v in n.items()} for n in data]


@pytest.fixture
def private_bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A session bus only this test uses: a dbus-daemon of its own, its address in
    DBUS_SESSION_BUS_ADDRESS for the test (the app, dunst and dunstctl); stopped after it."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("not installed: dbus-daemon (CI installs dbus)")
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().decode().strip()  # printed once it listens
        assert address, "dbus-daemon did not print its address"
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address
    finally:
        _stop(bus)
        if bus.stdout is not None:
            bus.stdout.close()


@pytest.fixture
def dunst(tmp_path: Path, private_bus: str) -> Iterator[subprocess.Popen[bytes]]:
    """dunst on a private Xvfb display, owning org.freedesktop.Notifications on the test's
    own bus; both killed after the test."""
    missing = [b for b in ("dunst", "dunstctl", "Xvfb") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (CI installs dunst and xvfb)")
    assert not _name_has_owner(NAME), f"{NAME} is already owned on a bus of the test's own"
    # Xvfb picks a free display itself and writes its number to the pipe.
    r, w = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-nolisten", "tcp", "-screen", "0", "800x600x24"],
        pass_fds=(w,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(w)
    procs = [xvfb]
    try:
        with os.fdopen(r, "rb") as f:
            display = f.readline().decode().strip()  # blocks until Xvfb is ready
        assert display, "Xvfb did not report a display"
        rc = tmp_path / "dunstrc"
        rc.write_text("[global]\n    idle_threshold = 0\n    sort = yes\n", encoding="utf-8")
        env = dict(os.environ, DISPLAY=f":{display}")
        env.pop("WAYLAND_DISPLAY", None)
        d = subprocess.Popen(
            ["dunst", "-config", str(rc)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(d)
        deadline = time.monotonic() + 15
        while not _name_has_owner(NAME):
            assert d.poll() is None, "dunst exited at start"
            assert time.monotonic() < deadline, "dunst did not take the bus name"
            time.sleep(0.05)  # polling the bus for the name: a wait on a condition
        yield d
    finally:
        for p in reversed(procs):
            _stop(p)


def test_throttling_reaches_dunst_rate_limited_and_its_action_opens_the_host(
    qtbot: QtBot,
    dunst: subprocess.Popen[bytes],
    start_app: Callable[[list[HostConfig]], App],
    fast_rules: Path,
) -> None:
    app = start_app(demo("h100-a"))
    desktop = app.tray.desktop
    assert desktop is not None, "D-Bus notifications not enabled on a session bus"
    sent: list[tuple[int, Notification]] = []
    clicked: list[Notification] = []
    desktop.sent.connect(lambda nid, n: sent.append((nid, n)))
    desktop.activated.connect(clicked.append)

    def throttle_sent() -> list[tuple[int, Notification]]:
        return [
            (i, n) for i, n in sent if n.host == "h100-a" and "thermal" in n.alert.rule_id.lower()
        ]

    # 1. The real scenario: GPU 5's airflow is blocked, the rule fires, dunst gets it.
    qtbot.waitUntil(lambda: bool(throttle_sent()), timeout=60_000)
    nid, note = throttle_sent()[0]
    assert note.alert.gpu == 5
    _dunstctl("close-all")  # dunst lists a notification in its history once it is closed
    got = [h for h in dunst_history() if h["id"] == nid]
    assert len(got) == 1, dunst_history()
    h = got[0]
    assert h["appname"] == "gpufleet"
    assert h["summary"] == note.title and "GPU 5 of h100-a" in h["summary"]
    # dunst parses bodies as markup (capability body-markup): we send it escaped.
    assert html.unescape(h["body"]) == note.body and note.body
    assert h["default_action_name"] == "default"

    # 2. The rate limit holds at the daemon: the same alert again is not sent. A critical
    # alert on another GPU goes out after it (sends are in order, one at a time), so once
    # that one is in, the duplicate would be too.
    app.tray.notifier.on_alerts_changed([note.alert])
    later = dataclasses.replace(
        note.alert,
        id=note.alert.id + "-gpu3",
        gpu=3,
        severity="critical",
        started_t=note.alert.started_t - 90.0,
    )
    app.tray.notifier.on_alerts_changed([later])
    qtbot.waitUntil(lambda: any(n.alert is later for _, n in sent), timeout=15_000)
    assert [n.alert.gpu for _, n in throttle_sent()] == [5, 3]
    nid2 = next(i for i, n in sent if n.alert is later)

    # 3. The click: dunst's default action on the displayed notification (the critical one
    # sorts first) emits ActionInvoked to our connection; the window opens h100-a at the
    # alert's moment on the Clocks & throttling tab.
    w = app.window
    w.set_range(300.0)
    w.tabs.setCurrentIndex(0)
    assert w.follow_live
    _dunstctl("action", "0")
    qtbot.waitUntil(lambda: bool(clicked), timeout=10_000)
    assert clicked[0].alert is later
    assert w.isVisible() and w.selected_host == "h100-a"
    assert w.tabs.currentIndex() == 1
    assert not w.follow_live and w.custom is not None
    assert w.custom[0] < later.started_t < w.custom[1]

    _dunstctl("close-all")
    hist = dunst_history()
    sent_now = [(i, n.title, n.alert.id if n.alert else None) for i, n in sent]
    assert sum(1 for x in hist if x["summary"] == note.title) == 1, (sent_now, hist)
    assert any(x["id"] == nid2 for x in hist)
