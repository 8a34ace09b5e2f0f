"""How the laptop runs sampler commands on a host: over SSH, or as local subprocesses.

A ``Transport`` runs one-shot commands (``run``), long streams of JSON lines (``stream``) and
knows the argv prefix that starts the sampler there (``ensure_sampler``: deploys it first over
SSH). ``LocalTransport`` serves ``localhost`` and the demo fleet with the very same sampler
commands, so the demo exercises the whole path except the network.

Every failure is a ``TransportError`` with a ``kind`` and ``retryable``: the session reconnects
on retryable ones and stops with the message on the others (unknown/changed host key, refused
authentication, no python3 on the host).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link.channel import (
    LineStream,
    Transport,
    TransportError,
    last_line,
    read_bounded_lines,
    remote_join,
)
from gpufleet.core.link.deploy import deploy
from gpufleet.core.link.zipapp import sampler_zipapp_bytes
from gpufleet.core.model.errors import GpufleetError

# How much of a dead sampler's stderr goes into the status line.
STDERR_TAIL_BYTES = 4000


# --------------------------------------------------------------------------------------------
# Local subprocesses


def sampler_source_root() -> Path | None:
    """The directory holding the ``gpufleet_sampler`` package (for PYTHONPATH)."""
    spec = importlib.util.find_spec("gpufleet_sampler")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve().parent


class _ProcessLineStream(LineStream):
    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        # Stderr goes to a file, not a pipe: no reader thread, and its tail explains a death.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the stream)
        try:
            # A session of its own: a Ctrl-C in the terminal must not reach the sampler (nor
            # the daemon that `attach --start` spawns); we end the child ourselves.
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            self._stderr.close()
            raise TransportError(
                f"cannot start {argv[0]}: {e.strerror or e}", kind="sampler"
            ) from e
        self._lock = threading.Lock()
        self._closed = False
        self._eof = False
        self._aborted = False
        self._returncode: int | None = None

    def _lines(self) -> Iterator[bytes]:
        assert self._proc.stdout is not None
        try:
            yield from read_bounded_lines(self._proc.stdout)
        except (OSError, ValueError):
            # The pipe was torn down under us by close(); that ends the stream.
            return
        finally:
            self._eof = True
            self._finish()

    def _finish(self) -> None:
        self.close()
        with contextlib.suppress(OSError, ValueError):
            assert self._proc.stdout is not None
            self._proc.stdout.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._aborted = not self._eof
        proc = self._proc
        # Closing stdin is the polite way: `attach` exits when its client goes away.
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            self._returncode = proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                self._returncode = proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                self._returncode = proc.wait()

    def send_line(self, line: bytes) -> bool:
        with self._lock:
            if self._closed:
                return False
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(line.rstrip(b"\n") + b"\n")
                self._proc.stdin.flush()
            except (OSError, ValueError):
                return False
        return True

    def end_reason(self) -> str | None:
        if self._aborted:
            return None
        rc = self._proc.poll()
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - STDERR_TAIL_BYTES))
            tail = last_line(self._stderr.read())
        except (OSError, ValueError):
            tail = ""
        if rc is None:
            return None
        msg = f"the sampler exited with status {rc}" if rc >= 0 else f"killed by signal {-rc}"
        return f"{msg}: {tail}" if tail else msg

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._stderr.close()


class LocalTransport:
    """Runs sampler commands as local subprocesses (``localhost`` and the demo fleet).

    The sampler runs as ``sys.executable -m gpufleet_sampler`` with the package's directory on
    PYTHONPATH; in a frozen bundle, where there may be no python3, through the app itself
    (its hidden ``_sampler`` subcommand); with ``use_zipapp`` through the same zipapp that is
    deployed over SSH (to test that artefact without a network); with ``prefix``, exactly that.
    """

    def __init__(
        self,
        host: HostConfig | None = None,
        *,
        use_zipapp: bool = False,
        prefix: list[str] | None = None,
    ) -> None:
        self._host = host
        self._use_zipapp = use_zipapp
        # An explicit prefix runs another sampler program (tests use a misbehaving one).
        self._prefix: list[str] | None = list(prefix) if prefix else None
        env = dict(os.environ)
        root = sampler_source_root()
        if root is not None and not getattr(sys, "frozen", False):
            old = env.get("PYTHONPATH")
            env["PYTHONPATH"] = str(root) + (os.pathsep + old if old else "")
        self._env = env

    @property
    def label(self) -> str:
        return self._host.label if self._host is not None else "localhost"

    def ensure_sampler(self) -> list[str]:
        if self._prefix is None:
            if getattr(sys, "frozen", False):
                self._prefix = [sys.executable, "_sampler"]
            elif self._use_zipapp:
                self._prefix = [sys.executable, str(self._local_zipapp())]
            else:
                self._prefix = [sys.executable, "-m", "gpufleet_sampler"]
        return list(self._prefix)

    def _local_zipapp(self) -> Path:
        name, data = sampler_zipapp_bytes()
        target: Path = paths.ensure_private_dir(paths.data_dir() / "sampler") / str(name)
        if not target.exists():
            tmp = target.with_suffix(f".part-{os.getpid()}")
            tmp.write_bytes(data)
            tmp.chmod(paths.PRIVATE_FILE)  # run as `python file.pyz`: no x bit needed
            os.replace(tmp, target)
        return target

    def run(
        self, argv: list[str], stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]:
        try:
            p = subprocess.run(
                argv,
                input=stdin if stdin is not None else b"",
                capture_output=True,
                timeout=timeout,
                env=self._env,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            raise TransportError(
                f"{shlex.join(argv[-3:])} did not finish within {timeout:g} s", kind="timeout"
            ) from e
        except OSError as e:
            raise TransportError(f"cannot run {argv[0]}: {e.strerror or e}", kind="sampler") from e
        return p.returncode, p.stdout, p.stderr

    def stream(self, argv: list[str]) -> LineStream:
        return _ProcessLineStream(argv, self._env)

    def upload(self, data: bytes, remote_path: str, mode: int = 0o755) -> None:
        path = Path(os.path.expanduser(remote_path))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.part-{os.getpid()}")
        tmp.write_bytes(data)
        tmp.chmod(mode)
        os.replace(tmp, path)

    def close(self) -> None:
        """Nothing to release: every stream is closed by its owner."""


# --------------------------------------------------------------------------------------------
# SSH


def _wrap_ssh_error(e: Exception) -> TransportError:
    if isinstance(e, GpufleetError):
        return TransportError(str(e), kind=e.kind, retryable=e.retryable)
    return TransportError(str(e), kind="connect", retryable=True)


class _SshLineStream(LineStream):
    """Lines of a remote command over one SSH channel (``SshConnection.stream_lines``,
    whose ``close()`` is safe from another thread: the reading thread wakes up and ends)."""

    def __init__(self, transport: SshTransport, command: str) -> None:
        self._transport = transport
        self._command = command
        self._lock = threading.Lock()
        self._closed = False
        self._ended = False
        self._aborted = False
        self._inner: Any = None
        self._error: str | None = None

    def _lines(self) -> Iterator[bytes]:
        from gpufleet.core.link.ssh import SshError

        try:
            # stdin stays open: ``attach`` takes its EOF for "the client left", and request
            # lines written on it (send_line) go on to the daemon.
            inner = self._transport.conn.stream_lines(self._command, close_stdin=False)
        except SshError as e:
            raise _wrap_ssh_error(e) from e
        with self._lock:
            self._inner = inner
            closed = self._closed
        if closed:
            inner.close()
            return
        try:
            yield from inner
        except (SshError, OSError, EOFError) as e:
            with self._lock:
                closed = self._closed
            if not closed:
                self._error = str(e)
        finally:
            with self._lock:
                self._ended = True
            inner.close()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._aborted = not self._ended
            inner = self._inner
        if inner is not None:
            inner.close()

    def send_line(self, line: bytes) -> bool:
        with self._lock:
            inner = None if self._closed or self._ended else self._inner
        if inner is None:
            return False
        return bool(inner.send(line.rstrip(b"\n") + b"\n"))

    def end_reason(self) -> str | None:
        if self._aborted:
            return None
        if self._error is not None:
            return self._error
        inner = self._inner
        status = getattr(inner, "exit_status", None)
        tail = last_line(getattr(inner, "stderr_tail", b"") or b"")
        if status is None:
            return "the sampler's stream ended"
        msg = f"the sampler exited with status {status}"
        return f"{msg}: {tail}" if tail else msg


class SshTransport:
    """Runs sampler commands on a host over one SSH connection (``link.ssh.SshConnection``)."""

    def __init__(self, conn: Any, host: HostConfig) -> None:
        self.conn = conn
        self._host = host
        self._prefix: list[str] | None = None
        self._close_lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(
        cls,
        host: HostConfig,
        *,
        on_unknown_key: Callable[[str, str, str], bool] | None = None,
        known_hosts: Path | None = None,
        connect_timeout: float = 10.0,
    ) -> SshTransport:
        from gpufleet.core.link.ssh import SshConnection, SshError

        try:
            conn = SshConnection.open(
                host,
                on_unknown_key=on_unknown_key,
                known_hosts=known_hosts,
                connect_timeout=connect_timeout,
            )
        except SshError as e:
            raise _wrap_ssh_error(e) from e
        except OSError as e:
            raise TransportError(f"cannot reach {host.label}: {e}", kind="connect") from e
        return cls(conn, host)

    @property
    def label(self) -> str:
        return self._host.label

    def run(
        self, argv: list[str], stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]:
        return self.run_shell(remote_join(argv), stdin=stdin, timeout=timeout)

    def run_shell(
        self, command: str, stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]:
        """Run a command line as it is (the caller has quoted every value)."""
        from gpufleet.core.link.ssh import SshError

        try:
            rc, out, err = self.conn.run(command, stdin=stdin, timeout=timeout)
        except SshError as e:
            raise _wrap_ssh_error(e) from e
        except (OSError, EOFError) as e:
            raise TransportError(f"{self.label}: connection lost ({e})", kind="connect") from e
        return int(rc), bytes(out), bytes(err)

    def stream(self, argv: list[str]) -> LineStream:
        return _SshLineStream(self, remote_join(argv))

    def upload(self, data: bytes, remote_path: str, mode: int = 0o755) -> None:
        from gpufleet.core.link.ssh import SshError

        try:
            self.conn.upload(data, remote_path, mode)
        except SshError as e:
            raise _wrap_ssh_error(e) from e
        except (OSError, EOFError) as e:
            raise TransportError(f"{self.label}: upload failed ({e})", kind="connect") from e

    def ensure_sampler(self) -> list[str]:
        if self._prefix is None:
            self._prefix = deploy(self, self._host)
        return list(self._prefix)

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        with contextlib.suppress(Exception):
            self.conn.close()


def open_transport(
    host: HostConfig,
    *,
    on_unknown_key: Callable[[str, str, str], bool] | None = None,
    connect_timeout: float = 10.0,
) -> Transport:
    """A connected transport for a host: local subprocesses or an SSH connection."""
    if host.transport == "local":
        return LocalTransport(host)
    return SshTransport.open(host, on_unknown_key=on_unknown_key, connect_timeout=connect_timeout)
