"""What the user can choose in the settings dialog, typed and validated, Qt-free.

The values live in the ``[settings]`` table of config.toml
(``gpufleet.core.config.configfile``), one key per field below; webhooks as
``[settings.webhooks.NAME]`` tables (format and minimum severity). The two listeners keep the
keys the app's Prometheus wiring reads
(``gpufleet.ui.controllers.prom_wiring``): ``metrics_listen`` (the fleet exporter) and
``alertmanager_listen`` (the Alertmanager receiver), each present only while switched on.
Secrets never go there: a webhook's URL (which carries its token) and the Alertmanager
receiver's token are stored in the OS keyring through ``gpufleet.core.config.secrets``.

Reading is lenient, writing is strict: ``parse_settings`` keeps every valid value and
replaces an invalid one by its default with a one-line problem (so a hand-edited typo never
stops the app), while ``validate`` refuses a bad value with a ``SettingsError`` naming the
setting and the allowed range (what the dialog shows). Saving rewrites only the keys this
module owns and keeps the hosts and any other key of ``[settings]``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gpufleet_sampler.listen_address import parse_listen as sampler_parse_listen

from gpufleet.core.config import secrets
from gpufleet.core.config.configfile import load_config, save_config
from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated

LANGUAGES: Final = ("system", "en", "zh_CN")
THEMES: Final = ("system", "light", "dark")
WEBHOOK_FORMATS: Final = (
    "json",
    "slack",
    "dingtalk",
    "wecom",
)  # gpufleet.core.notify.webhooks.FORMATS
SEVERITIES: Final = ("info", "warning", "critical")
WEBHOOK_SECRET_PREFIX: Final = "webhook:"  # gpufleet.core.notify.webhooks.SECRET_PREFIX
ALERTMANAGER_SECRET: Final = "alertmanager"  # gpufleet.core.prometheus.am_receiver.SECRET_NAME
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class SettingsError(ValueError):
    """A value that cannot be used; ``str()`` is one line naming the setting.

    The refusals the settings dialog can meet also carry a ``template`` marked for
    translation and its ``values``: ``localized()`` is the message in the installed language.
    """

    def __init__(self, key: str, message: str, template: str | None = None, **values: Any) -> None:
        super().__init__(message)
        self.key = key
        self.template = template
        self.values = values

    def localized(self) -> str:
        text = translated("Settings", self.template) if self.template else None
        if text is None or text == self.template:
            return str(self)  # English: the message as raised, naming the config key
        try:
            return text.format(**self.values)
        except (KeyError, IndexError, ValueError):  # a bad translation: the English line
            return str(self)


@dataclass(frozen=True)
class WebhookSetting:
    """A webhook by name; its URL is in the keyring under ``webhook:NAME``."""

    name: str
    format: str = "json"
    min_severity: str = "warning"


@dataclass(frozen=True)
class Settings:
    refresh_hz: float = 3.0  # redraws of the visible tab per second
    notifications: bool = True
    notify_repeat_min: float = 10.0  # the same alert on the same GPU at most this often
    notify_max_per_min: int = 5  # over that, one "N more alerts" notification
    language: str = "system"
    theme: str = "system"
    retention_raw_days: int = 7  # full-resolution history
    retention_rollup_days: int = 90  # downsampled history
    history_max_gb: float = 8.0  # history kept by size too: the oldest raw data goes first
    exporter_enabled: bool = False  # the fleet's Prometheus exporter (gpufleet serve-metrics)
    exporter_listen: str = "127.0.0.1:9464"
    alertmanager_enabled: bool = False  # receive a team Alertmanager's alerts
    alertmanager_listen: str = "127.0.0.1:9466"
    webhooks: tuple[WebhookSetting, ...] = ()
    start_with_session: bool = False  # XDG autostart (gpufleet.core.config.autostart)


# Numeric ranges: (min, max, unit for messages).
RANGES: Final[dict[str, tuple[float, float, str]]] = {
    "refresh_hz": (0.2, 30.0, "Hz"),
    "notify_repeat_min": (0.0, 1440.0, "minutes"),
    "notify_max_per_min": (1, 60, "per minute"),
    "retention_raw_days": (1, 365, "days"),
    "retention_rollup_days": (1, 3650, "days"),
    "history_max_gb": (0.1, 10_000.0, "GiB"),
}
CHOICES: Final[dict[str, tuple[str, ...]]] = {"language": LANGUAGES, "theme": THEMES}
_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
KEYS: Final = tuple(_FIELDS)
# config.toml key -> (the switch, the address) it stands for.
_LISTENERS: Final = {
    "metrics_listen": ("exporter_enabled", "exporter_listen"),
    "alertmanager_listen": ("alertmanager_enabled", "alertmanager_listen"),
}
_LISTENER_KEYS: Final = frozenset(k for pair in _LISTENERS.values() for k in pair)


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``:PORT``; ValueError with a one-line reason."""
    host, port = sampler_parse_listen(text)
    if port == 0:
        raise ValueError(f"{text!r}: choose a port (1..65535)")
    return host, port


def _check_value(key: str, value: Any) -> Any:
    """The value converted to the field's type, or SettingsError."""
    default = _FIELDS[key].default
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise SettingsError(key, f"{key} must be true or false, not {value!r}")
        return value
    if key in RANGES:
        lo, hi, unit = RANGES[key]
        want_int = isinstance(default, int)
        ok_type = isinstance(value, int if want_int else int | float)
        if not ok_type or isinstance(value, bool):
            kind = "a whole number" if want_int else "a number"
            raise SettingsError(key, f"{key} must be {kind} ({lo:g}..{hi:g} {unit}), not {value!r}")
        if not lo <= value <= hi:
            raise SettingsError(key, f"{key} must be {lo:g}..{hi:g} {unit}, not {value:g}")
        return int(value) if want_int else float(value)
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise SettingsError(
                key, f"{key} must be one of {', '.join(CHOICES[key])}, not {value!r}"
            )
        return value
    if key.endswith("_listen"):
        if not isinstance(value, str):
            raise SettingsError(key, f"{key} must be HOST:PORT, not {value!r}")
        try:
            parse_listen(value)
        except ValueError as e:
            raise SettingsError(
                key,
                f"{key}: {e}",
                QT_TRANSLATE_NOOP("Settings", "{address}: not a usable HOST:PORT address ({why})"),
                address=value,
                why=e,
            ) from None
        return value.strip()
    if key == "webhooks":
        return _check_webhooks(value)
    return value


def _check_webhooks(value: Any) -> tuple[WebhookSetting, ...]:
    if not isinstance(value, tuple | list):
        raise SettingsError("webhooks", "webhooks must be a list")
    seen: set[str] = set()
    out = []
    for w in value:
        if not isinstance(w, WebhookSetting):
            raise SettingsError("webhooks", f"not a webhook: {w!r}")
        if not _NAME_RE.match(w.name):
            raise SettingsError(
                "webhooks",
                f"webhook name {w.name!r}: use letters, digits, '.', '_' or '-' (up to 64)",
                QT_TRANSLATE_NOOP(
                    "Settings",
                    "webhook name {name!r}: use letters, digits, '.', '_' or '-' (up to 64)",
                ),
                name=w.name,
            )
        if w.name in seen:
            raise SettingsError(
                "webhooks",
                f"webhook name {w.name!r} is used twice",
                QT_TRANSLATE_NOOP("Settings", "webhook name {name!r} is used twice"),
                name=w.name,
            )
        seen.add(w.name)
        if w.format not in WEBHOOK_FORMATS:
            raise SettingsError(
                "webhooks",
                f"webhook {w.name!r}: format must be one of {', '.join(WEBHOOK_FORMATS)}",
            )
        if w.min_severity not in SEVERITIES:
            raise SettingsError(
                "webhooks",
                f"webhook {w.name!r}: minimum severity must be one of {', '.join(SEVERITIES)}",
            )
        out.append(w)
    return tuple(out)


def validate(s: Settings) -> Settings:
    """``s`` when every value is usable; else SettingsError for the first bad one."""
    for key in KEYS:
        _check_value(key, getattr(s, key))
    if s.retention_rollup_days < s.retention_raw_days:
        raise SettingsError(
            "retention_rollup_days",
            f"retention_rollup_days ({s.retention_rollup_days}) must be at least "
            f"retention_raw_days ({s.retention_raw_days}): the rollups outlive the raw data",
            QT_TRANSLATE_NOOP(
                "Settings",
                "the downsampled history ({rollup} days) must be kept at least as long as the "
                "full-resolution samples ({raw} days)",
            ),
            rollup=s.retention_rollup_days,
            raw=s.retention_raw_days,
        )
    if (
        s.exporter_enabled
        and s.alertmanager_enabled
        and parse_listen(s.exporter_listen)[1] == parse_listen(s.alertmanager_listen)[1]
    ):
        raise SettingsError(
            "alertmanager_listen",
            "the exporter and the Alertmanager receiver cannot share port "
            f"{parse_listen(s.exporter_listen)[1]}",
            QT_TRANSLATE_NOOP(
                "Settings", "the exporter and the Alertmanager receiver cannot share port {port}"
            ),
            port=parse_listen(s.exporter_listen)[1],
        )
    return s


def _webhooks_from_table(table: Any) -> tuple[WebhookSetting, ...]:
    if not isinstance(table, Mapping):
        raise SettingsError("webhooks", "[settings.webhooks] must be a table of webhooks by name")
    out = []
    for name, spec in table.items():
        if not isinstance(spec, Mapping):
            raise SettingsError("webhooks", f"[settings.webhooks.{name}] must be a table")
        unknown = set(spec) - {"format", "min_severity"}
        if unknown:
            raise SettingsError(
                "webhooks",
                f"[settings.webhooks.{name}]: unknown key(s) {', '.join(sorted(unknown))} "
                "(the URL belongs in the keyring, not in this file)",
            )
        out.append(
            WebhookSetting(
                str(name), spec.get("format", "json"), spec.get("min_severity", "warning")
            )
        )
    return _check_webhooks(out)


def parse_settings(
    table: Mapping[str, Any], where: str = "config.toml"
) -> tuple[Settings, list[str]]:
    """Settings from a ``[settings]`` table, leniently: each bad value falls back to its
    default and adds a one-line problem. Keys this module does not own are ignored."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    # The switches are not keys of the file: drop any hand-written one, then derive them.
    table = {k: v for k, v in table.items() if k in _LISTENERS or k not in _LISTENER_KEYS}
    # A listener is on exactly when its address key is present (the wiring's convention).
    for file_key, (on_key, listen_key) in _LISTENERS.items():
        if file_key in table:
            table[on_key] = True
            table[listen_key] = table.pop(file_key)
    for key in KEYS:
        if key not in table:
            continue
        try:
            raw = table[key]
            values[key] = _webhooks_from_table(raw) if key == "webhooks" else _check_value(key, raw)
        except SettingsError as e:
            problems.append(f"{where}: [settings] {e}; using the default")
    s = Settings(**values)
    try:
        validate(s)
    except SettingsError as e:
        problems.append(f"{where}: [settings] {e}; using the defaults for both")
        defaults = Settings()
        if e.key == "retention_rollup_days":
            s = dataclasses.replace(
                s,
                retention_raw_days=defaults.retention_raw_days,
                retention_rollup_days=defaults.retention_rollup_days,
            )
        else:
            s = dataclasses.replace(s, alertmanager_enabled=False)
    return s, problems


def settings_table(s: Settings) -> dict[str, Any]:
    """The ``[settings]`` keys of ``s`` for TOML: every owned key, so the file shows them,
    except that a listener appears (as its address) only while it is on."""
    out: dict[str, Any] = {}
    for file_key, (on_key, listen_key) in _LISTENERS.items():
        if getattr(s, on_key):
            out[file_key] = getattr(s, listen_key)
    for key in KEYS:
        value = getattr(s, key)
        if key in _LISTENER_KEYS:
            continue
        if key == "webhooks":
            out[key] = {w.name: {"format": w.format, "min_severity": w.min_severity} for w in value}
        else:
            out[key] = value
    return out


def load_settings(path: Path | None = None) -> tuple[Settings, list[str]]:
    """The settings of config.toml (defaults where absent) and the problems found.

    Raises ``gpufleet.core.config.configfile.ConfigError`` when the file itself cannot be read."""
    where = str(path) if path is not None else "config.toml"
    return parse_settings(load_config(path).settings, where)


def save_settings(s: Settings, path: Path | None = None) -> Path:
    """Validate and write ``s`` into config.toml, keeping hosts and keys owned by others.

    Raises SettingsError (a bad value) or ConfigError (a config file that cannot be read,
    which is then left untouched rather than overwritten)."""
    validate(s)
    cfg = load_config(path)
    kept = {k: v for k, v in cfg.settings.items() if k not in KEYS and k not in _LISTENERS}
    cfg.settings = {**kept, **settings_table(s)}
    if not s.webhooks:
        cfg.settings.pop("webhooks", None)  # TOML has no empty inline table worth writing
    return save_config(cfg, path)


def webhook_table(s: Settings) -> dict[str, dict[str, str]]:
    """The webhooks in the shape of rules.toml's ``[webhooks]`` (``notify.load_webhooks``)."""
    return {w.name: {"format": w.format, "min_severity": w.min_severity} for w in s.webhooks}


def store_webhook_url(name: str, url: str) -> None:
    """Keep a webhook's URL (it carries the token) in the keyring; SettingsError for a URL
    that is not http(s), SecretStoreUnavailable when there is no usable keyring."""
    url = url.strip()
    if (
        not url.startswith(("http://", "https://"))
        or len(url) < 12
        or any(c.isspace() for c in url)
    ):
        raise SettingsError(
            "webhooks",
            f"webhook {name!r}: the URL must be an https:// (or http://) address",
            QT_TRANSLATE_NOOP(
                "Settings", "webhook {name!r}: the URL must be an https:// (or http://) address"
            ),
            name=name,
        )
    secrets.set_secret(WEBHOOK_SECRET_PREFIX + name, "webhook-url", url)


def has_webhook_url(name: str) -> bool:
    return secrets.get_secret(WEBHOOK_SECRET_PREFIX + name, "webhook-url") is not None


def forget_webhook_url(name: str) -> bool:
    return secrets.delete_secret(WEBHOOK_SECRET_PREFIX + name, "webhook-url")


def store_alertmanager_token(token: str) -> None:
    """The bearer token the Alertmanager receiver requires, kept in the keyring."""
    token = token.strip()
    if len(token) < 16 or any(c.isspace() for c in token):
        raise SettingsError(
            "alertmanager_token",
            "the Alertmanager token must be 16+ characters without spaces",
            QT_TRANSLATE_NOOP(
                "Settings", "the Alertmanager token must be 16+ characters without spaces"
            ),
        )
    secrets.set_secret(ALERTMANAGER_SECRET, "token", token)


def default_settings() -> Settings:
    return Settings()
