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
STATES: tuple[SessionState, ...] = (CONNECTING, DEPLOYING, STREAMING, RECONNECTING, FAILED, STOPPED)


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
