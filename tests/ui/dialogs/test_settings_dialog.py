"""The settings dialog on Qt offscreen: every setting round-trips through config.toml, a bad
value keeps the dialog open with a message and writes nothing, secrets go to the keyring,
"start with my session" writes and removes the XDG autostart entry, and the main window's
menu opens it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config import autostart, paths
from gpufleet.core.config.configfile import load_config
from gpufleet.core.config.settings import Settings, WebhookSetting, load_settings, save_settings
from gpufleet.ui.dialogs.settings import SettingsDialog, apply_live
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

CHANGED = Settings(
    refresh_hz=7.5,
    notifications=False,
    notify_repeat_min=2.5,
    notify_max_per_min=12,
    language="zh_CN",
    theme="light",
    retention_raw_days=3,
    retention_rollup_days=30,
    exporter_enabled=True,
    exporter_listen="0.0.0.0:19464",
    alertmanager_enabled=True,
    alertmanager_listen="127.0.0.1:19466",
    webhooks=(WebhookSetting("team-slack", "slack", "critical"),),
    start_with_session=autostart.supported(),
)


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def make(qtbot: QtBot) -> SettingsDialog:
    dlg = SettingsDialog()
    qtbot.addWidget(dlg)
    return dlg


def test_widgets_show_the_saved_settings_and_save_them_back(qtbot: QtBot, xdg: Path) -> None:
    save_settings(CHANGED)
    dlg = make(qtbot)
    assert dlg.values() == CHANGED
    assert not dlg.message.isVisible()
    # Saving unchanged values (the webhook URL is already "stored") writes the same settings.
    dlg._known_webhooks = {"team-slack"}
    assert dlg.save()
    assert load_settings() == (CHANGED, [])


def test_every_setting_edited_in_the_dialog_is_saved(
    qtbot: QtBot, xdg: Path, secret_service: None
) -> None:
    dlg = make(qtbot)
    assert dlg.values() == Settings()
    saved: list[Settings] = []
    dlg.settings_saved.connect(saved.append)
    dlg.language.setCurrentIndex(dlg.language.findData("zh_CN"))
    dlg.theme.setCurrentIndex(dlg.theme.findData("light"))
    dlg.refresh_hz.setValue(7.5)
    dlg.start_with_session.setChecked(CHANGED.start_with_session)
    dlg.notifications.setChecked(False)
    dlg.notify_repeat_min.setValue(2.5)
    dlg.notify_max_per_min.setValue(12)
    dlg.retention_raw_days.setValue(3)
    dlg.retention_rollup_days.setValue(30)
    dlg.exporter_enabled.setChecked(True)
    dlg.exporter_listen.setText("0.0.0.0:19464")
    dlg.alertmanager_enabled.setChecked(True)
    dlg.alertmanager_listen.setText("127.0.0.1:19466")
    dlg.alertmanager_token.setText("a-long-enough-token-123")
    r = dlg.add_webhook_row(WebhookSetting(""), new=True)
    dlg._cell(r, 0).setText("team-slack")
    dlg._cell(r, 1).setCurrentIndex(dlg._cell(r, 1).findData("slack"))
    dlg._cell(r, 2).setCurrentIndex(dlg._cell(r, 2).findData("critical"))
    dlg._cell(r, 3).setText("https://hooks.example.com/services/T0/B0/tok")
    assert dlg.save(), dlg.message.text()
    assert saved == [CHANGED]
    assert load_settings() == (CHANGED, [])
    text = paths.config_file().read_text()
    assert "hooks.example.com" not in text and "a-long-enough" not in text

    from gpufleet.core.config import secrets

    assert secrets.get_secret("webhook:team-slack", "webhook-url") == (
        "https://hooks.example.com/services/T0/B0/tok"
    )
    assert secrets.get_secret("alertmanager", "token") == "a-long-enough-token-123"
    if autostart.supported():
        entry = xdg / "autostart" / f"{autostart.APP_ID}.desktop"
        assert entry.is_file()
        # Off again: the entry goes; removing the webhook forgets its URL.
        dlg2 = make(qtbot)
        dlg2.start_with_session.setChecked(False)
        dlg2.webhooks.selectRow(0)
        dlg2.remove_selected_webhook()
        assert dlg2.save(), dlg2.message.text()
        assert not entry.exists()
        assert secrets.get_secret("webhook:team-slack", "webhook-url") is None
    secrets.delete_secret("alertmanager", "token")


@pytest.mark.parametrize(
    ("edit", "words", "tab"),
    [
        (lambda d: d.exporter_listen.setText("localhost"), "HOST:PORT", 3),
        (lambda d: d.alertmanager_listen.setText("127.0.0.1:70000"), "0..65535", 3),
        (
            lambda d: (d.retention_raw_days.setValue(60), d.retention_rollup_days.setValue(30)),
            "at least retention_raw_days",
            2,
        ),
        (
            lambda d: (
                d.exporter_enabled.setChecked(True),
                d.alertmanager_enabled.setChecked(True),
                d.exporter_listen.setText(":9466"),
            ),
            "cannot share port 9466",
            3,
        ),
        (lambda d: d.add_webhook_row(WebhookSetting("bad name"), new=True), "letters, digits", 4),
        (lambda d: d.add_webhook_row(WebhookSetting("ops"), new=True), "type its URL", 4),
    ],
)
def test_bad_values_are_refused_with_a_message(
    qtbot: QtBot, xdg: Path, edit: object, words: str, tab: int
) -> None:
    dlg = make(qtbot)
    dlg.show()
    edit(dlg)  # type: ignore[operator]
    saved: list[Settings] = []
    dlg.settings_saved.connect(saved.append)
    assert not dlg.save()
    assert dlg.message.isVisible() and words in dlg.message.text()
    assert dlg.tabs.currentIndex() == tab
    assert dlg.isVisible() and saved == []
    assert not paths.config_file().exists()


def test_bad_webhook_url_is_refused(qtbot: QtBot, xdg: Path) -> None:
    dlg = make(qtbot)
    r = dlg.add_webhook_row(WebhookSetting("ops"), new=True)
    url = dlg._cell(r, 3)
    assert isinstance(url, QLineEdit) and url.echoMode() == QLineEdit.EchoMode.Password
    url.setText("hooks.example.com/no-scheme")
    assert not dlg.save()
    assert "https://" in dlg.message.text()
    assert not paths.config_file().exists()


def test_unreadable_config_is_shown_and_never_overwritten(qtbot: QtBot, xdg: Path) -> None:
    f = paths.config_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("[[hosts]\nname = 'broken'\n")
    dlg = make(qtbot)
    assert "not valid TOML" in dlg.message.text()
    assert not dlg.save()
    assert f.read_text() == "[[hosts]\nname = 'broken'\n"


def test_hand_edited_bad_value_is_shown_and_fixed_by_saving(qtbot: QtBot, xdg: Path) -> None:
    f = paths.config_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text('[settings]\ntheme = "purple"\nrefresh_hz = 5.0\n')
    dlg = make(qtbot)
    assert "theme must be one of" in dlg.message.text()
    assert dlg.values().refresh_hz == 5.0 and dlg.values().theme == "system"
    assert dlg.save()
    assert load_config().settings["theme"] == "system"


def make_window(qtbot: QtBot) -> Any:
    """A real main window (no fleet behind it: only its menus and timer matter here)."""
    from gpufleet.core.live.buffers import LiveBuffers
    from gpufleet.ui.app import make_qapp, setup_theme
    from gpufleet.ui.window.main_window import MainWindow

    theme = setup_theme(make_qapp())
    w = MainWindow(LiveBuffers(window_s=60), [], theme, demo=True)
    qtbot.addWidget(w)
    return w


def test_menu_opens_the_dialog_and_refresh_applies_live(qtbot: QtBot, xdg: Path) -> None:
    w = make_window(qtbot)
    act = next(a for a in w.menuBar().actions() if a.text() == "&Settings")
    menu_actions = act.menu().actions()
    assert menu_actions, "the Settings menu is empty"
    menu_actions[0].trigger()
    dlg = w.findChild(SettingsDialog)
    assert dlg is not None
    qtbot.waitUntil(dlg.isVisible)
    dlg.refresh_hz.setValue(10.0)
    assert dlg.save()
    assert w._timer.interval() == 100
    apply_live(w, Settings())
    assert w._timer.interval() == 333


def test_notifications_switch_applies_at_start_and_live(qtbot: QtBot, xdg: Path) -> None:
    from gpufleet.ui.desktop.tray import Tray
    from gpufleet.ui.widgets.theme import make_theme

    save_settings(Settings(notifications=False, refresh_hz=2.0))
    w = make_window(qtbot)
    tray = Tray(w, make_theme(True))
    try:
        assert tray.notifier.paused
        qtbot.waitUntil(lambda: w._timer.interval() == 500)
        apply_live(w, Settings(notifications=True))
        assert not tray.notifier.paused
    finally:
        tray.hide()
