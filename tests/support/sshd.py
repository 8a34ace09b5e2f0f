"""A real OpenSSH sshd for tests: 127.0.0.1, a free high port, temporary host keys, a
temporary authorized_keys, an explicit sshd_config, run in the foreground (``-D -e``).

Used through the fixtures in ``conftest.py``; see there for the names.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import hostkeys

SSHD = "/usr/sbin/sshd"
SFTP_SERVER_CANDIDATES = ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path, passphrase: str = "", kind: str = "ed25519") -> Path:
    """A new key pair at ``path`` (and ``path.pub``) made by ssh-keygen."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", "gpufleet-test", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return path


def wait_for_banner(host: str, port: int, timeout: float = 10.0) -> None:
    """Until the server at host:port sends its SSH banner (it is really serving)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return
        except OSError as e:
            last = e
        time.sleep(0.02)
    raise TimeoutError(f"no SSH banner on {host}:{port} within {timeout} s ({last})")


@dataclass
class Sshd:
    """One running sshd. ``client_key`` is authorised for ``user``."""

    workdir: Path
    port: int
    user: str
    client_key: Path
    host_key: Path
    sftp: bool = True
    password_auth: bool = False
    extra_config: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log_path = self.workdir / "sshd.log"

    @property
    def config_path(self) -> Path:
        return self.workdir / "sshd_config"

    @property
    def authorized_keys(self) -> Path:
        return self.workdir / "authorized_keys"

    def write_config(self) -> None:
        sftp_line = ""
        if self.sftp:
            server = next((p for p in SFTP_SERVER_CANDIDATES if os.path.exists(p)), None)
            sftp_line = f"Subsystem sftp {server}" if server else "Subsystem sftp internal-sftp"
        lines = [
            f"Port {self.port}",
            f"ListenAddress {self.host}",
            f"HostKey {self.host_key}",
            f"PidFile {self.workdir / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "PermitRootLogin yes",
            "StrictModes no",
            "UsePAM no",
            "PubkeyAuthentication yes",
            f"PasswordAuthentication {'yes' if self.password_auth else 'no'}",
            "KbdInteractiveAuthentication no",
            "PermitEmptyPasswords no",
            # ProxyJump through this server needs direct-tcpip.
            "AllowTcpForwarding yes",
            "MaxStartups 200",
            "MaxSessions 30",
            "LoginGraceTime 60",
            "LogLevel VERBOSE",
            "PrintMotd no",
            "UseDNS no",
            sftp_line,
            *self.extra_config,
        ]
        self.config_path.write_text("\n".join(line for line in lines if line) + "\n")

    def start(self, timeout: float = 10.0) -> None:
        """Start (or restart, same port and keys) and wait until it serves."""
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # privilege separation dir
        self.write_config()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its life
        try:
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            log.close()
        try:
            wait_for_banner(self.host, self.port, timeout)
        except TimeoutError:
            self.stop()
            raise RuntimeError(f"sshd did not start; its log:\n{self.log()}") from None

    def stop(self) -> None:
        """Stop the listener. Established sessions (their own sshd processes) live on:
        cut traffic through a TcpProxy to simulate an outage."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def kill_sessions(self) -> None:
        """End every session process this sshd started (children of its listener)."""
        if self.proc is None:
            return
        subprocess.run(["pkill", "-TERM", "-P", str(self.proc.pid)], check=False)

    def regenerate_host_key(self) -> None:
        """A new host key (a reinstalled instance); restarts sshd if it was running."""
        running = self.proc is not None
        self.stop()
        for p in (self.host_key, self.host_key.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        keygen(self.host_key)
        if running:
            self.start()

    def switch_host_key_type(self, kind: str) -> None:
        """Serve only a new host key of another type (``ecdsa``, ``rsa``): a server that
        used to show one key type and now shows another; restarts sshd if it was running."""
        running = self.proc is not None
        self.stop()
        path = self.workdir / f"ssh_host_{kind}_key"
        for p in (path, path.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        self.host_key = keygen(path, kind=kind)
        if running:
            self.start()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def host_public_key(self) -> paramiko.PKey:
        return paramiko.PKey.from_path(self.host_key)

    @property
    def key_name(self) -> str:
        return hostkeys.host_key_name(self.host, self.port)

    def authorize(self, pubkey_path: Path) -> None:
        with open(self.authorized_keys, "a") as f:
            f.write(pubkey_path.read_text().strip() + "\n")

    def host_config(self, name: str = "testhost", **overrides: object) -> HostConfig:
        """A HostConfig that reaches this sshd with ``client_key`` (override as needed)."""
        fields: dict[str, object] = {
            "name": name,
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "key_path": str(self.client_key),
            "auth": "key",
        }
        fields.update(overrides)
        return HostConfig(**fields)  # type: ignore[arg-type]

    def write_known_hosts(self, path: Path) -> Path:
        """Append this server's host key to a known_hosts file (created 0600)."""
        hostkeys.KnownHosts(app_file=path, system_file=path.parent / "none").add(
            self.key_name, self.host_public_key()
        )
        return path


def make_sshd(
    workdir: Path,
    *,
    user: str | None = None,
    client_key: Path | None = None,
    sftp: bool = True,
    password_auth: bool = False,
    extra_config: tuple[str, ...] = (),
    start: bool = True,
) -> Sshd:
    """Create (and start) an sshd in ``workdir`` (which it owns)."""
    workdir.mkdir(parents=True, exist_ok=True)
    host_key = keygen(workdir / "ssh_host_ed25519_key")
    if client_key is None:
        client_key = keygen(workdir / "client_key")
    server = Sshd(
        workdir=workdir,
        port=free_port(),
        user=user or pwd.getpwuid(os.getuid()).pw_name,
        client_key=client_key,
        host_key=host_key,
        sftp=sftp,
        password_auth=password_auth,
        extra_config=extra_config,
    )
    server.authorized_keys.touch(mode=0o644)
    server.authorize(client_key.with_name(client_key.name + ".pub"))
    if start:
        server.start()
    return server


def have_sshd() -> str | None:
    """None when sshd and ssh-keygen are usable here, else why not."""
    if not os.path.exists(SSHD):
        return f"{SSHD} not installed (apt-get install openssh-server)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen not installed"
    return None
