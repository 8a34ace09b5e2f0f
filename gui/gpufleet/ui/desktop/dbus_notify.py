"""Desktop notifications over D-Bus (``org.freedesktop.Notifications``), for Linux desktops
without a tray (stock GNOME). Uses jeepney, which keyring already pulls in.

Each notification offers a default action ("open host"); clicking it opens that host at the
alert's moment. Checked against a real daemon (dunst, tests/ui/desktop/test_notify_dunst.py), which
taught two things the spec leaves open:

- ``ActionInvoked`` is sent to the connection that sent ``Notify`` (dunst addresses the
  signal to that unique name), so one connection both sends and listens, for the app's whole
  life: a connection closed after ``Notify`` never hears the click.
- A daemon with the ``body-markup`` capability parses the body as markup: a command line such
  as ``train.py --out <dir>`` would lose its ``<dir>``, so the body is escaped there.

``Connection`` is Qt-free and blocks on the session bus (a local socket): call ``notify`` from
a worker. ``DesktopNotifications`` is the GUI side: sends in its own one-thread pool (in
order, off the GUI thread) and re-emits a click on the GUI thread with what was sent.
"""

from __future__ import annotations

import html
import logging
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)

APP_NAME = "gpufleet"
DEFAULT_ACTION = "default"  # the spec's key for "the notification itself was clicked"
_PATH = "/org/freedesktop/Notifications"
_IFACE = "org.freedesktop.Notifications"
_KEEP = 64  # ids remembered for a click; older notifications have long expired


def available() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return False
    return bool(os.environ.get("DBUS_SESSION_BUS_ADDRESS"))


class _Sink:
    """Stands in for the queue jeepney's router fills with matched messages: hands each
    ``ActionInvoked`` to the callback right on the router's receiver thread."""

    def __init__(self, on_action: Callable[[int, str], None]) -> None:
        self.on_action = on_action

    def put_nowait(self, msg: Any) -> None:
        try:
            nid, key = msg.body
            self.on_action(int(nid), str(key))
        except Exception:  # a malformed signal from some daemon is not worth a traceback
            log.debug("ActionInvoked not understood: %r", getattr(msg, "body", None))


class Connection:
    """One session-bus connection that sends notifications and hears their actions.

    Opened on the first ``notify``; reopened after a failure (the bus or the daemon
    restarted). ``on_action(id, action_key)`` runs on jeepney's receiver thread."""

    def __init__(self, on_action: Callable[[int, str], None] | None = None) -> None:
        self.on_action = on_action
        self._lock = threading.Lock()
        self._router: Any = None
        self._conn: Any = None
        self._filter: Any = None
        self._markup: bool | None = None
        self._closed = False

    def _open(self) -> Any:
        from jeepney import DBusAddress, MatchRule, new_method_call
        from jeepney.bus_messages import message_bus
        from jeepney.io.threading import DBusRouter, open_dbus_connection
        from jeepney.wrappers import unwrap_msg

        conn = open_dbus_connection(bus="SESSION")
        router = DBusRouter(conn)
        try:
            if self.on_action is not None:
                rule = MatchRule(
                    type="signal", interface=_IFACE, member="ActionInvoked", path=_PATH
                )
                self._filter = router.filter(rule, queue=_Sink(self.on_action))
                # Daemons that broadcast the signal (rather than address it to the sender, as
                # dunst does) reach us only through a match rule on the bus.
                router.send_and_get_reply(message_bus.AddMatch(rule), timeout=5.0)
            addr = DBusAddress(_PATH, bus_name=_IFACE, interface=_IFACE)
            caps = unwrap_msg(
                router.send_and_get_reply(new_method_call(addr, "GetCapabilities"), timeout=5.0)
            )
            self._markup = "body-markup" in caps[0]
        except BaseException:
            router.close()
            conn.close()
            raise
        self._router, self._conn = router, conn
        return router

    def _drop(self) -> None:
        router, conn = self._router, self._conn
        self._router = self._conn = self._filter = None
        if router is not None:
            router.close()
        if conn is not None:
            conn.close()

    def notify(
        self,
        summary: str,
        body: str,
        urgency: int = 1,
        timeout_ms: int = 10_000,
        open_label: str | None = None,
    ) -> int:
        """Show one notification; returns its id. ``open_label``: offer the default action
        under that label. Raises OSError/jeepney errors when no daemon answers.

        ``urgency``: 0 low, 1 normal, 2 critical (the ``urgency`` hint, a byte)."""
        from jeepney import DBusAddress, new_method_call
        from jeepney.wrappers import unwrap_msg

        with self._lock:
            if self._closed:
                raise OSError("desktop notifications closed")
            router = self._router or self._open()
            addr = DBusAddress(_PATH, bus_name=_IFACE, interface=_IFACE)
            msg = new_method_call(
                addr,
                "Notify",
                "susssasa{sv}i",
                (
                    APP_NAME,
                    0,  # replaces_id: a new notification
                    "dialog-warning" if urgency >= 1 else "dialog-information",
                    summary,
                    html.escape(body, quote=False) if self._markup else body,
                    [DEFAULT_ACTION, open_label] if open_label else [],
                    {"urgency": ("y", urgency), "desktop-entry": ("s", APP_NAME)},
                    timeout_ms,
                ),
            )
            try:
                reply = router.send_and_get_reply(msg, timeout=5.0)
            except Exception:
                self._drop()  # a broken connection is reopened by the next notification
                raise
            return int(unwrap_msg(reply)[0])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()


def notify(summary: str, body: str, urgency: int = 1, timeout_ms: int = 10_000) -> int:
    """One notification on a connection of its own (no action: nothing would hear it)."""
    conn = Connection()
    try:
        return conn.notify(summary, body, urgency, timeout_ms)
    finally:
        conn.close()


class _Send(QRunnable):
    def __init__(self, owner: DesktopNotifications, args: tuple[str, str, int], payload: Any):
        super().__init__()
        self.owner, self.args, self.payload = owner, args, payload

    def run(self) -> None:
        self.owner._send_now(self.args, self.payload)


class DesktopNotifications(QObject):
    """The app's desktop notifications: ``send`` from the GUI thread; ``activated(payload)``
    on the GUI thread when the user clicks one (its default action)."""

    activated = Signal(object)  # the payload given to send()
    sent = Signal(int, object)  # the daemon's id, the payload (after the daemon took it)
    _invoked = Signal(int, str)  # from the bus receiver thread, queued to the GUI thread

    def __init__(self, open_label: str, timeout_ms: int = 10_000) -> None:
        super().__init__()
        self.open_label = open_label
        self.timeout_ms = timeout_ms
        self._ids: OrderedDict[int, Any] = OrderedDict()
        self._ids_lock = threading.Lock()
        self.conn = Connection(self._invoked.emit)
        self._invoked.connect(self._on_invoked)
        # One thread: notifications reach the daemon in the order they were raised.
        self.pool = QThreadPool()
        self.pool.setMaxThreadCount(1)

    def send(self, summary: str, body: str, urgency: int, payload: Any) -> None:
        self.pool.start(_Send(self, (summary, body, urgency), payload))

    def _send_now(self, args: tuple[str, str, int], payload: Any) -> None:
        try:
            nid = self.conn.notify(*args, timeout_ms=self.timeout_ms, open_label=self.open_label)
        except Exception as e:  # no notification daemon: the tray and the window remain
            log.info("desktop notification not sent: %s", e)
            return
        with self._ids_lock:
            self._ids[nid] = payload
            while len(self._ids) > _KEEP:
                self._ids.popitem(last=False)
        self.sent.emit(nid, payload)

    def _on_invoked(self, nid: int, key: str) -> None:
        with self._ids_lock:
            payload = self._ids.get(nid)
            known = nid in self._ids
        if known and key == DEFAULT_ACTION:
            self.activated.emit(payload)

    def close(self) -> None:
        """Waits for sends in flight, then closes the connection; later sends are dropped."""
        self.conn.close()  # waits for a send in progress; the queued ones then fail fast
        self.pool.waitForDone(10_000)
