"""config.toml: round trip, atomic 0600 writes, and one clear line for every bad file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from gpufleet.core.config import configfile as config
from gpufleet.core.config.configfile import AppConfig, ConfigError, load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig


def _write(text: str) -> Path:
    path = config.config_file_path()
    path.write_text(text)
    return path


def test_missing_file_is_an_empty_config():
    cfg = load_config()
    assert cfg.hosts == [] and cfg.settings == {} and cfg.schema_version == config.SCHEMA_VERSION


def test_round_trip_keeps_every_field_and_writes_0600():
    hosts = [
        HostConfig(
            name="h100-a",
            host="ssh4.example-cloud.com",
            port=41234,
            user="root",
            key_path="~/.ssh/k",
            jump="bastion:2222",
            price_per_hour=2.49,
            currency="EUR",
            billing_start=1_700_000_000.0,
            budget=100.0,
            tags=("train", "eu"),
            allowed_processes=("python",),
            allow_sudo_kill=True,
            rule_overrides={"thermal": {"temp_c": 80}},
            sampler_cpu_pct=0.5,
        ),
        HostConfig(name="sim", backend="sim", scenario="healthy-8xa100", transport="local"),
    ]
    path = save_config(AppConfig(hosts=hosts, settings={"theme": "dark", "refresh_hz": 2}))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg = load_config()
    assert cfg.hosts == hosts
    assert cfg.settings == {"theme": "dark", "refresh_hz": 2}
    # Defaults are not written out.
    assert "seed" not in path.read_text()
    # No temp file left behind.
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".config.")] == []


def test_save_replaces_atomically(monkeypatch):
    save_config(AppConfig(hosts=[HostConfig(name="a")]))
    real_replace = os.replace

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_config(AppConfig(hosts=[HostConfig(name="b")]))
    monkeypatch.setattr(os, "replace", real_replace)
    # The old file is intact and no temp file is left.
    assert [h.name for h in load_config().hosts] == ["a"]
    assert [p for p in config.config_file_path().parent.iterdir() if ".tmp" in p.name] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("schema_version = 1\n[[hosts]\nname='x'\n", "not valid TOML"),
        ("schema_version = 99\n", "newer gpufleet (schema_version 99"),
        ("schema_version = 'one'\n", "`schema_version` must be a positive integer"),
        ("[[hosts]]\nhost = 'a'\n", ":1: a host needs a `name`"),
        (
            "[[hosts]]\nname = 'a'\n\n[[hosts]]\nname = 'a'\n",
            ":4: duplicate host name 'a' (also at line 1)",
        ),
        ("[[hosts]]\nname = 'a'\nport = '22'\n", "field `port` must be an integer, not '22'"),
        ("[[hosts]]\nname = 'a'\nport = 70000\n", "`port` must be 1..65535"),
        ("[[hosts]]\nname = 'a'\nbackend = 'cuda'\n", "field `backend` must be 'nvml' or 'sim'"),
        ("[[hosts]]\nname = 'a'\ntags = 'x'\n", "field `tags` must be a list of strings"),
        ("[[hosts]]\nname = 'a'\nprot = 22\n", "unknown field `prot`"),
        ("[[hosts]]\nname = 'a'\nbackend = 'sim'\n", "a `sim` backend needs a `scenario`"),
        ("hosts = 3\n", "`hosts` must be an array of tables"),
        ("colour = 'x'\n", "unknown top-level key(s) colour"),
        ("[[hosts]]\nname = 'a'\npassword = 'hunter2'\n", "must not be stored in the config"),
        ("[[hosts]]\nname = 'a'\nsampler_cpu_pct = 0\n", "`sampler_cpu_pct` must be a share"),
        ("[[hosts]]\nname = 'a'\nsampler_cpu_pct = 'low'\n", "must be a number, not 'low'"),
    ],
)
def test_bad_files_give_one_clear_line_naming_the_file(text, expected):
    path = _write(text)
    with pytest.raises(ConfigError) as ei:
        load_config()
    msg = str(ei.value)
    assert "\n" not in msg
    assert str(path) in msg
    assert expected in msg
    assert "hunter2" not in msg


def test_line_number_points_at_the_bad_host():
    _write("schema_version = 1\n\n[[hosts]]\nname = 'ok'\n\n[[hosts]]\nname = 'bad'\nport = -1\n")
    with pytest.raises(ConfigError, match=r"config.toml:6 \(host 'bad'\)"):
        load_config()


def test_int_accepted_where_a_number_is_expected():
    _write("[[hosts]]\nname = 'a'\nprice_per_hour = 2\n")
    h = load_config().hosts[0]
    assert h.price_per_hour == 2.0 and isinstance(h.price_per_hour, float)


def test_duplicate_names_refused_on_save():
    with pytest.raises(ConfigError, match="duplicate host name"):
        save_config(AppConfig(hosts=[HostConfig(name="a"), HostConfig(name="a")]))
