"""What a Fleet publishes to its subscribers: messages, status changes and gaps, per host.

They live apart from ``fleet.py`` so that ``session.py`` (which produces them) and ``fleet.py``
(which publishes them) do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpufleet.core.model.errors import ErrorKind, SessionState
from gpufleet.core.wire.messages import Message

# Session states, in the order a healthy session goes through them.
CONNECTING: Final = "connecting"
DEPLOYING: Final = "deploying"
STREAMING: Final = "streaming"
RECONNECTING: Final = "reconnecting"
FAILED: Final = "failed"
STOPPED: Final = "stopped"
# The host answers but has nothing to monitor: no NVIDIA driver (or no GPU the driver sees),
# or NVML itself fails to start (a driver/library mismatch, no permission). Not "unreachable":
# the network is fine, and retrying a connection will not load a driver. Retried a few times
# slowly (a fresh rental may still be loading its driver), then left; the reason says which.
NO_GPU: Final = "no_gpu"
NVML_FAILED: Final = "nvml_failed"
STATES: tuple[SessionState, ...] = (
    CONNECTING,
    DEPLOYING,
    STREAMING,
    RECONNECTING,
    FAILED,
    STOPPED,
    NO_GPU,
    NVML_FAILED,
)
# States a one-shot command (stream, kill) should stop waiting in.
GAVE_UP_STATES: tuple[SessionState, ...] = (FAILED, NO_GPU, NVML_FAILED)


@dataclass(frozen=True)
class HostMessage:
    """One parsed message (Hello/Sample/Procs/Event/ErrorMsg) from a host's sampler."""

    host: str
    msg: Message


@dataclass(frozen=True)
class HostStatus:
    """A host session's state; ``reason`` says why in one line (failures, reconnects, bad
    lines). ``kind`` classifies a failure (``hostkey_unknown``, ``hostkey_changed``, ``auth``,
    ``connect``, ``timeout``, ``no_python``, ``protocol``, ``sampler``...) so that the CLI can
    pick an exit code without parsing the sentence."""

    host: str
    state: SessionState
    reason: str | None
    t: float
    kind: ErrorKind | None = None


@dataclass(frozen=True)
class HostGap:
    """Messages after ``after_seq`` were not received and never will be (the sampler was
    restarted, or the outage outlasted its ring)."""

    host: str
    after_seq: int
    t: float
    reason: str


FleetEvent = HostMessage | HostStatus | HostGap
