"""A known host whose real sshd starts offering only a host key of another type (Ed25519 on
file, ECDSA or RSA presented): a changed key, refused with and without ``--accept-new``,
directly, for a jump host, through a jump host and on a reconnect during a long stream;
``forget-key`` is the way out."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpufleet.cli.errors import EXIT_HOSTKEY
from gpufleet.core.config.configfile import AppConfig, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import FAILED, STREAMING, HostStatus
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.link import hostkeys
from gpufleet.core.link.ssh import SshConnection, SshError

from tests.support.sampler_daemons import Recorder, stop_daemons
from tests.support.sshd import Sshd

ACCEPT = ("--accept-new", "--no-record")


def keygen_fingerprint(pub: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-f", str(pub)], capture_output=True, text=True)
    return out.stdout.split()[1]


def yes(asked: list[str]) -> Callable[[str, str, str], bool]:
    def decide(label: str, key_type: str, fingerprint: str) -> bool:
        asked.append(f"{label} {key_type} {fingerprint}")
        return True

    return decide


def assert_changed(e: SshError, old_fp: str, new_fp: str, new_type: str) -> None:
    assert e.kind == "hostkey_changed" and not e.retryable, str(e)
    text = str(e)
    assert old_fp in text and new_fp in text, text
    assert "ssh-ed25519" in text and new_type in text, text
    assert "forget-key" in text, text


@pytest.mark.parametrize("kind, key_type", [("ecdsa", "ecdsa-sha2-nistp256"), ("rsa", "rsa-sha2")])
def test_a_key_of_another_type_is_a_changed_key(
    sshd: Sshd, ssh_host_config: Callable[..., HostConfig], kind: str, key_type: str
) -> None:
    host = ssh_host_config(sshd)
    old_fp = keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    sshd.switch_host_key_type(kind)
    new_fp = keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    on_file = hostkeys.app_known_hosts().read_text()
    for decide in (None, yes(asked := [])):  # without, then with --accept-new
        with pytest.raises(SshError) as ei:
            SshConnection.open(host, on_unknown_key=decide)
        # paramiko names an RSA key "ssh-rsa"; its signature algorithm is rsa-sha2-*.
        assert_changed(ei.value, old_fp, new_fp, "ssh-rsa" if kind == "rsa" else key_type)
    assert asked == []  # never offered for acceptance
    assert hostkeys.app_known_hosts().read_text() == on_file  # nothing added
    # forget-key, then the new key is asked about like any unknown key.
    assert hostkeys.KnownHosts().forget(sshd.key_name) == 1
    with SshConnection.open(host, on_unknown_key=yes(asked)) as c:
        assert c.run("true")[0] == 0
    assert len(asked) == 1 and new_fp in asked[0]


def test_type_switch_of_a_jump_host_and_behind_one_is_refused(
    sshd: Sshd, sshd_factory: Callable[..., Sshd], ssh_host_config: Callable[..., HostConfig]
) -> None:
    jump = sshd_factory(client_key=sshd.client_key)
    ssh_host_config(jump)
    host = ssh_host_config(sshd, jump=f"127.0.0.1:{jump.port}")
    with SshConnection.open(host, on_unknown_key=None) as c:
        assert c.run("true")[0] == 0
    # The jump host switches.
    old_fp = keygen_fingerprint(jump.host_key.with_suffix(".pub"))
    jump.switch_host_key_type("ecdsa")
    new_fp = keygen_fingerprint(jump.host_key.with_suffix(".pub"))
    asked: list[str] = []
    for decide in (None, yes(asked)):
        with pytest.raises(SshError) as ei:
            SshConnection.open(host, on_unknown_key=decide)
        assert_changed(ei.value, old_fp, new_fp, "ecdsa-sha2-nistp256")
        assert str(ei.value).startswith("jump host 1 of testhost"), str(ei.value)
    assert asked == []
    # The jump host is trusted again; now the target behind it switches.
    hostkeys.KnownHosts().forget(jump.key_name)
    ssh_host_config(jump)
    old_fp = keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    sshd.switch_host_key_type("rsa")
    new_fp = keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    for decide in (None, yes(asked)):
        with pytest.raises(SshError) as ei:
            SshConnection.open(host, on_unknown_key=decide)
        assert_changed(ei.value, old_fp, new_fp, "ssh-rsa")
    assert asked == []


def _remote(
    tmp_path: Path,
    sshd_factory: Callable[..., Sshd],
    ssh_host_config: Callable[..., HostConfig],
    name: str,
    known: bool,
) -> tuple[Sshd, HostConfig, str]:
    home = tmp_path / f"home-{name}"
    home.mkdir(mode=0o700)
    server = sshd_factory(extra_config=(f"SetEnv HOME={home}",))
    overrides: dict[str, Any] = {"backend": "sim", "scenario": "healthy-8xa100", "seed": 41}
    host = ssh_host_config(server, name, known=known, **overrides)
    return server, host, str(home / ".cache" / "gpufleet")


@pytest.mark.slow
def test_type_switch_on_a_reconnect_of_a_long_stream_with_accept_new(
    tmp_path: Path, sshd_factory: Callable[..., Sshd], ssh_host_config: Callable[..., HostConfig]
) -> None:
    server, host, state = _remote(tmp_path, sshd_factory, ssh_host_config, "long", known=False)
    fleet = Fleet([host], accept_new=True)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: len(rec.samples("long")) >= 3, 90, "streaming with --accept-new")
        assert hostkeys.KnownHosts().known_types(server.key_name) == ["ssh-ed25519"]
        assert server.proc is not None
        sessions = subprocess.run(
            ["pgrep", "-P", str(server.proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert sessions
        server.switch_host_key_type("ecdsa")
        # Then the link drops (the old key's sessions end): the session reconnects and meets
        # the new key.
        for pid in sessions:
            subprocess.run(["kill", "-TERM", pid], check=False)

        def failed() -> bool:
            return any(
                s.state == FAILED and s.kind == "hostkey_changed"
                for s in rec.of("long", HostStatus)
            )

        rec.wait(failed, 90, "the reconnect refused as a changed key")
        n = len(rec.samples("long"))
        time.sleep(2)
        rec.pump()
        assert len(rec.samples("long")) == n
        assert fleet.status("long").state != STREAMING
        assert hostkeys.KnownHosts().known_types(server.key_name) == ["ssh-ed25519"]
    finally:
        fleet.stop()
        stop_daemons([host], state)


@pytest.mark.slow
def test_cli_stream_accept_new_refuses_a_type_switched_key(
    tmp_path: Path, sshd_factory: Callable[..., Sshd], ssh_host_config: Callable[..., HostConfig]
) -> None:
    server, host, state = _remote(tmp_path, sshd_factory, ssh_host_config, "cfg", known=True)
    save_config(AppConfig(hosts=[host]))
    old_fp = keygen_fingerprint(server.host_key.with_suffix(".pub"))
    server.switch_host_key_type("ecdsa")
    new_fp = keygen_fingerprint(server.host_key.with_suffix(".pub"))
    try:
        p = subprocess.run(
            [sys.executable, "-m", "gpufleet", "stream", "cfg", "--seconds", "20", *ACCEPT],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ),
            check=False,
        )
    finally:
        stop_daemons([host], state)
    assert p.returncode == EXIT_HOSTKEY, p.stderr
    assert old_fp in p.stderr and new_fp in p.stderr, p.stderr
    assert "forget-key" in p.stderr and "trusting" not in p.stderr, p.stderr
    assert '"kind":"sample"' not in p.stdout
