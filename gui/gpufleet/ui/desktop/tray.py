"""The tray icon (coloured and shaped by the fleet's worst state), its menu, and the
rate-limited notifier for alerts (throttling first of all).

Where no system tray exists (``QSystemTrayIcon.isSystemTrayAvailable()`` is false, e.g. stock
GNOME), the window stays the app's face and closing it quits; notifications still go out over
D-Bus on Linux. Clicking a notification opens the host at the moment of the alert.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from gpufleet.core.config.settings import Settings
from gpufleet.core.notify.ordering import plan_notifications
from gpufleet.ui.desktop import dbus_notify
from gpufleet.ui.dialogs.settings import notifications_enabled
from gpufleet.ui.i18n import state_name
from gpufleet.ui.viewmodel.alerts import alert_text, alert_title
from gpufleet.ui.viewmodel.summary import HostSummary
from gpufleet.ui.widgets.theme import CRIT, DOWN, OK, SEVERITY_RANK, SYMBOL, WAIT, WARN, Theme

log = logging.getLogger(__name__)

PER_KEY_S = 600.0  # the same alert on the same GPU at most once per 10 minutes
BURST = 5  # at most this many notifications a minute; the rest are summed up in one
BURST_WINDOW_S = 60.0


@dataclass(frozen=True)
class Notification:
    host: str
    title: str
    body: str
    severity: str
    t: float  # the moment to open (the alert's start)
    alert: Any = None


class Notifier(QObject):
    """Turns alert changes into notifications: firing warnings and criticals, throttling
    first, silenced ones skipped, rate-limited per alert key and overall."""

    notified = Signal(object)  # Notification

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.paused = False
        self.clock = clock
        # The settings' rate limits (notify_repeat_min, notify_max_per_min): set_limits.
        self.per_key_s = PER_KEY_S
        self.burst = BURST
        self._last: dict[tuple[str, str, Any], float] = {}
        self._recent: deque[float] = deque()
        self._suppressed = 0
        self._summary_due = False  # a timer will bring the "N more" summary

    def set_limits(self, repeat_min: float, max_per_min: int) -> None:
        """The same alert on the same GPU at most every ``repeat_min`` minutes; at most
        ``max_per_min`` notifications a minute, the rest summed up in one."""
        self.per_key_s = max(0.0, float(repeat_min)) * 60.0
        self.burst = max(1, int(max_per_min))

    def on_alerts_changed(self, changed: Sequence[Any]) -> None:
        if self.paused:
            return
        now = self.clock()
        # Critical first, then throttling, then the other warnings (newest first in each);
        # silenced ones left out. Alerts restored at start never come here: the hub shows
        # them without news, so a restart notifies nothing already notified.
        plan = plan_notifications(changed, len(changed), now=time.time())
        while self._recent and self._recent[0] < now - BURST_WINDOW_S:
            self._recent.popleft()
        for a in plan.show:
            key = (a.host, a.rule_id, a.gpu)
            last = self._last.get(key)
            if last is not None and now - last < self.per_key_s:
                continue
            self._last[key] = now
            if len(self._recent) >= self.burst:
                self._suppressed += 1
                continue
            self._recent.append(now)
            self.notified.emit(self._make(a))
        self._flush_summary()

    def _summary_timer(self) -> None:
        self._summary_due = False
        self._flush_summary()

    def _flush_summary(self) -> None:
        """One "N more" notification for what the burst limit held back: now if the window
        has room, else as soon as it has (a timer: no later alert is needed to bring it)."""
        if not self._suppressed:
            return
        now = self.clock()
        while self._recent and self._recent[0] < now - BURST_WINDOW_S:
            self._recent.popleft()
        if len(self._recent) >= self.burst:
            if not self._summary_due:
                self._summary_due = True
                wait_s = self._recent[0] + BURST_WINDOW_S - now
                QTimer.singleShot(max(100, int(wait_s * 1000) + 50), self._summary_timer)
            return
        n, self._suppressed = self._suppressed, 0
        self._recent.append(now)
        self.notified.emit(
            Notification(
                "",
                "gpufleet",
                self.tr("{n} more alerts; open gpufleet to see them").format(n=n),
                "warning",
                time.time(),
            )
        )

    @staticmethod
    def _make(a: Any) -> Notification:
        # The title names the host and GPU already ("… on GPU 2 of h100-a").
        return Notification(
            host=a.host,
            title=alert_title(a),
            body=alert_text(a),
            severity=a.severity,
            t=float(a.started_t),
            alert=a,
        )


def state_icon(state: str, theme: Theme, size: int = 64) -> QIcon:
    """A filled disc in the state's colour with its symbol's shape inside, so the icon reads
    without colour too (✔-disc, ▲ warning, ✖ critical/down, ring while waiting)."""
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    colour = theme.state_colour(state)
    m = size * 0.06
    r = QRectF(m, m, size - 2 * m, size - 2 * m)
    if state == WAIT:
        p.setPen(QPen(colour, size * 0.1))
        p.drawEllipse(r.adjusted(size * 0.05, size * 0.05, -size * 0.05, -size * 0.05))
    elif state == WARN:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        p.drawPolygon(
            QPolygonF([QPointF(size / 2, m), QPointF(size - m, size - m), QPointF(m, size - m)])
        )
        p.setPen(QColor("#000000"))
        f = QFont()
        f.setPixelSize(int(size * 0.5))
        f.setBold(True)
        p.setFont(f)
        p.drawText(QRectF(0, size * 0.2, size, size * 0.75), Qt.AlignmentFlag.AlignCenter, "!")
    else:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        p.drawEllipse(r)
        p.setPen(QPen(QColor("#ffffff"), size * 0.1))
        c = size / 2
        d = size * 0.18
        if state in (CRIT, DOWN):
            p.drawLine(QPointF(c - d, c - d), QPointF(c + d, c + d))
            p.drawLine(QPointF(c - d, c + d), QPointF(c + d, c - d))
        else:
            p.drawLine(QPointF(c - d * 1.2, c), QPointF(c - d * 0.2, c + d))
            p.drawLine(QPointF(c - d * 0.2, c + d), QPointF(c + d * 1.3, c - d))
    p.end()
    return QIcon(pm)


class Tray(QObject):
    quit_requested = Signal()

    def __init__(self, window: Any, theme: Theme) -> None:
        super().__init__()
        self.window = window
        self.theme = theme
        self.notifier = Notifier()
        self.notifier.notified.connect(self._show)
        # The saved notifications switch; the settings dialog turns it on and off while the
        # app runs (through the window's settings_applied).
        self.notifier.paused = not notifications_enabled()
        window.settings_applied.connect(self._apply_settings)
        self.available = QSystemTrayIcon.isSystemTrayAvailable()
        self.dbus = dbus_notify.available()
        # Desktop notifications with an "open host" action (one bus connection, opened on the
        # first notification); a click opens the host at the alert's moment.
        self.desktop: dbus_notify.DesktopNotifications | None = None
        if self.dbus:
            # The alert list's wording for the same thing (already translated).
            label = QCoreApplication.translate("AlertWiring", "Open at the moment it started")
            self.desktop = dbus_notify.DesktopNotifications(label)
            self.desktop.activated.connect(self._open_note)
        self.state = OK
        self._last_note: Notification | None = None
        self._menu_texts: list[tuple[str, str]] = []
        self.icon: QSystemTrayIcon | None = None
        self.menu = QMenu()
        self.host_menu = QMenu(self.tr("Hosts"))
        act_show = QAction(self.tr("Show gpufleet"), self.menu)
        act_show.triggered.connect(self.show_window)
        self.menu.addAction(act_show)
        self.menu.addMenu(self.host_menu)
        self.act_pause = QAction(self.tr("Pause notifications"), self.menu)
        self.act_pause.setCheckable(True)
        self.act_pause.toggled.connect(self._pause)
        self.menu.addAction(self.act_pause)
        self.menu.addSeparator()
        act_quit = QAction(self.tr("Quit"), self.menu)
        act_quit.triggered.connect(self.quit_requested)
        self.menu.addAction(act_quit)
        window.setWindowIcon(state_icon(OK, theme))
        if self.available:
            self.icon = QSystemTrayIcon(state_icon(OK, theme))
            self.icon.setContextMenu(self.menu)
            self.icon.setToolTip("gpufleet")
            self.icon.activated.connect(self._activated)
            self.icon.messageClicked.connect(self._message_clicked)
            self.icon.show()

    def _pause(self, on: bool) -> None:
        self.notifier.paused = on

    def hide(self) -> None:
        """Called as the app stops: also closes the desktop notifications' bus connection."""
        if self.icon is not None:
            self.icon.hide()
        if self.desktop is not None:
            self.desktop.close()

    def show_window(self) -> None:
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            if self.window.isVisible():
                self.window.hide()
            else:
                self.show_window()

    def _apply_settings(self, s: Settings) -> None:
        self.notifier.paused = not s.notifications

    def update_state(self, summaries: Sequence[HostSummary]) -> None:
        worst = max((s.state for s in summaries), key=lambda s: SEVERITY_RANK[s], default=OK)
        if worst != self.state:
            self.state = worst
            icon = state_icon(worst, self.theme)
            self.window.setWindowIcon(icon)
            if self.icon is not None:
                self.icon.setIcon(icon)
        bad = [s for s in summaries if s.state != OK]
        tip = (
            self.tr("gpufleet: all hosts healthy")
            if not bad
            else "gpufleet: " + "; ".join(f"{s.host} {s.reason}" for s in bad[:5])
        )
        if self.icon is not None:
            self.icon.setToolTip(tip)
        texts = [
            (s.host, f"{SYMBOL[s.state]} {s.host} — {s.reason or state_name('ok')}")
            for s in summaries
        ]
        if texts == self._menu_texts:
            return  # rebuilding the menu every second would cost more than the rest
        self._menu_texts = texts
        self.host_menu.clear()
        for host, text in texts:
            act = self.host_menu.addAction(text)
            act.triggered.connect(lambda _=False, h=host: self._open_host(h))

    def _open_host(self, host: str) -> None:
        self.show_window()
        self.window.select_host(host)

    def _show(self, n: Notification) -> None:
        self._last_note = n
        if self.icon is not None and self.icon.isVisible():
            icon = (
                QSystemTrayIcon.MessageIcon.Critical
                if n.severity == "critical"
                else QSystemTrayIcon.MessageIcon.Warning
            )
            self.icon.showMessage(n.title, n.body, icon, 10_000)
        if self.desktop is not None:
            self.desktop.send(n.title, n.body, 2 if n.severity == "critical" else 1, n)

    def _message_clicked(self) -> None:
        self._open_note(self._last_note)

    def _open_note(self, n: Notification | None) -> None:
        if n is not None and n.alert is not None:
            self.window.open_alert(n.alert)
        else:
            self.show_window()
