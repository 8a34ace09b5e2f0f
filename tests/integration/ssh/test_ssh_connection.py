"""SshConnection against a real OpenSSH sshd on 127.0.0.1 (fixtures in conftest.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import paramiko
import pytest
from gpufleet.core.config import secrets
from gpufleet.core.link import hostkeys
from gpufleet.core.link.ssh import SshConnection, SshError

from tests.support.paths import SUPPORT

pytestmark = pytest.mark.timeout(60)


def _keygen_fingerprint(pub: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-l", "-f", str(pub)], capture_output=True, text=True)
    return out.stdout.split()[1]


@pytest.fixture
def conn(sshd, ssh_host_config):
    c = SshConnection.open(ssh_host_config(sshd), on_unknown_key=None)
    yield c
    c.close()


@pytest.fixture
def remote_dir(conn):
    """A fresh directory on the 'remote' (this machine), removed afterwards."""
    d = Path(f"/tmp/gpufleet-test-{uuid.uuid4().hex}")
    yield d
    subprocess.run(["rm", "-rf", str(d)], check=False)


# -- commands -------------------------------------------------------------------------------


def test_run_returns_status_stdout_stderr(conn):
    rc, out, err = conn.run("echo out; echo err >&2; exit 3")
    assert (rc, out, err) == (3, b"out\n", b"err\n")


def test_run_feeds_stdin_and_survives_a_full_stderr_window(conn):
    data = os.urandom(3 << 20)
    # 3 MiB back through stdout, and 3 MiB to stderr first: more than the 2 MiB window.
    rc, out, err = conn.run("head -c 3145728 /dev/zero >&2; cat", stdin=data, timeout=30)
    assert rc == 0
    assert out == data
    assert len(err) == 3 << 20


def test_run_times_out_with_a_clear_error(conn):
    with pytest.raises(SshError) as ei:
        conn.run("sleep 30", timeout=0.5)
    assert ei.value.kind == "timeout"
    assert "did not finish within 0.5 s" in str(ei.value)
    # The connection is still usable afterwards.
    assert conn.run("echo ok")[1] == b"ok\n"


# -- streaming ------------------------------------------------------------------------------


def test_stream_lines_keeps_partial_lines_and_the_tail(conn):
    # Lines split across writes, stderr interleaved, and a last line without a newline.
    cmd = (
        "printf 'one\\ntw'; sleep 0.3; printf 'o\\nthr' >&1; echo warn >&2; sleep 0.3; "
        "printf 'ee\\ntail-without-newline'; exit 4"
    )
    stream = conn.stream_lines(cmd)
    lines = list(stream)
    assert lines == [b"one", b"two", b"three", b"tail-without-newline"]
    assert stream.exit_status == 4
    assert stream.stderr_tail == b"warn\n"


def test_stream_lines_cuts_an_overlong_line_and_goes_on(conn):
    stream = conn.stream_lines("head -c 5000 /dev/zero | tr '\\0' x; echo; echo next", 1000)
    lines = list(stream)
    assert [len(x) for x in lines] == [1001, 4]
    assert lines[1] == b"next"


def test_stream_close_from_another_thread_ends_the_iteration(conn):
    stream = conn.stream_lines("while true; do echo tick; sleep 0.05; done")
    assert next(stream) == b"tick"
    threading.Timer(0.3, stream.close).start()
    rest = list(stream)  # ends (no exception) once closed
    assert all(x == b"tick" for x in rest)
    assert conn.run("echo still-usable")[1] == b"still-usable\n"


def test_stream_stdin_closed_by_default_or_kept_open(conn):
    assert list(conn.stream_lines("echo start; cat; echo after-eof")) == [b"start", b"after-eof"]
    stream = conn.stream_lines("echo start; cat; echo after-eof", close_stdin=False)
    assert next(stream) == b"start"
    # `cat` still waits on its stdin: nothing more comes until the channel closes.
    threading.Timer(0.3, stream.close).start()
    assert list(stream) == []


# -- upload ---------------------------------------------------------------------------------


def _assert_uploaded(path: Path, data: bytes, mode: int) -> None:
    assert path.read_bytes() == data
    assert path.stat().st_mode & 0o777 == mode
    assert not [p for p in path.parent.iterdir() if ".part-" in p.name]


def test_upload_over_sftp_is_atomic_and_replaces(conn, remote_dir):
    target = remote_dir / "sub" / "sampler.pyz"
    conn.upload(b"first", str(target), 0o755)
    _assert_uploaded(target, b"first", 0o755)
    assert (remote_dir / "sub").stat().st_mode & 0o777 == 0o700
    conn.upload(b"second" * 1000, str(target), 0o644)
    _assert_uploaded(target, b"second" * 1000, 0o644)


def test_upload_expands_tilde_remotely(conn):
    top = f".cache/gpufleet-test-{uuid.uuid4().hex}"
    try:
        conn.upload(b"x", f"~/{top}/f.bin", 0o600)
        home = conn.remote_home()
        assert home.startswith("/") and home == conn.expand_path("~")
        assert Path(home, top, "f.bin").read_bytes() == b"x"  # the "remote" is this machine
    finally:
        conn.run(f"rm -rf ~/{top}")


def test_upload_without_sftp_falls_back_to_exec(sshd_factory, ssh_host_config, remote_dir):
    server = sshd_factory(sftp=False)
    with SshConnection.open(ssh_host_config(server), on_unknown_key=None) as c:
        # Proof that the server really has no SFTP subsystem.
        with pytest.raises(paramiko.SSHException):
            paramiko.SFTPClient.from_transport(c.transport)
        target = remote_dir / "a b" / "sampler.pyz"  # a space: quoting matters
        c.upload(b"\x00binary\xff" * 100, str(target), 0o750)
        _assert_uploaded(target, b"\x00binary\xff" * 100, 0o750)
        c.upload(b"again", str(target), 0o750)
        _assert_uploaded(target, b"again", 0o750)


# -- host keys ------------------------------------------------------------------------------


def test_unknown_key_refused_without_consent(sshd, ssh_host_config):
    host = ssh_host_config(sshd, known=False)
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=None)
    assert ei.value.kind == "hostkey_unknown"
    assert not ei.value.retryable
    fp = _keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    assert fp in str(ei.value)

    asked: list[tuple[str, str, str]] = []

    def no(label: str, key_type: str, fingerprint: str) -> bool:
        asked.append((label, key_type, fingerprint))
        return False

    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=no)
    assert ei.value.kind == "hostkey_unknown"
    assert asked == [(host.label, "ssh-ed25519", fp)]
    assert hostkeys.KnownHosts().keys_for(sshd.key_name) == []


def test_unknown_key_accepted_with_consent_is_remembered(sshd, ssh_host_config):
    host = ssh_host_config(sshd, known=False)
    asked: list[str] = []

    def yes(label: str, key_type: str, fingerprint: str) -> bool:
        asked.append(fingerprint)
        return True

    with SshConnection.open(host, on_unknown_key=yes) as c:
        assert c.run("echo hi")[1] == b"hi\n"
    assert len(asked) == 1
    app_file = hostkeys.app_known_hosts()
    assert app_file.stat().st_mode & 0o777 == 0o600
    assert sshd.key_name in app_file.read_text()
    # Known now: no second question.
    with SshConnection.open(host, on_unknown_key=yes) as c:
        assert c.run("true")[0] == 0
    assert len(asked) == 1


def test_changed_key_is_refused_always_naming_both_fingerprints(sshd, ssh_host_config):
    host = ssh_host_config(sshd)
    old_fp = _keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    sshd.regenerate_host_key()
    new_fp = _keygen_fingerprint(sshd.host_key.with_suffix(".pub"))
    asked: list[str] = []
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=lambda *a: asked.append(a[2]) or True)
    e = ei.value
    assert e.kind == "hostkey_changed" and not e.retryable
    assert old_fp in str(e) and new_fp in str(e)
    assert e.expected_fingerprints == (old_fp,) and e.presented_fingerprint == new_fp
    assert asked == []  # never offered for acceptance
    # After forgetting the old key (a reinstalled instance), the new one can be accepted.
    assert hostkeys.KnownHosts().forget(sshd.key_name) == 1
    with SshConnection.open(host, on_unknown_key=lambda *a: True) as c:
        assert c.run("true")[0] == 0


def test_system_known_hosts_with_markers_is_tolerated(sshd, ssh_host_config, isolated_ssh_home):
    host = ssh_host_config(sshd, known=False)
    key = sshd.host_public_key()
    (isolated_ssh_home / ".ssh" / "known_hosts").write_text(
        "@cert-authority *.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBogus\n"
        "garbage line\n"
        f"{sshd.key_name} {key.get_name()} {key.get_base64()}\n"
    )
    with SshConnection.open(host, on_unknown_key=None) as c:
        assert c.run("true")[0] == 0


# -- authentication and secrets -------------------------------------------------------------


def test_wrong_key_fails_auth_not_retryable(sshd, ssh_host_config, tmp_path):
    from tests.support.sshd import keygen

    other = keygen(tmp_path / "unauthorised")
    with pytest.raises(SshError) as ei:
        SshConnection.open(ssh_host_config(sshd, key_path=str(other)), on_unknown_key=None)
    assert ei.value.kind == "auth" and not ei.value.retryable
    assert "rejected" in str(ei.value)


def test_encrypted_key_without_passphrase_says_what_to_do(
    sshd, ssh_host_config, encrypted_key, secret_service
):
    key = encrypted_key("correct horse battery")
    with pytest.raises(SshError) as ei:
        SshConnection.open(
            ssh_host_config(sshd, name="enc", key_path=str(key)), on_unknown_key=None
        )
    assert ei.value.kind == "auth"
    assert "set-secret enc --kind key-passphrase" in str(ei.value)


def test_passphrase_from_keyring_connects_and_never_leaks(
    sshd, ssh_host_config, encrypted_key, secret_service, caplog
):
    from gpufleet.core.config import configfile as config

    caplog.set_level(logging.DEBUG)
    passphrase = f"pp-{uuid.uuid4().hex}"
    key = encrypted_key(passphrase)
    host = ssh_host_config(sshd, name=f"enc-{uuid.uuid4().hex[:6]}", key_path=str(key))
    secrets.set_secret(host.name, "key-passphrase", passphrase)
    try:
        config.save_config(config.AppConfig(hosts=[host]))
        with SshConnection.open(host, on_unknown_key=None) as c:
            assert c.run("echo in")[1] == b"in\n"
        # A wrong stored passphrase: a clear error that does not quote it either.
        wrong = f"wrong-{uuid.uuid4().hex}"
        secrets.set_secret(host.name, "key-passphrase", wrong)
        with pytest.raises(SshError) as ei:
            SshConnection.open(host, on_unknown_key=None)
        assert "does not decrypt" in str(ei.value)
        texts = [
            str(ei.value),
            repr(ei.value),
            caplog.text,
            config.config_file_path().read_text(),
        ]
        for text in texts:
            assert passphrase not in text
            assert wrong not in text
    finally:
        secrets.delete_secret(host.name, "key-passphrase")


def test_ssh_agent(sshd, ssh_host_config, tmp_path, monkeypatch):
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(sshd.client_key)], env=env, check=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        host = ssh_host_config(sshd, key_path=None, auth="agent")
        with SshConnection.open(host, on_unknown_key=None) as c:
            assert c.run("echo agent")[1] == b"agent\n"
        monkeypatch.delenv("SSH_AUTH_SOCK")
        with pytest.raises(SshError, match="no ssh-agent"):
            SshConnection.open(host, on_unknown_key=None)
    finally:
        agent.terminate()
        agent.wait(5)


def test_password_from_keyring(
    sshd_factory, ssh_host_config, password_user, secret_service, caplog
):
    caplog.set_level(logging.DEBUG)
    user, password = password_user
    server = sshd_factory(password_auth=True, user=user)
    host = ssh_host_config(
        server, name=f"pw-{uuid.uuid4().hex[:6]}", key_path=None, auth="password"
    )
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=None)
    assert ei.value.kind == "auth" and "set-secret" in str(ei.value)
    secrets.set_secret(host.name, "password", password)
    try:
        with SshConnection.open(host, on_unknown_key=None) as c:
            assert c.run("id -un")[1] == f"{user}\n".encode()
        assert password not in caplog.text
    finally:
        secrets.delete_secret(host.name, "password")


# -- jump hosts -----------------------------------------------------------------------------


def test_proxyjump_through_two_hops(sshd, sshd_factory, ssh_host_config):
    jump1 = sshd_factory(client_key=sshd.client_key)
    jump2 = sshd_factory(client_key=sshd.client_key)
    for j in (jump1, jump2):
        ssh_host_config(j)  # their host keys are known
    spec = f"{jump1.user}@127.0.0.1:{jump1.port},127.0.0.1:{jump2.port}"
    host = ssh_host_config(sshd, jump=spec)
    with SshConnection.open(host, on_unknown_key=None) as c:
        rc, out, _ = c.run("echo $SSH_CONNECTION")
        assert rc == 0
        client_port = int(out.split()[1])
        # The target's client is a jump host's sshd, not this process.
        owner = subprocess.run(
            ["ss", "-tnpH", "state", "established", f"( sport = :{client_port} )"],
            capture_output=True,
            text=True,
        ).stdout
        assert '"sshd"' in owner, owner
        assert f"pid={os.getpid()}," not in owner
    for j in (jump1, jump2):
        assert "Accepted publickey" in j.log()


def test_proxyjump_unknown_jump_key_is_asked_with_its_own_label(
    sshd, sshd_factory, ssh_host_config
):
    jump = sshd_factory(client_key=sshd.client_key)
    host = ssh_host_config(sshd, jump=f"127.0.0.1:{jump.port}")
    asked: list[str] = []
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=lambda label, t, fp: asked.append(label) or False)
    assert ei.value.kind == "hostkey_unknown"
    assert asked and asked[0].startswith("jump host 1 of testhost")


# -- dead links and silent hosts ------------------------------------------------------------


def test_watchdog_detects_a_blackholed_link(sshd, ssh_host_config, tcp_proxy):
    proxy = tcp_proxy(sshd)
    host = ssh_host_config(sshd, port=proxy.port, known_as_port=proxy.port)
    c = SshConnection.open(host, on_unknown_key=None, keepalive_interval=0.3, keepalive_timeout=1.5)
    try:
        stream = c.stream_lines("while true; do echo tick; sleep 0.05; done")
        assert next(stream) == b"tick"
        proxy.cut()
        t0 = time.monotonic()
        with pytest.raises(SshError) as ei:
            for _ in stream:
                pass
        assert ei.value.kind == "channel" and ei.value.retryable
        assert "keepalive" in str(ei.value)
        assert time.monotonic() - t0 < 30  # not TCP's minutes-long give-up
        with pytest.raises(SshError) as ei2:
            c.run("true")
        assert ei2.value.retryable
    finally:
        c.close()
        proxy.restore()


def test_dropped_connection_is_a_retryable_channel_error(sshd, ssh_host_config, tcp_proxy):
    proxy = tcp_proxy(sshd)
    host = ssh_host_config(sshd, port=proxy.port, known_as_port=proxy.port)
    with SshConnection.open(host, on_unknown_key=None) as c:
        stream = c.stream_lines("while true; do echo tick; sleep 0.05; done")
        assert next(stream) == b"tick"
        proxy.drop()
        with pytest.raises(SshError) as ei:
            for _ in stream:
                pass
        assert ei.value.kind == "channel" and ei.value.retryable


def test_a_host_that_never_answers_times_out_clearly(silent_server, sshd):
    host = sshd.host_config("silent")
    host = type(host)(name="silent", host=silent_server[0], port=silent_server[1], user="x")
    t0 = time.monotonic()
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=None, connect_timeout=1.0)
    assert ei.value.kind == "timeout" and ei.value.retryable
    assert "no answer" in str(ei.value) and "silent" in str(ei.value)
    assert time.monotonic() - t0 < 20


def test_connection_refused_is_retryable(sshd):
    from tests.support.sshd import free_port

    host = sshd.host_config("gone", port=free_port())
    with pytest.raises(SshError) as ei:
        SshConnection.open(host, on_unknown_key=None, connect_timeout=2.0)
    assert ei.value.kind == "refused" and ei.value.retryable
    assert "refused" in str(ei.value)


def test_close_ends_everything(sshd, ssh_host_config):
    c = SshConnection.open(ssh_host_config(sshd), on_unknown_key=None)
    stream = c.stream_lines("sleep 30")
    c.close()
    assert not c.is_active()
    assert list(stream) == []
    with pytest.raises(SshError):
        c.run("true")


# -- ProxyCommand ---------------------------------------------------------------------------


def _proxycommand_host(sshd, ssh_host_config, isolated_ssh_home):
    relay = SUPPORT / "stdio_relay.py"
    (isolated_ssh_home / ".ssh" / "config").write_text(
        f"Host viaproxy\n  HostName 127.0.0.1\n  Port {sshd.port}\n"
        f"  ProxyCommand {sys.executable} {relay} %h %p\n"
    )
    return ssh_host_config(sshd, host="viaproxy", port=22)


def test_proxycommand_from_ssh_config_is_used_and_reaped(sshd, ssh_host_config, isolated_ssh_home):
    host = _proxycommand_host(sshd, ssh_host_config, isolated_ssh_home)
    c = SshConnection.open(host, on_unknown_key=None)
    proxy = c.first_transport.sock
    assert isinstance(proxy, paramiko.ProxyCommand)
    assert c.run("echo via")[1] == b"via\n"
    c.close()
    assert proxy.process.poll() is not None  # reaped, not a zombie left behind


def test_a_dying_proxycommand_is_noticed(sshd, ssh_host_config, isolated_ssh_home):
    host = _proxycommand_host(sshd, ssh_host_config, isolated_ssh_home)
    with SshConnection.open(host, on_unknown_key=None, keepalive_interval=5.0) as c:
        stream = c.stream_lines("while true; do echo tick; sleep 0.05; done")
        assert next(stream) == b"tick"
        c.first_transport.sock.process.kill()
        with pytest.raises(SshError) as ei:
            for _ in stream:
                pass
        assert ei.value.retryable
