"""Fixtures for tests against a real OpenSSH sshd on 127.0.0.1.

Names (for the SSH, session and fleet tests):

- ``sshd`` -> ``Sshd``: one running sshd (key auth for the current user, SFTP on).
  ``.port``, ``.user``, ``.client_key``, ``.host_config(name, **overrides) -> HostConfig``,
  ``.stop()`` / ``.start()`` (same port, same keys), ``.kill_sessions()``,
  ``.regenerate_host_key()``, ``.log()``.
- ``sshd_factory(**kw) -> Sshd``: as many more as needed, each on its own port and workdir;
  keywords of ``sshd.make_sshd``: ``sftp=False`` (no SFTP subsystem), ``password_auth=True``,
  ``user="name"``, ``client_key=Path``, ``extra_config=("SetEnv X=1", ...)``,
  ``start=False``. All are stopped at teardown.
- ``ssh_host_config(server, name="testhost", known=True, **overrides) -> HostConfig``: a
  HostConfig for ``server``; with ``known=True`` the server's host key is appended to the
  app-owned known_hosts (``hostkeys.app_known_hosts()``, in the test's own config dir), so
  ``SshConnection.open(host, on_unknown_key=None)`` connects without a question.
- ``tcp_proxy(host_port_or_sshd) -> TcpProxy``: a proxy on 127.0.0.1:<proxy.port> in front of
  a server; ``.cut()`` (blackhole, ``refuse_new=True`` to close new connections),
  ``.restore()``, ``.drop()`` (RST every connection). Closed at teardown. Point a HostConfig
  at it with ``ssh_host_config(server, port=proxy.port, known=...)`` (the known_hosts entry
  must then be for ``[127.0.0.1]:<proxy.port>``: use ``known_as_port=proxy.port``).
- ``encrypted_key(passphrase) -> Path``: a new passphrase-protected key, authorised on
  ``sshd``.
- ``password_user`` -> (user name, password): an unprivileged local user with a password
  (created with useradd; skipped unless root), for password-auth tests on
  ``sshd_factory(password_auth=True, user=name)``.
- ``silent_server`` -> (host, port): accepts TCP connections and never sends a banner.
- ``secret_service`` (from tests/conftest.py): skips unless a real Secret Service
  (tools/run-tests) is reachable.

Every test here gets HOME pointed at an empty temporary directory (no ~/.ssh/config, no
default keys, no ~/.ssh/known_hosts of the machine) and no SSH_AUTH_SOCK.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import hostkeys

from tests.support.sshd import Sshd, have_sshd, keygen, make_sshd
from tests.support.tcpproxy import TcpProxy


@pytest.fixture(autouse=True)
def isolated_ssh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def sshd_factory(tmp_path: Path) -> Iterator[Callable[..., Sshd]]:
    why = have_sshd()
    if why:
        pytest.skip(why)
    servers: list[Sshd] = []

    def factory(**kw: Any) -> Sshd:
        server = make_sshd(tmp_path / f"sshd{len(servers)}", **kw)
        servers.append(server)
        return server

    yield factory
    for server in servers:
        server.kill_sessions()
        server.stop()


@pytest.fixture
def sshd(sshd_factory: Callable[..., Sshd]) -> Sshd:
    return sshd_factory()


@pytest.fixture
def ssh_host_config() -> Callable[..., HostConfig]:
    def make(
        server: Sshd,
        name: str = "testhost",
        known: bool = True,
        known_as_port: int | None = None,
        **overrides: Any,
    ) -> HostConfig:
        if known:
            port = known_as_port if known_as_port is not None else server.port
            hostkeys.KnownHosts().add(
                hostkeys.host_key_name(server.host, port), server.host_public_key()
            )
        return server.host_config(name, **overrides)

    return make


@pytest.fixture
def tcp_proxy() -> Iterator[Callable[..., TcpProxy]]:
    proxies: list[TcpProxy] = []

    def make(target: Sshd | tuple[str, int]) -> TcpProxy:
        host, port = (target.host, target.port) if isinstance(target, Sshd) else target
        proxy = TcpProxy(host, port)
        proxies.append(proxy)
        return proxy

    yield make
    for proxy in proxies:
        proxy.close()


@pytest.fixture
def encrypted_key(sshd: Sshd, tmp_path: Path) -> Callable[[str], Path]:
    def make(passphrase: str) -> Path:
        path = keygen(tmp_path / f"enc_key_{len(list(tmp_path.glob('enc_key_*')))}", passphrase)
        sshd.authorize(path.with_name(path.name + ".pub"))
        return path

    return make


@pytest.fixture(scope="session")
def password_user() -> Iterator[tuple[str, str]]:
    if os.geteuid() != 0:
        pytest.skip("password login needs a test user made with useradd: run as root")
    name = f"gpft{os.getpid() % 100000}"
    password = "pw-" + os.urandom(9).hex()
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/sh", name],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            ["chpasswd"], input=f"{name}:{password}\n".encode(), check=True, capture_output=True
        )
        yield name, password
    finally:
        subprocess.run(["pkill", "-KILL", "-u", name], check=False, capture_output=True)
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


@pytest.fixture
def silent_server() -> Iterator[tuple[str, int]]:
    """Accepts connections (the kernel does, from the backlog) and never says a word."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    try:
        yield "127.0.0.1", s.getsockname()[1]
    finally:
        s.close()
