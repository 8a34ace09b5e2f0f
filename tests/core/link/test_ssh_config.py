"""~/.ssh/config lookups, with Include (which paramiko ignores) done by us."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import ssh_config as sshconfig
from gpufleet.core.link.ssh import resolve_hops


@pytest.fixture
def ssh_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    d = home / ".ssh"
    d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return d


def test_lookup_with_includes_globs_and_relative_paths(ssh_dir: Path):
    (ssh_dir / "config.d").mkdir()
    (ssh_dir / "config.d" / "10-rentals.conf").write_text(
        "Host gpu1\n  HostName ssh4.example-cloud.com\n  Port 41234\n  User root\n"
        "  IdentityFile ~/.ssh/rental\n  ProxyJump bastion\n"
    )
    (ssh_dir / "config.d" / "20-other.conf").write_text("Host gpu2\n  HostName 10.0.0.2\n")
    (ssh_dir / "extra").write_text("Port 2200\n")
    (ssh_dir / "config").write_text(
        "Include config.d/*.conf\n"
        "Host bastion\n  HostName bastion.example\n  User jumper\n"
        "Host inside\n  Include extra\n  User me\n"
        "Host *\n  User fallback\n"
    )
    t = sshconfig.lookup("gpu1")
    assert (t.hostname, t.port, t.user, t.proxy_jump) == (
        "ssh4.example-cloud.com",
        41234,
        "root",
        "bastion",
    )
    assert t.identity_files == (str(ssh_dir / "rental"),)
    assert sshconfig.lookup("gpu2").hostname == "10.0.0.2"
    # An Include inside a Host block applies to that block, and the block goes on after it.
    inside = sshconfig.lookup("inside")
    assert (inside.port, inside.user) == (2200, "me")
    assert sshconfig.lookup("gpu2").port is None
    # Wildcards apply, but are not importable.
    assert sshconfig.lookup("nowhere").user == "fallback"
    assert sshconfig.importable_aliases() == ["gpu1", "gpu2", "bastion", "inside"]


def test_absolute_include_and_missing_file(ssh_dir: Path, tmp_path: Path):
    other = tmp_path / "abs.conf"
    other.write_text("Host far\n  HostName far.example\n")
    (ssh_dir / "config").write_text(f"Include {other} {ssh_dir}/does-not-exist\n")
    assert sshconfig.lookup("far").hostname == "far.example"
    assert sshconfig.importable_aliases() == ["far"]


def test_no_config_at_all(ssh_dir: Path):
    t = sshconfig.lookup("plain")
    assert (t.hostname, t.port, t.user, t.identity_files, t.proxy_jump) == (
        "plain",
        None,
        None,
        (),
        None,
    )
    assert sshconfig.importable_aliases() == []


def test_include_loop_is_an_error(ssh_dir: Path):
    (ssh_dir / "config").write_text("Include config\n")
    with pytest.raises(sshconfig.SshConfigError, match="nested more than"):
        sshconfig.load()


def test_bad_port_is_a_clear_error(ssh_dir: Path):
    (ssh_dir / "config").write_text("Host x\n  Port abc\n")
    with pytest.raises(sshconfig.SshConfigError, match="Port of 'x' is not a number"):
        sshconfig.lookup("x")


def test_resolve_hops_honours_the_config_and_explicit_values_win(ssh_dir: Path):
    (ssh_dir / "config").write_text(
        "Host gpu1\n  HostName real.example\n  Port 41234\n  User root\n"
        "  IdentityFile ~/.ssh/rental\n  ProxyJump jumper@bastion:2200,second\n"
        "Host second\n  HostName second.example\n  User two\n"
    )
    hops = resolve_hops(HostConfig(name="g", host="gpu1"))
    assert [(h.host, h.port, h.user) for h in hops] == [
        ("bastion", 2200, "jumper"),
        ("second.example", 22, "two"),
        ("real.example", 41234, "root"),
    ]
    assert hops[-1].key_paths == (str(ssh_dir / "rental"),)
    assert hops[0].label.startswith("jump host 1 of g")
    # Explicit HostConfig values beat ~/.ssh/config.
    hops = resolve_hops(
        HostConfig(name="g", host="gpu1", port=2, user="me", key_path="/k", jump="j")
    )
    assert [(h.host, h.port, h.user) for h in hops] == [
        ("j", 22, hops[0].user),
        ("real.example", 2, "me"),
    ]
    assert hops[-1].key_paths == ("/k",)
