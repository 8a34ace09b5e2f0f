"""One error base for every stage, carrying a ``kind`` a caller can branch on without parsing
the sentence (the CLI picks its exit code from it, a session decides whether to retry), and
the states a host session goes through."""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal[
    # reaching the host
    "connect",
    "refused",  # nothing listens on the port (retryable; one-shot commands give up at once)
    "timeout",
    "channel",
    "auth",
    "hostkey_unknown",
    "hostkey_changed",
    "config",
    # running the sampler there
    "no_python",
    "deploy",
    "protocol",
    "sampler",
    "no_gpu",  # reached, but no NVIDIA driver / GPU, or NVML does not start
    # fleet commands
    "unknown_host",
    "no_process",
    "error",
    "internal",
    # Prometheus as a source
    "http",
    "query",
]

SessionState = Literal[
    "connecting",
    "deploying",
    "streaming",
    "reconnecting",
    "failed",
    "stopped",
    # reached, but nothing to monitor (see core.fleet.events)
    "no_gpu",
    "nvml_failed",
]


class GpufleetError(Exception):
    """A failure with a ``kind``; ``str()`` is one clear line without secrets. ``retryable``
    says whether trying again later can help (a link that dropped) or the user must act."""

    def __init__(self, message: str, kind: ErrorKind, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.retryable = retryable
