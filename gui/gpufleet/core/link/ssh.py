"""One SSH connection to one host, with what paramiko leaves to the caller done here.

What paramiko leaves to the caller, this module does:

- resolves the host through ``~/.ssh/config`` (with ``Include``) and reaches it through any
  number of ProxyJump hops, each a ``direct-tcpip`` channel of the previous hop;
- checks host keys against the app's known_hosts and ``~/.ssh/known_hosts``: a changed key is
  refused (naming both fingerprints), an unknown key goes to a callback, asked with the
  connection CLOSED (so a slow human never hits sshd's LoginGraceTime), then reconnects;
- authenticates with key files (``PKey.from_path``; passphrase from the keyring), ssh-agent,
  then a password from the keyring; never ``SSHClient`` (no blind key scanning, no
  ``SSHClient.exec_command`` deadlock #2685);
- runs commands on ``open_session`` channels, reading stdout and stderr together, non-blocking,
  so neither a full stderr window nor a read timeout loses data or a partial line;
- watches the link with ``keepalive@openssh.com`` requests that expect a reply and closes the
  transport when none comes (paramiko's own keepalive never notices a dead peer);
- uploads atomically (temp name, chmod, ``posix_rename``) over SFTP, or over a plain exec
  channel where the server has no SFTP subsystem;
- turns every failure into ``SshError`` with a ``kind`` and ``retryable``.

An ``SshConnection`` may be used from several threads (one channel per call), but each
``LineStream`` belongs to the thread that iterates it.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import logging
import os
import posixpath
import select
import shlex
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import paramiko
from gpufleet_sampler import protocol

from gpufleet.core.config import secrets
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import hostkeys
from gpufleet.core.link import ssh_config as sshconfig
from gpufleet.core.model.errors import ErrorKind, GpufleetError

log = logging.getLogger(__name__)

# "refused": nothing listens on the port; retried by long-running sessions, while one-shot
# commands (kill) give up at once rather than wait for it to change.
_RETRYABLE_KINDS = {"connect", "refused", "timeout", "channel"}
_DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")
_KEEPALIVE = "keepalive@openssh.com"
_POLL_S = 0.5
_STDERR_KEEP = 64 * 1024


class HostKeyDecision(Protocol):
    """Asked about an unknown host key: (host label, key type, "SHA256:…") -> accept?"""

    def __call__(self, host_label: str, key_type: str, fingerprint: str, /) -> bool: ...


class SshError(GpufleetError):
    """An SSH failure, by kind; ``str()`` is one clear line without secrets.

    ``retryable`` says whether trying again later can help (a link that dropped, a host not
    up yet) or the user must act (authentication, host key, configuration).
    """

    def __init__(
        self,
        message: str,
        kind: ErrorKind,
        retryable: bool | None = None,
        *,
        expected_fingerprints: tuple[str, ...] = (),
        presented_fingerprint: str | None = None,
    ) -> None:
        again = kind in _RETRYABLE_KINDS if retryable is None else retryable
        super().__init__(message, kind, again)
        self.expected_fingerprints = expected_fingerprints
        self.presented_fingerprint = presented_fingerprint


def classify(e: BaseException, where: str) -> SshError:
    """Map a paramiko/socket exception to an SshError."""
    if isinstance(e, SshError):
        return e
    text = str(e) or type(e).__name__
    if isinstance(e, paramiko.BadHostKeyException):
        return SshError(f"{where}: the host key changed", "hostkey_changed", False)
    if isinstance(e, paramiko.AuthenticationException):
        return SshError(f"{where}: authentication failed ({text})", "auth", False)
    if isinstance(e, paramiko.ssh_exception.IncompatiblePeer):
        return SshError(f"{where}: no common algorithms with the server ({text})", "connect", False)
    if isinstance(e, paramiko.ssh_exception.ConfigParseError):
        return SshError(f"{where}: {text}", "config", False)
    if isinstance(e, paramiko.ChannelException):
        return SshError(f"{where}: the server refused a channel ({text})", "channel", True)
    if isinstance(e, socket.gaierror):
        return SshError(f"{where}: cannot resolve the host name ({text})", "connect", True)
    if isinstance(e, TimeoutError):
        return SshError(f"{where}: timed out", "timeout", True)
    if isinstance(e, ConnectionRefusedError):
        return SshError(f"{where}: connection refused (is sshd running?)", "refused", True)
    if isinstance(e, paramiko.SSHException):
        low = text.lower()
        if "banner" in low or "timeout" in low or "timed out" in low:
            return SshError(f"{where}: no answer from the SSH server ({text})", "timeout", True)
        if "not active" in low or "eof" in low or "closed" in low:
            return SshError(f"{where}: connection lost ({text})", "channel", True)
        return SshError(f"{where}: {text}", "connect", True)
    if isinstance(e, EOFError):
        return SshError(f"{where}: the server closed the connection", "connect", True)
    if isinstance(e, OSError):
        return SshError(f"{where}: {e.strerror or text}", "connect", True)
    return SshError(f"{where}: {type(e).__name__}: {text}", "connect", False)


@dataclass(frozen=True)
class Hop:
    """One machine on the way (a jump host or the target), fully resolved."""

    label: str  # for messages and the host-key question
    secret_name: str  # keyring entries are looked up under this host name
    host: str
    port: int
    user: str
    key_paths: tuple[str, ...]
    auth: str  # auto | agent | key | password
    proxy_command: str | None = None  # only for the first hop (ssh config ProxyCommand)

    @property
    def key_name(self) -> str:
        return hostkeys.host_key_name(self.host, self.port)


def _default_keys() -> tuple[str, ...]:
    home = Path.home() / ".ssh"
    return tuple(str(home / k) for k in _DEFAULT_KEYS if (home / k).exists())


def parse_jump_spec(spec: str) -> list[tuple[str | None, str, int | None]]:
    """``[user@]host[:port],…`` (or ``ssh://user@host:port``) → [(user, host, port)]."""
    hops: list[tuple[str | None, str, int | None]] = []
    for raw in spec.split(","):
        part = raw.strip()
        if part.startswith("ssh://"):
            part = part[len("ssh://") :]
        if not part:
            raise SshError(f"bad ProxyJump {spec!r}: an empty hop", "config", False)
        user: str | None = None
        if "@" in part:
            user, part = part.rsplit("@", 1)
        port: int | None = None
        if part.startswith("["):  # [v6addr]:port
            end = part.find("]")
            host, rest = part[1:end], part[end + 1 :]
            if rest.startswith(":"):
                port = _port(rest[1:], spec)
        elif part.count(":") == 1:
            host, p = part.split(":")
            port = _port(p, spec)
        else:
            host = part
        if not host:
            raise SshError(f"bad ProxyJump {spec!r}: a hop without a host", "config", False)
        hops.append((user or None, host, port))
    return hops


def _port(text: str, spec: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise SshError(f"bad port {text!r} in {spec!r}", "config", False)
    return port


def resolve_hops(host: HostConfig, ssh_config: Path | None = None) -> list[Hop]:
    """The hops to reach ``host``: jump hosts first, the target last."""
    try:
        cfg = sshconfig.load(ssh_config)
        target = sshconfig.lookup(host.host, cfg=cfg)
    except sshconfig.SshConfigError as e:
        raise SshError(str(e), "config", False) from None
    local_user = getpass.getuser()
    # An explicit port wins; 22 is the dataclass default, so ssh config may override it.
    port = host.port if host.port != 22 else (target.port or 22)
    user = host.user or target.user or local_user
    if host.key_path:
        keys: tuple[str, ...] = (os.path.expanduser(host.key_path),)
    else:
        keys = target.identity_files or _default_keys()
    hops: list[Hop] = []
    jump = host.jump or target.proxy_jump
    if jump:
        for i, (juser, jhost, jport) in enumerate(parse_jump_spec(jump)):
            try:
                jt = sshconfig.lookup(jhost, cfg=cfg)
            except sshconfig.SshConfigError as e:
                raise SshError(str(e), "config", False) from None
            # OpenSSH offers the default identities to jump hosts; the target's key is a
            # good guess as well (rentals often use one key for both).
            jkeys = jt.identity_files or tuple(dict.fromkeys((*keys, *_default_keys())))
            hop_user = juser or jt.user or local_user
            hop_port = jport or jt.port or 22
            hops.append(
                Hop(
                    label=f"jump host {i + 1} of {host.name} ({hop_user}@{jt.hostname}:{hop_port})",
                    secret_name=jhost,
                    host=jt.hostname,
                    port=hop_port,
                    user=hop_user,
                    key_paths=jkeys,
                    auth="auto",
                    proxy_command=jt.proxy_command if i == 0 else None,
                )
            )
    hops.append(
        Hop(
            label=host.label,
            secret_name=host.name,
            host=target.hostname,
            port=port,
            user=user,
            key_paths=keys,
            auth=host.auth,
            # As in OpenSSH, ProxyJump and ProxyCommand exclude each other (the jump wins).
            proxy_command=None if hops else target.proxy_command,
        )
    )
    return hops


class SshConnection:
    """An authenticated transport to one host (through its jump hosts) plus a watchdog."""

    def __init__(
        self,
        host: HostConfig,
        transport: paramiko.Transport,
        jumps: list[paramiko.Transport],
        *,
        keepalive_interval: float,
        keepalive_timeout: float,
    ) -> None:
        self.host = host
        self.label = host.label
        self._transport = transport
        self._jumps = jumps
        self._lock = threading.Lock()
        self._channels: set[paramiko.Channel] = set()
        self._closed = False
        self._lost_reason: str | None = None
        self._home: str | None = None
        self._watchdog = _Watchdog(self, keepalive_interval, keepalive_timeout)
        if keepalive_interval > 0:
            self._watchdog.start()

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        host: HostConfig,
        *,
        on_unknown_key: Callable[[str, str, str], bool] | None,
        known_hosts: Path | None = None,
        connect_timeout: float = 10.0,
        auth_timeout: float = 30.0,
        keepalive_interval: float = 15.0,
        keepalive_timeout: float = 10.0,
        ssh_config: Path | None = None,
    ) -> SshConnection:
        """Connect, verify the host key, authenticate; raises SshError.

        ``known_hosts`` is the app-owned file (default: under the config dir); keys accepted
        through ``on_unknown_key`` are appended there. ``keepalive_interval`` 0 disables the
        watchdog.
        """
        known = hostkeys.KnownHosts(app_file=known_hosts)
        hops = resolve_hops(host, ssh_config)
        transports: list[paramiko.Transport] = []
        try:
            for hop in hops:
                prev = transports[-1] if transports else None
                t = _connect_hop(hop, prev, known, on_unknown_key, connect_timeout, auth_timeout)
                transports.append(t)
        except BaseException:
            for t in reversed(transports):
                _close_transport(t)
            raise
        return cls(
            host,
            transports[-1],
            transports[:-1],
            keepalive_interval=keepalive_interval,
            keepalive_timeout=keepalive_timeout,
        )

    # -- state ---------------------------------------------------------------------------

    @property
    def transport(self) -> paramiko.Transport:
        return self._transport

    @property
    def first_transport(self) -> paramiko.Transport:
        """The transport on the laptop's own socket (the first jump host, or the target)."""
        return self._jumps[0] if self._jumps else self._transport

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    def is_active(self) -> bool:
        return not self._closed and self._transport.is_active()

    def _lost_error(self) -> SshError:
        why = self._lost_reason
        if why is None:
            exc = self._transport.get_exception()
            why = f"{type(exc).__name__}" if exc is not None else "the transport closed"
        return SshError(f"{self.label}: connection lost ({why})", "channel", True)

    def _mark_lost(self, reason: str) -> None:
        """Called by the watchdog: the peer stopped answering; kill the transport so that
        blocked reads return at once instead of waiting for TCP to give up (minutes)."""
        if self._lost_reason is None:
            self._lost_reason = reason
        log.warning("%s: %s; closing the connection", self.label, reason)
        _close_transport(self._transport)
        for t in reversed(self._jumps):
            _close_transport(t)

    def _open_channel(self) -> paramiko.Channel:
        if self._closed:
            raise SshError(f"{self.label}: the connection is closed", "channel", False)
        if not self._transport.is_active():
            raise self._lost_error()
        try:
            chan = self._transport.open_session(timeout=15.0)
        except Exception as e:
            if not self._transport.is_active():
                raise self._lost_error() from None
            raise classify(e, f"{self.label}: opening a channel") from None
        with self._lock:
            self._channels.add(chan)
        return chan

    def _forget_channel(self, chan: paramiko.Channel) -> None:
        # closing a channel of a dead transport may raise; nothing to do
        with contextlib.suppress(Exception):
            chan.close()
        with self._lock:
            self._channels.discard(chan)

    # -- commands ------------------------------------------------------------------------

    def run(
        self, command: str, stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]:
        """Run ``command`` (a shell string: quote values with shlex.quote) and return
        (exit status, stdout, stderr). Exit status -1: the command ended without one
        (killed by a signal). Raises SshError(kind="timeout") after ``timeout`` seconds and
        SshError(kind="channel") when the link dies."""
        chan = self._open_channel()
        try:
            try:
                chan.exec_command(command)
            except Exception as e:
                if not self._transport.is_active():
                    raise self._lost_error() from None
                raise classify(e, f"{self.label}: running a command") from None
            chan.setblocking(False)
            out = bytearray()
            err = bytearray()
            data = memoryview(stdin) if stdin is not None else None
            sent = 0
            if data is None:
                chan.shutdown_write()
            deadline = time.monotonic() + timeout
            while True:
                if data is not None and chan.send_ready():
                    try:
                        sent += chan.send(bytes(data[sent : sent + 65536]))
                    except TimeoutError:
                        pass
                    except OSError:
                        data = None  # the remote closed its stdin: it stopped reading
                    if data is not None and sent >= len(data):
                        chan.shutdown_write()
                        data = None
                _drain(chan, out, err)
                if chan.closed or (chan.eof_received and chan.exit_status_ready()):
                    _drain(chan, out, err)
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SshError(
                        f"{self.label}: command did not finish within {timeout:g} s",
                        "timeout",
                        True,
                    )
                # select() only reports readability; while input is pending, poll briefly.
                wait = 0.02 if data is not None else min(remaining, _POLL_S)
                select.select([chan], [], [], wait)
            status = chan.exit_status
            if status == -1 and not self._transport.is_active():
                raise self._lost_error()
            return status, bytes(out), bytes(err)
        finally:
            self._forget_channel(chan)

    def stream_lines(
        self, command: str, max_line: int = protocol.MAX_LINE_BYTES, close_stdin: bool = True
    ) -> LineStream:
        """Run ``command`` and iterate over its stdout lines (without the newline).

        A final line without a newline is yielded too; a line longer than ``max_line`` is
        yielded cut at ``max_line + 1`` bytes (the decoder then reports it) and the rest of
        it skipped. Raises SshError(kind="channel", retryable=True) if the link dies (lines
        received before are delivered first). stderr is kept in ``.stderr_tail``; the exit
        status, when the command ends, in ``.exit_status``.

        ``close_stdin=False`` keeps the command's stdin open: it sees EOF only when the
        channel closes (our close(), or the link dying), so a remote command that ends on
        stdin EOF (``attach``) ends with its client.
        """
        chan = self._open_channel()
        try:
            chan.exec_command(command)
        except Exception as e:
            self._forget_channel(chan)
            if not self._transport.is_active():
                raise self._lost_error() from None
            raise classify(e, f"{self.label}: starting a command") from None
        chan.setblocking(False)
        if close_stdin:
            chan.shutdown_write()
        return LineStream(self, chan, max_line)

    # -- files ---------------------------------------------------------------------------

    def remote_home(self) -> str:
        """The remote $HOME (asked once)."""
        if self._home is None:
            rc, out, err = self.run('printf "%s" "$HOME"', timeout=30.0)
            home = out.decode("utf-8", "replace").strip()
            if rc != 0 or not home.startswith("/"):
                raise SshError(
                    f"{self.label}: cannot find the remote home directory "
                    f"(exit {rc}: {err.decode('utf-8', 'replace').strip()[:200]})",
                    "channel",
                    False,
                )
            self._home = home
        return self._home

    def expand_path(self, remote_path: str) -> str:
        """``~`` and ``~/x`` → under the remote home; other paths unchanged."""
        if remote_path == "~":
            return self.remote_home()
        if remote_path.startswith("~/"):
            return posixpath.join(self.remote_home(), remote_path[2:])
        return remote_path

    def upload(self, data: bytes, remote_path: str, mode: int = 0o755) -> None:
        """Write ``data`` to ``remote_path`` atomically (temp name + rename), creating the
        parent directories (0700). SFTP when the server offers it, else an exec channel."""
        path = self.expand_path(remote_path)
        sftp = self._open_sftp()
        if sftp is None:
            log.debug("%s: no SFTP subsystem; uploading over an exec channel", self.label)
            self._upload_exec(data, path, mode)
            return
        try:
            self._upload_sftp(sftp, data, path, mode)
        finally:
            sftp.close()

    def _open_sftp(self) -> paramiko.SFTPClient | None:
        if not self._transport.is_active():
            raise self._lost_error()
        try:
            return paramiko.SFTPClient.from_transport(self._transport)
        except Exception as e:
            if not self._transport.is_active():
                raise self._lost_error() from None
            # The server refused the subsystem (no `Subsystem sftp` line): use exec.
            log.debug("%s: SFTP unavailable (%s)", self.label, type(e).__name__)
            return None

    def _upload_sftp(self, sftp: paramiko.SFTPClient, data: bytes, path: str, mode: int) -> None:
        tmp = f"{path}.part-{uuid.uuid4().hex}"
        try:
            _sftp_makedirs(sftp, posixpath.dirname(path))
            with sftp.open(tmp, "wb") as f:
                f.set_pipelined(True)
                f.write(data)
            sftp.chmod(tmp, mode)
            # Plain rename onto an existing file fails on OpenSSH; posix_rename replaces.
            sftp.posix_rename(tmp, path)
        except Exception as e:
            # the temp file may not exist, or the link is gone
            with contextlib.suppress(Exception):
                sftp.remove(tmp)
            if not self._transport.is_active():
                raise self._lost_error() from None
            raise SshError(
                f"{self.label}: upload to {path} failed ({type(e).__name__}: {e})",
                "channel",
                False,
            ) from None

    def _upload_exec(self, data: bytes, path: str, mode: int) -> None:
        tmp = f"{path}.part-{uuid.uuid4().hex}"
        q = shlex.quote
        cmd = (
            f"umask 077 && mkdir -p {q(posixpath.dirname(path) or '.')} && cat > {q(tmp)} && "
            f"chmod {mode:o} {q(tmp)} && mv -f {q(tmp)} {q(path)}"
        )
        # Generous: the data rides the same channel; 1 MiB/s is a slow link.
        rc, _out, err = self.run(cmd, stdin=data, timeout=60.0 + len(data) / 1e6)
        if rc != 0:
            with contextlib.suppress(SshError):
                self.run(f"rm -f {q(tmp)}", timeout=15.0)
            raise SshError(
                f"{self.label}: upload to {path} failed (exit {rc}: "
                f"{err.decode('utf-8', 'replace').strip()[:200]})",
                "channel",
                False,
            )

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close channels, the transport, then the jump transports (reverse order)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            channels = list(self._channels)
            self._channels.clear()
        self._watchdog.stop()
        for chan in channels:
            # a channel of a dead transport; nothing left to close
            with contextlib.suppress(Exception):
                chan.close()
        _close_transport(self._transport)
        for t in reversed(self._jumps):
            _close_transport(t)
        if self._watchdog.is_alive() and self._watchdog is not threading.current_thread():
            self._watchdog.join(timeout=5.0)

    def __enter__(self) -> SshConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LineStream:
    """Iterator over the stdout lines of one remote command (see ``stream_lines``)."""

    def __init__(self, conn: SshConnection, chan: paramiko.Channel, max_line: int) -> None:
        self._conn = conn
        self._chan = chan
        self._max_line = max_line
        self._buf = bytearray()
        self._err = bytearray()
        self._lines: deque[bytes] = deque()
        self._skipping = False  # inside an over-long line, dropping until its newline
        self._done = False
        self._error: SshError | None = None
        self._closed = False
        self.exit_status: int | None = None

    @property
    def stderr_tail(self) -> bytes:
        """The last 64 KiB of the command's stderr."""
        return bytes(self._err)

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        while not self._lines:
            if self._error is not None:
                raise self._error
            if self._done:
                raise StopIteration
            self._pump()
        return self._lines.popleft()

    def close(self) -> None:
        """Stop reading and close the channel (safe from another thread: the iterating
        thread wakes up and ends)."""
        self._closed = True
        self._conn._forget_channel(self._chan)

    def send(self, data: bytes) -> bool:
        """Write ``data`` to the command's stdin (from any thread: paramiko's channel locks
        its sends); False once the channel is closed or its stdin shut."""
        if self._closed or self._conn.closed:
            return False
        try:
            self._chan.sendall(data)
        except (OSError, EOFError, paramiko.SSHException):
            return False
        return True

    def _split(self) -> None:
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                self._lines.append(bytes(self._buf[: min(nl, self._max_line + 1)]))
            del self._buf[: nl + 1]
        if len(self._buf) > self._max_line:
            if not self._skipping:
                self._lines.append(bytes(self._buf[: self._max_line + 1]))
                self._skipping = True
            self._buf.clear()

    def _pump(self) -> None:
        chan = self._chan
        if self._closed or self._conn.closed:
            # Closed on purpose (this stream or the whole connection): a plain end.
            self._done = True
            return
        got_out = bytearray()
        _drain(chan, got_out, self._err)
        if len(self._err) > _STDERR_KEEP:
            del self._err[: len(self._err) - _STDERR_KEEP]
        if got_out:
            self._buf += got_out
            self._split()
            return
        if chan.closed or (chan.eof_received and chan.exit_status_ready()):
            # Everything before the close is already in the buffers: drain once more.
            _drain(chan, self._buf, self._err)
            self._split()
            if self._closed:
                self._done = True
                return
            status = chan.exit_status
            transport_alive = self._conn.transport.is_active()
            if status == -1 and not transport_alive:
                # EOF + no status + dead transport = a lost link, not the end of the command.
                # A partial line from a dead link is a fragment: drop it.
                self._error = self._conn._lost_error()
            else:
                if self._buf and not self._skipping:
                    self._lines.append(bytes(self._buf))
                self._buf.clear()
                self.exit_status = status
                self._done = True
            self._conn._forget_channel(chan)
            return
        if not self._conn.transport.is_active():
            _drain(chan, self._buf, self._err)
            self._split()
            self._error = self._conn._lost_error()
            self._conn._forget_channel(chan)
            return
        select.select([chan], [], [], _POLL_S)


def _drain(chan: paramiko.Channel, out: bytearray, err: bytearray) -> bool:
    """Read whatever is buffered on stdout and stderr (non-blocking); True if anything."""
    got = False
    while chan.recv_ready():
        chunk = chan.recv(1 << 16)
        if not chunk:
            break
        out += chunk
        got = True
    while chan.recv_stderr_ready():
        chunk = chan.recv_stderr(1 << 16)
        if not chunk:
            break
        err += chunk
        got = True
    return got


def _sftp_makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    if not path or path in ("/", "."):
        return
    try:
        sftp.stat(path)
        return
    except FileNotFoundError:
        pass
    _sftp_makedirs(sftp, posixpath.dirname(path))
    try:
        sftp.mkdir(path, mode=0o700)
    except OSError:
        sftp.stat(path)  # created meanwhile by someone else: fine; otherwise re-raises


class _Watchdog(threading.Thread):
    """Every ``interval`` s, send a keepalive that expects a reply; no reply within
    ``timeout`` s means the link is dead: close the transport so readers notice at once."""

    def __init__(self, conn: SshConnection, interval: float, timeout: float) -> None:
        super().__init__(name=f"ssh-watchdog {conn.host.name}", daemon=True)
        self._conn = conn
        self.interval = interval
        self.timeout = timeout
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        t = self._conn.transport
        first = self._conn.first_transport
        # A dead ProxyCommand leaves paramiko spinning on an "active" transport (#1277):
        # look at the child often, not only at each keepalive.
        step = min(self.interval, 0.5) if isinstance(first.sock, paramiko.ProxyCommand) else None
        next_ping = time.monotonic() + self.interval
        while not self._stop_event.wait(step if step is not None else self.interval):
            if _proxy_exited(first):
                self._conn._mark_lost("the ProxyCommand exited")
                return
            if not t.is_active():
                return
            if step is not None and time.monotonic() < next_ping:
                continue
            next_ping = time.monotonic() + self.interval
            replied = threading.Event()

            def ping(replied: threading.Event = replied) -> None:
                try:
                    # Returns on a reply (OpenSSH answers "failure": still a reply) or as
                    # soon as the transport is closed.
                    t.global_request(_KEEPALIVE, wait=True)
                except Exception:  # a dying transport; the watchdog decides below
                    pass
                finally:
                    replied.set()

            threading.Thread(
                target=ping, name=f"ssh-keepalive {self._conn.host.name}", daemon=True
            ).start()
            deadline = time.monotonic() + self.timeout
            while not replied.wait(0.1):
                if self._stop_event.is_set():
                    return
                if _proxy_exited(first):
                    self._conn._mark_lost("the ProxyCommand exited")
                    return
                if time.monotonic() >= deadline:
                    self._conn._mark_lost(f"no reply to keepalive within {self.timeout:g} s")
                    return


def _close_transport(t: paramiko.Transport) -> None:
    # closing twice or a half-dead socket: nothing more to do
    with contextlib.suppress(Exception):
        t.close()
    sock = t.sock
    if isinstance(sock, paramiko.ProxyCommand):
        _reap_proxy(sock)
        return
    # already closed
    with contextlib.suppress(Exception):
        sock.close()


class _SupervisedProxy(paramiko.ProxyCommand):
    """paramiko's ProxyCommand.close() signals the pid even after the child was reaped (a
    reused pid would get the signal, and the transport thread logs ProcessLookupError)."""

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()


def _reap_proxy(proxy: paramiko.ProxyCommand) -> None:
    """paramiko's ProxyCommand.close() sends SIGTERM and never waits (#1713): reap it, and
    kill it if it ignores TERM."""
    proc = proxy.process
    with contextlib.suppress(Exception):
        proxy.close()
    try:
        proc.wait(timeout=3.0)
    except Exception:
        with contextlib.suppress(Exception):
            proc.kill()
            proc.wait(timeout=3.0)


def _proxy_exited(t: paramiko.Transport) -> bool:
    sock = t.sock
    return isinstance(sock, paramiko.ProxyCommand) and sock.process.poll() is not None


def _prefer_known_types(t: paramiko.Transport, known_types: list[str]) -> None:
    """Ask for the host key types already on file first (as OpenSSH does), so that a host
    known by its RSA key is not presented as "unknown" with its Ed25519 key."""
    if not known_types:
        return
    opts = t.get_security_options()
    current = list(opts.key_types)
    wanted: list[str] = []
    for kt in known_types:
        names = ["rsa-sha2-512", "rsa-sha2-256"] if kt == "ssh-rsa" else [kt]
        wanted += [n for n in names if n in current and n not in wanted]
    opts.key_types = tuple(wanted + [k for k in current if k not in wanted])


def _open_sock(
    hop: Hop, prev: paramiko.Transport | None, timeout: float
) -> socket.socket | paramiko.Channel | paramiko.ProxyCommand:
    where = f"{hop.label}: connecting to {hop.host}:{hop.port}"
    if prev is None and hop.proxy_command:
        try:
            return _SupervisedProxy(hop.proxy_command)
        except Exception as e:
            raise SshError(
                f"{where}: cannot start ProxyCommand {hop.proxy_command!r} ({e})", "config", False
            ) from None
    if prev is None:
        try:
            return socket.create_connection((hop.host, hop.port), timeout=timeout)
        except Exception as e:
            raise classify(e, where) from None
    try:
        return prev.open_channel(
            "direct-tcpip",
            dest_addr=(hop.host, hop.port),
            src_addr=("127.0.0.1", 0),
            timeout=timeout,
        )
    except Exception as e:
        if isinstance(e, paramiko.ChannelException):
            raise SshError(f"{where} through the jump host failed ({e})", "connect", True) from None
        raise classify(e, f"{where} through the jump host") from None


def _start(
    hop: Hop,
    prev: paramiko.Transport | None,
    known: hostkeys.KnownHosts,
    connect_timeout: float,
    auth_timeout: float,
) -> paramiko.Transport:
    sock = _open_sock(hop, prev, connect_timeout)
    try:
        t = paramiko.Transport(sock)
    except Exception as e:
        sock.close()
        raise classify(e, f"{hop.label}: connecting") from None
    t.banner_timeout = connect_timeout
    t.handshake_timeout = connect_timeout
    t.auth_timeout = auth_timeout
    t.channel_timeout = max(connect_timeout, 15.0)
    _prefer_known_types(t, known.known_types(hop.key_name))
    try:
        t.start_client(timeout=connect_timeout)
    except Exception as e:
        _close_transport(t)
        raise classify(e, f"{hop.label}: SSH handshake") from None
    # start_client() returns quietly when its timeout expires mid-handshake.
    if not t.is_active() or not t.initial_kex_done:
        _close_transport(t)
        raise SshError(
            f"{hop.label}: no answer from the SSH server at {hop.host}:{hop.port} within "
            f"{connect_timeout:g} s",
            "timeout",
            True,
        )
    return t


def _connect_hop(
    hop: Hop,
    prev: paramiko.Transport | None,
    known: hostkeys.KnownHosts,
    on_unknown_key: Callable[[str, str, str], bool] | None,
    connect_timeout: float,
    auth_timeout: float,
) -> paramiko.Transport:
    asked = False
    while True:
        t = _start(hop, prev, known, connect_timeout, auth_timeout)
        try:
            key = t.get_remote_server_key()
            verdict = known.check(hop.key_name, key)
        except Exception:
            _close_transport(t)
            raise
        presented = hostkeys.fingerprint(key)
        if verdict.verdict == "changed":
            _close_transport(t)
            expected = tuple(hostkeys.fingerprint(k) for k in verdict.expected)
            on_file = ", ".join(
                f"{k.get_name()} {fp}" for k, fp in zip(verdict.expected, expected, strict=True)
            )
            raise SshError(
                f"{hop.label}: the host key of {hop.key_name} CHANGED: on file {on_file}; the "
                f"server presented {key.get_name()} {presented}. This can be an attack or a "
                "reinstalled instance; if you know it was reinstalled, run "
                "`gpufleet hosts forget-key` for this host and connect again.",
                "hostkey_changed",
                False,
                expected_fingerprints=expected,
                presented_fingerprint=presented,
            )
        if verdict.verdict == "known":
            break
        _close_transport(t)
        if on_unknown_key is None or asked:
            raise SshError(
                f"{hop.label}: unknown {key.get_name()} host key {presented} for "
                f"{hop.key_name}; not accepted (confirm it, or use --accept-new)",
                "hostkey_unknown",
                False,
                presented_fingerprint=presented,
            )
        # The connection is closed while the user decides (sshd's LoginGraceTime).
        if not on_unknown_key(hop.label, key.get_name(), presented):
            raise SshError(
                f"{hop.label}: host key {presented} for {hop.key_name} was refused",
                "hostkey_unknown",
                False,
                presented_fingerprint=presented,
            )
        known.add(hop.key_name, key)
        log.info("%s: added %s host key %s", hop.label, key.get_name(), presented)
        asked = True  # the reconnect must now find the key known (or it changed: refused)
    try:
        _authenticate(t, hop)
    except BaseException:
        _close_transport(t)
        raise
    return t


def _load_key(path: str, hop: Hop, notes: list[str]) -> paramiko.PKey | None:
    try:
        return paramiko.PKey.from_path(path)
    except FileNotFoundError:
        notes.append(f"key file {path} not found")
        return None
    except (TypeError, paramiko.PasswordRequiredException):
        pass  # encrypted: needs the passphrase from the keyring
    except Exception as e:
        notes.append(f"key file {path} unusable ({type(e).__name__})")
        return None
    try:
        passphrase = secrets.get_secret(hop.secret_name, "key-passphrase")
    except secrets.SecretStoreUnavailable as e:
        notes.append(f"key file {path} is encrypted and {e}")
        return None
    if passphrase is None:
        notes.append(
            f"key file {path} is encrypted and no passphrase is stored (run `gpufleet hosts "
            f"set-secret {hop.secret_name} --kind key-passphrase`, or add it to ssh-agent)"
        )
        return None
    try:
        # paramiko wants bytes here (its stub says str).
        return paramiko.PKey.from_path(path, password=passphrase.encode())  # type: ignore[arg-type]
    except Exception:
        # Never echo the passphrase or the library's message (which may quote input).
        notes.append(f"key file {path}: the stored passphrase does not decrypt it")
        return None


def _try_auth(
    t: paramiko.Transport, hop: Hop, fn: Callable[[], object], what: str, notes: list[str]
) -> bool:
    try:
        fn()
    except paramiko.BadAuthenticationType as e:
        notes.append(f"{what}: the server does not allow it (allows {', '.join(e.allowed_types)})")
    except paramiko.AuthenticationException:
        notes.append(f"{what}: rejected")
    except Exception as e:
        if not t.is_active():
            raise classify(e, f"{hop.label}: authentication") from None
        raise classify(e, f"{hop.label}: authentication ({what})") from None
    return bool(t.is_authenticated())


def _authenticate(t: paramiko.Transport, hop: Hop) -> None:
    notes: list[str] = []
    if hop.auth in ("auto", "key"):
        for path in hop.key_paths:
            key = _load_key(path, hop, notes)
            if key is not None and _try_auth(
                t, hop, functools.partial(t.auth_publickey, hop.user, key), f"key {path}", notes
            ):
                return
    if hop.auth in ("auto", "agent") and os.environ.get("SSH_AUTH_SOCK"):
        agent = paramiko.Agent()
        try:
            for akey in agent.get_keys():
                if _try_auth(
                    t,
                    hop,
                    functools.partial(t.auth_publickey, hop.user, akey),
                    f"agent key {akey.fingerprint}",
                    notes,
                ):
                    return
        finally:
            agent.close()
    elif hop.auth == "agent":
        notes.append("no ssh-agent (SSH_AUTH_SOCK is not set)")
    if hop.auth in ("auto", "password"):
        try:
            password = secrets.get_secret(hop.secret_name, "password")
        except secrets.SecretStoreUnavailable as e:
            notes.append(f"password: {e}")
            password = None
        if password is not None:
            pw = password
            if _try_auth(
                t, hop, functools.partial(t.auth_password, hop.user, pw), "password", notes
            ):
                return
        elif hop.auth == "password":
            notes.append(f"no password stored (run `gpufleet hosts set-secret {hop.secret_name}`)")
    if not notes:
        notes.append("no key file, agent key or stored password to try")
    raise SshError(
        f"{hop.label}: authentication as {hop.user!r} failed: {'; '.join(notes)}",
        "auth",
        False,
    )
