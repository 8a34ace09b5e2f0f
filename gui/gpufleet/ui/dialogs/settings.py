"""The settings dialog: what the user may choose, saved to config.toml through the Qt-free
``gpufleet.core.config.settings`` (which validates every value).

A bad value is refused where the user can see it: the dialog stays open, a message above the
tabs names the setting and the allowed range, and the offending field gets the focus. Webhook
URLs (they carry tokens) and the Alertmanager receiver's token go to the OS keyring, never to
the file; the dialog does not read them back (no keyring prompt just for opening it): it
only writes what is typed. "Start with my session" writes or removes the XDG autostart entry
(``gpufleet.core.config.autostart``) on saving.

``open_settings_dialog(window, parent)`` is what the main window's menu calls; the refresh rate and
the notification switch take effect at once, the other settings at the next start (the
dialog says so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, SignalInstance
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpufleet.core.config import autostart
from gpufleet.core.config.configfile import ConfigError, load_config
from gpufleet.core.config.secrets import SecretStoreUnavailable
from gpufleet.core.config.settings import (
    RANGES,
    SEVERITIES,
    WEBHOOK_FORMATS,
    Settings,
    SettingsError,
    WebhookSetting,
    forget_webhook_url,
    load_settings,
    parse_settings,
    save_settings,
    store_alertmanager_token,
    store_webhook_url,
    validate,
)
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP
from gpufleet.ui.dialogs.provider_keys import ProviderKeysTab

# Shown in the language box: each language in its own words.
# The labels are translated when the boxes are filled (context "SettingsDialog"); the
# language names stay in their own words.
LANGUAGE_NAMES = (
    ("system", QT_TRANSLATE_NOOP("SettingsDialog", "System language")),
    ("en", "English"),
    ("zh_CN", "简体中文"),
)
THEME_NAMES = (
    ("system", QT_TRANSLATE_NOOP("SettingsDialog", "Follow the system")),
    ("light", QT_TRANSLATE_NOOP("SettingsDialog", "Light")),
    ("dark", QT_TRANSLATE_NOOP("SettingsDialog", "Dark")),
)
FORMAT_NAMES = (
    ("json", "JSON"),
    ("slack", "Slack"),
    ("dingtalk", QT_TRANSLATE_NOOP("SettingsDialog", "DingTalk")),
    ("wecom", QT_TRANSLATE_NOOP("SettingsDialog", "WeCom")),
)
SEVERITY_NAMES = (
    ("info", QT_TRANSLATE_NOOP("SettingsDialog", "info")),
    ("warning", QT_TRANSLATE_NOOP("SettingsDialog", "warning")),
    ("critical", QT_TRANSLATE_NOOP("SettingsDialog", "critical")),
)
UNIT_NAMES = {
    "Hz": "Hz",
    "minutes": QT_TRANSLATE_NOOP("SettingsDialog", "minutes"),
    "per minute": QT_TRANSLATE_NOOP("SettingsDialog", "per minute"),
    "days": QT_TRANSLATE_NOOP("SettingsDialog", "days"),
}
URL_COL, NAME_COL, FORMAT_COL, SEVERITY_COL = 3, 0, 1, 2


def _combo(items: tuple[tuple[str, str], ...] | tuple[str, ...]) -> QComboBox:
    box = QComboBox()
    for item in items:
        value, label = item if isinstance(item, tuple) else (item, item)
        box.addItem(QCoreApplication.translate("SettingsDialog", label), value)
    return box


def _set_combo(box: QComboBox, value: str) -> None:
    i = box.findData(value)
    box.setCurrentIndex(max(0, i))


def _dspin(key: str, decimals: int = 1) -> QDoubleSpinBox:
    lo, hi, unit = RANGES[key]
    box = QDoubleSpinBox()
    box.setDecimals(decimals)
    box.setRange(lo, hi)
    box.setSuffix(" " + QCoreApplication.translate("SettingsDialog", UNIT_NAMES.get(unit, unit)))
    return box


def _ispin(key: str) -> QSpinBox:
    lo, hi, unit = RANGES[key]
    box = QSpinBox()
    box.setRange(int(lo), int(hi))
    box.setSuffix(" " + QCoreApplication.translate("SettingsDialog", UNIT_NAMES.get(unit, unit)))
    return box


class SettingsDialog(QDialog):
    """Edits ``Settings``; ``settings_saved`` carries the new value after a successful save."""

    settings_saved = Signal(object)  # Settings

    def __init__(self, parent: QWidget | None = None, config_path: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("gpufleet settings"))
        self.config_path = config_path
        self.saved: Settings | None = None
        problems: list[str] = []
        self.load_error: str | None = None
        try:
            self.initial, problems = load_settings(config_path)
        except ConfigError as e:
            # The file cannot be read: show why, and refuse to save over it (hosts live there).
            self.initial = Settings()
            self.load_error = str(e)
        self._known_webhooks = {w.name for w in self.initial.webhooks}

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #d1242f; font-weight: bold;")
        self.message.hide()
        self.tabs = QTabWidget()
        self.tabs.addTab(self._general_tab(), self.tr("General"))
        self.tabs.addTab(self._notifications_tab(), self.tr("Notifications"))
        self.tabs.addTab(self._history_tab(), self.tr("History"))
        self.tabs.addTab(self._exporters_tab(), self.tr("Exporters"))
        self.tabs.addTab(self._webhooks_tab(), self.tr("Webhooks"))
        self.providers = ProviderKeysTab(self)
        self.tabs.addTab(self.providers, self.tr("Providers"))
        note = QLabel(
            self.tr(
                "The refresh rate, notifications and autostart apply at once; the other settings "
                "when gpufleet starts next."
            )
        )
        note.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.message)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(note)
        lay.addWidget(self.buttons)
        self.set_values(self.initial)
        if self.load_error is not None:
            self.show_message(self.load_error + self.tr(" — fix the file; nothing will be saved."))
            self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(False)
        elif problems:
            self.show_message("\n".join(problems))
        self.resize(620, 460)

    # -- tabs ------------------------------------------------------------------------------

    def _general_tab(self) -> QWidget:
        w = QWidget()
        form = QFormLayout(w)
        self.language = _combo(LANGUAGE_NAMES)
        self.theme = _combo(THEME_NAMES)
        self.refresh_hz = _dspin("refresh_hz")
        self.start_with_session = QCheckBox(self.tr("Start gpufleet when I log in"))
        if not autostart.supported():
            self.start_with_session.setEnabled(False)
            self.start_with_session.setToolTip(
                self.tr("Only on Linux desktops (XDG autostart) in this version")
            )
        form.addRow(self.tr("Language"), self.language)
        form.addRow(self.tr("Theme"), self.theme)
        form.addRow(self.tr("Plot refresh rate"), self.refresh_hz)
        form.addRow("", self.start_with_session)
        return w

    def _notifications_tab(self) -> QWidget:
        w = QWidget()
        form = QFormLayout(w)
        self.notifications = QCheckBox(self.tr("Show desktop notifications for alerts"))
        self.notify_repeat_min = _dspin("notify_repeat_min")
        self.notify_max_per_min = _ispin("notify_max_per_min")
        form.addRow("", self.notifications)
        form.addRow(self.tr("Repeat the same alert at most every"), self.notify_repeat_min)
        form.addRow(self.tr("At most"), self.notify_max_per_min)
        return w

    def _history_tab(self) -> QWidget:
        w = QWidget()
        form = QFormLayout(w)
        self.retention_raw_days = _ispin("retention_raw_days")
        self.retention_rollup_days = _ispin("retention_rollup_days")
        form.addRow(self.tr("Keep full-resolution samples for"), self.retention_raw_days)
        form.addRow(self.tr("Keep downsampled history for"), self.retention_rollup_days)
        return w

    def _exporters_tab(self) -> QWidget:
        w = QWidget()
        form = QFormLayout(w)
        self.exporter_enabled = QCheckBox(self.tr("Serve the fleet's metrics to Prometheus"))
        self.exporter_listen = QLineEdit()
        self.exporter_listen.setPlaceholderText("127.0.0.1:9464")
        self.alertmanager_enabled = QCheckBox(self.tr("Receive alerts from an Alertmanager"))
        self.alertmanager_listen = QLineEdit()
        self.alertmanager_listen.setPlaceholderText("127.0.0.1:9466")
        self.alertmanager_token = QLineEdit()
        self.alertmanager_token.setEchoMode(QLineEdit.EchoMode.Password)
        self.alertmanager_token.setPlaceholderText(
            self.tr("type to store a new token in the keyring")
        )
        form.addRow("", self.exporter_enabled)
        form.addRow(self.tr("Exporter address"), self.exporter_listen)
        form.addRow("", self.alertmanager_enabled)
        form.addRow(self.tr("Receiver address"), self.alertmanager_listen)
        form.addRow(self.tr("Receiver token"), self.alertmanager_token)
        return w

    def _webhooks_tab(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        self.webhooks = QTableWidget(0, 4)
        self.webhooks.setHorizontalHeaderLabels(
            [self.tr("Name"), self.tr("Format"), self.tr("Minimum severity"), self.tr("URL")]
        )
        header = self.webhooks.horizontalHeader()
        for col in (NAME_COL, FORMAT_COL, SEVERITY_COL):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(URL_COL, QHeaderView.ResizeMode.Stretch)
        self.webhooks.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.webhooks.verticalHeader().hide()
        row = QHBoxLayout()
        add = QPushButton(self.tr("Add"))
        add.clicked.connect(lambda: self.add_webhook_row(WebhookSetting(""), new=True))
        remove = QPushButton(self.tr("Remove"))
        remove.clicked.connect(self.remove_selected_webhook)
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        hint = QLabel(
            self.tr(
                'Rules send to webhooks by name (notify = ["NAME"] in rules.toml). The URL '
                "carries its token, so it is kept in the system keyring, not in the config file."
            )
        )
        hint.setWordWrap(True)
        lay.addWidget(self.webhooks, 1)
        lay.addLayout(row)
        lay.addWidget(hint)
        return w

    def add_webhook_row(self, w: WebhookSetting, new: bool = False) -> int:
        r = self.webhooks.rowCount()
        self.webhooks.insertRow(r)
        name = QLineEdit(w.name)
        fmt = _combo(tuple((f, dict(FORMAT_NAMES).get(f, f)) for f in WEBHOOK_FORMATS))
        _set_combo(fmt, w.format)
        sev = _combo(tuple((s, dict(SEVERITY_NAMES).get(s, s)) for s in SEVERITIES))
        _set_combo(sev, w.min_severity)
        url = QLineEdit()
        url.setEchoMode(QLineEdit.EchoMode.Password)
        url.setPlaceholderText(
            self.tr("https://… (required)") if new else self.tr("stored; type to replace")
        )
        cells = ((NAME_COL, name), (FORMAT_COL, fmt), (SEVERITY_COL, sev), (URL_COL, url))
        for col, widget in cells:
            self.webhooks.setCellWidget(r, col, widget)
        if new:
            name.setFocus()
        return r

    def remove_selected_webhook(self) -> None:
        rows = sorted({i.row() for i in self.webhooks.selectedIndexes()}, reverse=True)
        if not rows and self.webhooks.rowCount():
            rows = [self.webhooks.rowCount() - 1]
        for r in rows:
            self.webhooks.removeRow(r)

    def _cell(self, r: int, col: int) -> Any:
        return self.webhooks.cellWidget(r, col)

    # -- values ----------------------------------------------------------------------------

    def set_values(self, s: Settings) -> None:
        _set_combo(self.language, s.language)
        _set_combo(self.theme, s.theme)
        self.refresh_hz.setValue(s.refresh_hz)
        self.start_with_session.setChecked(s.start_with_session)
        self.notifications.setChecked(s.notifications)
        self.notify_repeat_min.setValue(s.notify_repeat_min)
        self.notify_max_per_min.setValue(s.notify_max_per_min)
        self.retention_raw_days.setValue(s.retention_raw_days)
        self.retention_rollup_days.setValue(s.retention_rollup_days)
        self.exporter_enabled.setChecked(s.exporter_enabled)
        self.exporter_listen.setText(s.exporter_listen)
        self.alertmanager_enabled.setChecked(s.alertmanager_enabled)
        self.alertmanager_listen.setText(s.alertmanager_listen)
        self.webhooks.setRowCount(0)
        for w in s.webhooks:
            self.add_webhook_row(w)

    def values(self) -> Settings:
        """The settings as the widgets show them (not validated yet)."""
        hooks = tuple(
            WebhookSetting(
                self._cell(r, NAME_COL).text().strip(),
                self._cell(r, FORMAT_COL).currentData(),
                self._cell(r, SEVERITY_COL).currentData(),
            )
            for r in range(self.webhooks.rowCount())
        )
        return Settings(
            refresh_hz=float(self.refresh_hz.value()),
            notifications=self.notifications.isChecked(),
            notify_repeat_min=float(self.notify_repeat_min.value()),
            notify_max_per_min=int(self.notify_max_per_min.value()),
            language=self.language.currentData(),
            theme=self.theme.currentData(),
            retention_raw_days=int(self.retention_raw_days.value()),
            retention_rollup_days=int(self.retention_rollup_days.value()),
            exporter_enabled=self.exporter_enabled.isChecked(),
            exporter_listen=self.exporter_listen.text().strip(),
            alertmanager_enabled=self.alertmanager_enabled.isChecked(),
            alertmanager_listen=self.alertmanager_listen.text().strip(),
            webhooks=hooks,
            start_with_session=self.start_with_session.isChecked(),
        )

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _focus(self, key: str) -> None:
        # A setting's config.toml key -> its tab and the widget that edits it (the webhooks
        # table has no single field to focus).
        tab, widget = {
            "language": (0, self.language), "theme": (0, self.theme),
            "refresh_hz": (0, self.refresh_hz), "start_with_session": (0, self.start_with_session),
            "notifications": (1, self.notifications),
            "notify_repeat_min": (1, self.notify_repeat_min),
            "notify_max_per_min": (1, self.notify_max_per_min),
            "retention_raw_days": (2, self.retention_raw_days),
            "retention_rollup_days": (2, self.retention_rollup_days),
            "exporter_enabled": (3, self.exporter_enabled),
            "exporter_listen": (3, self.exporter_listen),
            "alertmanager_enabled": (3, self.alertmanager_enabled),
            "alertmanager_listen": (3, self.alertmanager_listen),
            "alertmanager_token": (3, self.alertmanager_token),
            "webhooks": (4, None),
        }.get(key, (0, None))  # fmt: skip
        self.tabs.setCurrentIndex(tab)
        if widget is not None:
            widget.setFocus()

    def _refuse(self, key: str, text: str) -> bool:
        # The core names settings by their config.toml key; the dialog by their labels.
        label = self._labels().get(key)
        if label and text.startswith(key):
            text = label + text[len(key) :]
        self.show_message(text.replace("--listen ", ""))
        self._focus(key)
        return False

    def _labels(self) -> dict[str, str]:
        return {
            "refresh_hz": self.tr("Plot refresh rate"),
            "notify_repeat_min": self.tr("Repeat interval"),
            "notify_max_per_min": self.tr("Notifications per minute"),
            "retention_raw_days": self.tr("Full-resolution history"),
            "retention_rollup_days": self.tr("Downsampled history"),
            "exporter_listen": self.tr("Exporter address"),
            "alertmanager_listen": self.tr("Receiver address"),
        }

    # -- saving ----------------------------------------------------------------------------

    def save(self) -> bool:
        """Validate, store secrets, write the file, apply autostart; close on success.

        Returns False (the dialog stays open with the reason shown) on any refusal."""
        if self.load_error is not None:
            return self._refuse("language", self.load_error)
        s = self.values()
        try:
            validate(s)
        except SettingsError as e:
            return self._refuse(e.key, e.localized())
        urls = {
            self._cell(r, NAME_COL).text().strip(): self._cell(r, URL_COL).text()
            for r in range(self.webhooks.rowCount())
        }
        missing = [n for n, u in urls.items() if not u.strip() and n not in self._known_webhooks]
        if missing:
            return self._refuse(
                "webhooks", self.tr("webhook %1: type its URL").replace("%1", repr(missing[0]))
            )
        try:
            for name, url in urls.items():
                if url.strip():
                    store_webhook_url(name, url)
            for name in self._known_webhooks - set(urls):
                forget_webhook_url(name)
            if self.alertmanager_token.text().strip():
                store_alertmanager_token(self.alertmanager_token.text())
        except SettingsError as e:
            return self._refuse(e.key, e.localized())
        except SecretStoreUnavailable as e:
            return self._refuse("webhooks", str(e))
        try:
            save_settings(s, self.config_path)
        except (SettingsError, ConfigError, OSError) as e:
            return self._refuse(getattr(e, "key", "language"), str(e))
        if autostart.supported() and s.start_with_session != autostart.is_enabled():
            try:
                autostart.set_enabled(s.start_with_session)
            except OSError as e:
                return self._refuse(
                    "start_with_session",
                    self.tr("cannot change the autostart entry: %1").replace("%1", str(e)),
                )
        self._known_webhooks = {w.name for w in s.webhooks}
        self.saved = s
        self.settings_saved.emit(s)
        self.accept()
        return True


class SettingsHost(Protocol):
    """What the settings change in the main window (``ui.window.main_window.MainWindow``,
    which this layer does not import): the redraw rate, and ``settings_applied`` emitted
    with the saved settings for whoever listens (the tray, the alert wiring)."""

    @property
    def settings_applied(self) -> SignalInstance: ...

    def set_redraw_hz(self, hz: float) -> None: ...


def apply_live(window: SettingsHost, s: Settings) -> None:
    """Apply what can change while the app runs: the redraw rate of the visible tab here; the
    notifications switch, rate limits and webhooks by whoever listens to the window's
    ``settings_applied`` (the app connects the tray and the alert wiring)."""
    window.set_redraw_hz(s.refresh_hz)
    window.settings_applied.emit(s)


def apply_at_start(window: SettingsHost, context: QObject) -> None:
    """The saved refresh rate, applied when the window is built (only when the user chose
    one, so that a window built with another rate keeps it). A config that cannot be read
    changes nothing here: the app reports it where it loads the hosts."""
    try:
        table = load_config().settings
    except ConfigError:
        return
    if "refresh_hz" not in table:
        return
    hz = parse_settings(table)[0].refresh_hz

    def apply() -> None:
        window.set_redraw_hz(hz)

    # Called while the window builds its menus, before its redraw timer exists: apply once
    # the event loop runs.
    QTimer.singleShot(0, context, apply)


def notifications_enabled() -> bool:
    """The saved notifications switch (on when the config cannot be read)."""
    try:
        return load_settings()[0].notifications
    except ConfigError:
        return True


def open_settings_dialog(window: SettingsHost, parent: QWidget) -> SettingsDialog:
    """Open the dialog over ``parent`` (window-modal, not blocking the event loop); what it
    saves applies to ``window`` (the main window: the same object)."""
    dlg = SettingsDialog(parent)
    dlg.settings_saved.connect(lambda s: apply_live(window, s))
    dlg.open()
    return dlg
