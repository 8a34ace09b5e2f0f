"""Settings: every value round-trips through config.toml; bad values are refused with a
one-line message naming the setting; a hand-edited bad value falls back to its default
without stopping the app; hosts and other keys survive a save; secrets go to the keyring."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from gpufleet.core.config import configfile as config
from gpufleet.core.config.configfile import AppConfig, ConfigError, load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import (
    KEYS,
    Settings,
    SettingsError,
    WebhookSetting,
    load_settings,
    parse_settings,
    save_settings,
    validate,
)

# A value other than the default for every setting.
CHANGED = Settings(
    refresh_hz=7.5,
    notifications=False,
    notify_repeat_min=2.5,
    notify_max_per_min=12,
    language="zh_CN",
    theme="light",
    retention_raw_days=3,
    retention_rollup_days=30,
    history_max_gb=2.5,
    exporter_enabled=True,
    exporter_listen="0.0.0.0:19464",
    alertmanager_enabled=True,
    alertmanager_listen="[::1]:19466",
    webhooks=(
        WebhookSetting("team-slack", "slack", "critical"),
        WebhookSetting("oncall.dingtalk", "dingtalk", "warning"),
    ),
    start_with_session=True,
)


def test_every_setting_is_changed_by_the_fixture() -> None:
    default = Settings()
    assert [k for k in KEYS if getattr(CHANGED, k) == getattr(default, k)] == []


def test_round_trip_every_setting(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    save_settings(CHANGED, path)
    loaded, problems = load_settings(path)
    assert problems == []
    assert loaded == CHANGED
    text = path.read_text()
    assert 'language = "zh_CN"' in text and "[settings.webhooks.team-slack]" in text
    # Back to the defaults: each key is written again, not left at the old value.
    save_settings(Settings(), path)
    assert load_settings(path) == (Settings(), [])


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "none.toml") == (Settings(), [])


def test_save_keeps_hosts_and_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    host = HostConfig(name="h100-a", host="ssh4.example.com", port=41234, user="root")
    save_config(AppConfig(hosts=[host], settings={"window_geometry": "abc"}), path)
    save_settings(CHANGED, path)
    cfg = load_config(path)
    assert cfg.hosts == [host]
    assert cfg.settings["window_geometry"] == "abc"
    assert (path.stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        ({"refresh_hz": 0.0}, "refresh_hz", "0.2..30 Hz"),
        ({"refresh_hz": 100}, "refresh_hz", "0.2..30 Hz"),
        ({"notify_max_per_min": 0}, "notify_max_per_min", "1..60"),
        ({"notify_max_per_min": 2.5}, "notify_max_per_min", "whole number"),
        ({"notify_repeat_min": -1.0}, "notify_repeat_min", "0..1440 minutes"),
        ({"language": "fr"}, "language", "system, en, zh_CN"),
        ({"theme": "blue"}, "theme", "system, light, dark"),
        ({"retention_raw_days": 0}, "retention_raw_days", "1..365 days"),
        (
            {"retention_raw_days": 30, "retention_rollup_days": 10},
            "retention_rollup_days",
            "at least retention_raw_days",
        ),
        ({"exporter_listen": "localhost"}, "exporter_listen", "HOST:PORT"),
        ({"exporter_listen": "127.0.0.1:99999"}, "exporter_listen", "0..65535"),
        ({"alertmanager_listen": "127.0.0.1:0"}, "alertmanager_listen", "choose a port"),
        (
            {"exporter_listen": ":9000", "alertmanager_listen": "127.0.0.1:9000"},
            "alertmanager_listen",
            "cannot share port 9000",
        ),
        ({"notifications": "yes"}, "notifications", "true or false"),
        ({"webhooks": (WebhookSetting("a b"),)}, "webhooks", "letters, digits"),
        ({"webhooks": (WebhookSetting("x"), WebhookSetting("x"))}, "webhooks", "used twice"),
        ({"webhooks": (WebhookSetting("x", "telegram"),)}, "webhooks", "json, slack"),
        ({"webhooks": (WebhookSetting("x", "json", "fatal"),)}, "webhooks", "info, warning"),
    ],
)
def test_bad_values_are_refused_with_a_message(
    tmp_path: Path, change: dict[str, object], key: str, words: str
) -> None:
    bad = dataclasses.replace(CHANGED, **change)  # type: ignore[arg-type]
    with pytest.raises(SettingsError) as e:
        validate(bad)
    assert e.value.key == key
    assert words in str(e.value) and "\n" not in str(e.value)
    # Nothing is written when a value is refused.
    path = tmp_path / "config.toml"
    with pytest.raises(SettingsError):
        save_settings(bad, path)
    assert not path.exists()


def test_hand_edited_bad_values_fall_back_with_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "schema_version = 1\n[settings]\n"
        'refresh_hz = "fast"\ntheme = "dark"\nretention_raw_days = 50\n'
        "retention_rollup_days = 20\n"
        '[settings.webhooks.ops]\nformat = "slack"\nurl = "https://hooks.example/T0/secret"\n'
    )
    s, problems = load_settings(path)
    assert s.theme == "dark"
    assert s.refresh_hz == Settings().refresh_hz
    assert (s.retention_raw_days, s.retention_rollup_days) == (7, 90)
    assert s.webhooks == ()
    text = "\n".join(problems)
    assert "refresh_hz must be a number" in text
    assert "the URL belongs in the keyring" in text
    assert "retention_rollup_days (20) must be at least" in text
    assert all(str(path) in p for p in problems)


def test_unreadable_config_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("this is [not toml\n")
    with pytest.raises(ConfigError):
        save_settings(CHANGED, path)
    assert path.read_text() == "this is [not toml\n"


def test_parse_ignores_keys_owned_by_others() -> None:
    s, problems = parse_settings({"window_geometry": "x", "theme": "light"})
    assert s == Settings(theme="light") and problems == []


def test_webhook_url_and_token_go_to_the_keyring(secret_service: None) -> None:
    from gpufleet.core.config import secrets
    from gpufleet.core.config.settings import (
        forget_webhook_url,
        has_webhook_url,
        store_alertmanager_token,
        store_webhook_url,
    )

    with pytest.raises(SettingsError, match="https://"):
        store_webhook_url("ops", "hooks.example.com/x")
    store_webhook_url("ops", "https://hooks.example.com/services/T0/B0/tok")
    assert has_webhook_url("ops")
    assert secrets.get_secret("webhook:ops", "webhook-url") == (
        "https://hooks.example.com/services/T0/B0/tok"
    )
    assert "hooks.example.com" not in config.dumps(load_config())
    assert forget_webhook_url("ops") and not has_webhook_url("ops")
    with pytest.raises(SettingsError, match="16"):
        store_alertmanager_token("short")
    store_alertmanager_token("a-long-enough-token-123")
    assert secrets.get_secret("alertmanager", "token") == "a-long-enough-token-123"
    secrets.delete_secret("alertmanager", "token")


def test_listeners_use_the_prometheus_wiring_keys(tmp_path: Path) -> None:
    """gpufleet.ui.controllers.prom_wiring starts a listener when its key is present: an off
    switch must leave no key behind, an on switch writes the address under that key."""
    path = tmp_path / "config.toml"
    save_settings(CHANGED, path)
    table = load_config(path).settings
    assert table["metrics_listen"] == "0.0.0.0:19464"
    assert table["alertmanager_listen"] == "[::1]:19466"
    assert not {"exporter_enabled", "exporter_listen", "alertmanager_enabled"} & set(table)
    save_settings(dataclasses.replace(CHANGED, exporter_enabled=False), path)
    table = load_config(path).settings
    assert "metrics_listen" not in table and "alertmanager_listen" in table
    s, problems = parse_settings({"metrics_listen": "127.0.0.1:9999"})
    assert problems == [] and s.exporter_enabled and s.exporter_listen == "127.0.0.1:9999"
    assert not s.alertmanager_enabled
