"""Desktop notifications over D-Bus (``org.freedesktop.Notifications.Notify``), for Linux
desktops without a tray (stock GNOME). Uses jeepney, which keyring already pulls in.

``notify`` blocks on the session bus (a local socket): call it from a worker thread.
"""

from __future__ import annotations

import sys

APP_NAME = "gpufleet"


def available() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return False
    import os

    return bool(os.environ.get("DBUS_SESSION_BUS_ADDRESS"))


def notify(summary: str, body: str, urgency: int = 1, timeout_ms: int = 10_000) -> int:
    """Show one notification; returns its id. Raises OSError/jeepney errors on failure.

    ``urgency``: 0 low, 1 normal, 2 critical (the ``urgency`` hint, a byte)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    addr = DBusAddress(
        "/org/freedesktop/Notifications",
        bus_name="org.freedesktop.Notifications",
        interface="org.freedesktop.Notifications",
    )
    msg = new_method_call(
        addr,
        "Notify",
        "susssasa{sv}i",
        (
            APP_NAME,
            0,  # replaces_id: a new notification
            "dialog-warning" if urgency >= 1 else "dialog-information",
            summary,
            body,
            [],  # actions
            {"urgency": ("y", urgency), "desktop-entry": ("s", APP_NAME)},
            timeout_ms,
        ),
    )
    conn = open_dbus_connection(bus="SESSION")
    try:
        reply = conn.send_and_get_reply(msg, timeout=5.0)
    finally:
        conn.close()
    return int(reply.body[0])
