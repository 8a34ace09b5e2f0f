"""The TOML config file: hosts and settings, schema-versioned, never a secret.

Layout (``paths.config_file()``, i.e. ``$GPUFLEET_CONFIG_DIR/config.toml``)::

    schema_version = 1

    [settings]
    theme = "dark"

    [[hosts]]
    name = "h100-a"
    host = "ssh4.example-cloud.com"
    port = 41234
    user = "root"
    key_path = "~/.ssh/rental"
    price_per_hour = 2.49

A host table holds ``HostConfig`` fields; fields left at their default are not written.
Loading validates everything and raises ``ConfigError`` with one line naming the file, the
line of the offending host and the field. Passwords and passphrases belong in the keyring
(``gpufleet hosts set-secret``): a config that holds one is refused, so it never spreads.
Saving is atomic (temp file + rename, mode 0600).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import tempfile
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.prometheus_sources import parse_sources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SCHEMA_VERSION = 1
# Keys that would hold a secret: refused in the file (the keyring is the only place).
_SECRET_KEYS = {"password", "passphrase", "key_passphrase", "secret", "token", "api_key"}


class ConfigError(Exception):
    """A config file that cannot be used; ``str()`` is one line naming file, line, field."""


@dataclass
class AppConfig:
    hosts: list[HostConfig] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    # [[prometheus]] tables (host groups read from a Prometheus server), validated by
    # gpufleet.core.prometheus.source.parse_sources.
    prometheus: list[dict[str, Any]] = field(default_factory=list)

    def host(self, name: str) -> HostConfig | None:
        return next((h for h in self.hosts if h.name == name), None)

    def names(self) -> list[str]:
        return [h.name for h in self.hosts]


def config_file_path() -> Path:
    return paths.config_file()


# -- field types, derived from the HostConfig dataclass ------------------------------------

_HINTS = typing.get_type_hints(HostConfig)
_FIELDS = {f.name: f for f in dataclasses.fields(HostConfig)}


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(tp) if a is not type(None))
    if origin is tuple:
        return "a list of strings"
    if origin is dict:
        return "a table"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        tp, str(tp)
    )


def _convert(value: Any, tp: Any) -> tuple[bool, Any]:
    """(ok, converted value) for ``value`` read from TOML against the type ``tp``."""
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return (value in typing.get_args(tp), value)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            ok, v = _convert(value, arg)
            if ok:
                return True, v
        return False, value
    if origin is tuple:
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            return True, tuple(value)
        return False, value
    if origin is dict:
        return (isinstance(value, dict), value)
    if tp is bool:
        return (isinstance(value, bool), value)
    if tp is int:
        return (isinstance(value, int) and not isinstance(value, bool), value)
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if tp is str:
        return (isinstance(value, str), value)
    return True, value  # a field type this module does not know yet: taken as it is


def _host_lines(text: str) -> list[int]:
    """1-based line numbers of each ``[[hosts]]`` header, in order."""
    return [
        i
        for i, line in enumerate(text.splitlines(), 1)
        if re.match(r"^\s*\[\[\s*hosts\s*\]\]", line)
    ]


def _check_target_and_prices(kwargs: Mapping[str, Any], where: str) -> None:
    """An SSH target that ssh would read as an option (``-oProxyCommand=…``) or that holds
    spaces or control characters, and a price that is not a finite amount, are refused:
    values imported from a provider's API pass here too."""
    for key in ("host", "user"):
        v = kwargs.get(key)
        if isinstance(v, str) and (
            v.startswith("-") or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in v)
        ):
            raise ConfigError(
                f"{where}: field `{key}` must not start with '-' or hold spaces or control "
                f"characters, not {v!r}"
            )
    for key in ("price_per_hour", "storage_per_hour", "budget"):
        v = kwargs.get(key)
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{where}: field `{key}` must be a finite amount >= 0, not {v}")


def host_from_dict(d: Mapping[str, Any], where: str) -> HostConfig:
    """Build and validate one HostConfig; ``where`` prefixes error messages."""
    name = d.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: a host needs a `name` (a non-empty string)")
    where = f"{where} (host {name!r})"
    kwargs: dict[str, Any] = {}
    for key, value in d.items():
        if key.lower() in _SECRET_KEYS:
            raise ConfigError(
                f"{where}: `{key}` must not be stored in the config file; remove it and run "
                f"`gpufleet hosts set-secret {name}` (secrets live only in the OS keyring)"
            )
        if key not in _FIELDS:
            raise ConfigError(
                f"{where}: unknown field `{key}` (known: {', '.join(sorted(_FIELDS))})"
            )
        ok, converted = _convert(value, _HINTS[key])
        if not ok:
            raise ConfigError(
                f"{where}: field `{key}` must be {_describe(_HINTS[key])}, not {value!r}"
            )
        kwargs[key] = converted
    port = kwargs.get("port", 22)
    if not 0 < port < 65536:
        raise ConfigError(f"{where}: field `port` must be 1..65535, not {port}")
    _check_target_and_prices(kwargs, where)
    interval = kwargs.get("interval_s", 1.0)
    if not interval > 0:
        raise ConfigError(f"{where}: field `interval_s` must be > 0, not {interval}")
    budget = kwargs.get("sampler_cpu_pct")
    if budget is not None and not 0 < budget <= 100:
        raise ConfigError(
            f"{where}: field `sampler_cpu_pct` must be a share of one core over 0 and at most "
            f"100 (%), not {budget}"
        )
    if kwargs.get("backend") == "sim" and not kwargs.get("scenario"):
        raise ConfigError(f"{where}: a `sim` backend needs a `scenario`")
    return HostConfig(**kwargs)


def host_to_dict(h: HostConfig) -> dict[str, Any]:
    """The TOML table of a host: name and host always, other fields when not default."""
    out: dict[str, Any] = {"name": h.name, "host": h.host}
    for f in dataclasses.fields(h):
        if f.name in out:
            continue
        value = getattr(h, f.name)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        if value == default or value is None:
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def load_config(path: Path | None = None) -> AppConfig:
    """Read the config (an empty one when the file does not exist); raises ConfigError."""
    path = path if path is not None else config_file_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AppConfig()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file ({e})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None

    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ConfigError(f"{path}: `schema_version` must be a positive integer, not {version!r}")
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"{path}: written by a newer gpufleet (schema_version {version}; this version "
            f"reads up to {SCHEMA_VERSION}): upgrade gpufleet"
        )
    unknown = set(data) - {"schema_version", "settings", "hosts", "prometheus"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))} "
            "(expected schema_version, [settings], [[hosts]])"
        )
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: `settings` must be a table ([settings])")
    raw_hosts = data.get("hosts", [])
    if not isinstance(raw_hosts, list):
        raise ConfigError(f"{path}: `hosts` must be an array of tables ([[hosts]])")
    lines = _host_lines(text)
    hosts: list[HostConfig] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(raw_hosts):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: host #{i + 1}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: each entry of `hosts` must be a table")
        h = host_from_dict(raw, where)
        if h.name in seen:
            raise ConfigError(
                f"{where}: duplicate host name {h.name!r} (also at {seen[h.name]}); names must "
                "be unique"
            )
        seen[h.name] = f"line {lines[i]}" if i < len(lines) else f"host #{i + 1}"
        hosts.append(h)
    prometheus = data.get("prometheus", [])
    if not isinstance(prometheus, list) or not all(isinstance(t, dict) for t in prometheus):
        raise ConfigError(f"{path}: `prometheus` must be an array of tables ([[prometheus]])")
    try:
        parse_sources(prometheus, str(path))
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return AppConfig(
        hosts=hosts,
        settings=dict(settings),
        schema_version=SCHEMA_VERSION,
        prometheus=[dict(t) for t in prometheus],
    )


def dumps(cfg: AppConfig) -> str:
    names = [h.name for h in cfg.hosts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"duplicate host name(s): {', '.join(dupes)}")
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if cfg.settings:
        doc["settings"] = cfg.settings
    if cfg.hosts:
        doc["hosts"] = [host_to_dict(h) for h in cfg.hosts]
    if cfg.prometheus:
        doc["prometheus"] = cfg.prometheus
    header = (
        "# gpufleet configuration. Secrets are not stored here: see `gpufleet hosts set-secret`.\n"
    )
    return header + tomli_w.dumps(doc)


def save_config(cfg: AppConfig, path: Path | None = None) -> Path:
    """Write atomically (temp file in the same directory, fsync, rename), mode 0600."""
    path = path if path is not None else config_file_path()
    text = dumps(cfg)
    paths.ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return path
    try:
        os.fsync(dfd)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the rename is done either way
    finally:
        os.close(dfd)
    return path
