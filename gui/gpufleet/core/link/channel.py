"""What a transport is, apart from how it reaches a host: the ``Transport`` interface (one-shot
commands, streams of JSON lines, the sampler's argv prefix), the ``Uploader`` that deploying
needs, line streams, and ``TransportError`` with its ``kind`` and ``retryable``. The two
transports (``link.transport``) and the deployer (``link.deploy``) both build on it.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import IO, Protocol

from gpufleet_sampler import protocol

from gpufleet.core.model.errors import ErrorKind, GpufleetError


class TransportError(GpufleetError):
    """A command could not be run on the host. ``str()`` is one clear line without secrets."""

    def __init__(
        self, message: str, *, kind: ErrorKind = "connect", retryable: bool = True
    ) -> None:
        super().__init__(message, kind, retryable)


def last_line(text: bytes | str, limit: int = 300) -> str:
    """The last non-empty line of some output, shortened: what a status line can show."""
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    lines = [ln.strip() for ln in s.splitlines() if ln.strip()]
    if not lines:
        return ""
    out = lines[-1]
    return out if len(out) <= limit else out[: limit - 1] + "…"


class LineStream:
    """An iterator of complete output lines (bytes) of one running command.

    ``close()`` may be called from any thread, also while another thread is blocked reading:
    that is how a session aborts a stalled stream and how ``stop()`` ends one. After the
    iteration ends, ``end_reason()`` tells why in one line (exit status, stderr tail), or None
    when the stream was closed by us.
    """

    def __iter__(self) -> Iterator[bytes]:
        return self._lines()

    def _lines(self) -> Iterator[bytes]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def end_reason(self) -> str | None:
        return None

    def send_line(self, line: bytes) -> bool:
        """Write one line to the command's stdin (a request to ``attach``, which passes it on
        to the daemon); False where the stream has no stdin to write to or it is gone."""
        return False


class Transport(Protocol):
    """What a session needs from a host (see module docstring)."""

    @property
    def label(self) -> str: ...

    def run(
        self, argv: list[str], stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]: ...

    def stream(self, argv: list[str]) -> LineStream: ...

    def ensure_sampler(self) -> list[str]: ...

    def close(self) -> None: ...


class Uploader(Protocol):
    """What deploying needs: run a command and put a file on the host."""

    @property
    def label(self) -> str: ...

    def run(
        self, argv: list[str], stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]: ...

    def upload(self, data: bytes, remote_path: str, mode: int = 0o755) -> None: ...


def read_bounded_lines(f: IO[bytes]) -> Iterator[bytes]:
    """Lines of a binary pipe, never holding more than one maximal line in memory: an
    overlong line is cut and yielded as one oversized chunk (the decoder counts it as bad)
    and the rest of it is skipped."""
    limit = protocol.MAX_LINE_BYTES + 1
    while True:
        line = f.readline(limit)
        if not line:
            return
        if len(line) >= limit and not line.endswith(b"\n"):
            while True:
                rest = f.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


def remote_join(argv: list[str]) -> str:
    """One command line for the remote login shell, every value quoted."""
    return " ".join(shlex.quote(a) for a in argv)
