"""A window of one host's recorded data: the unit every judgment of the past reads.

The diagnosis, the one judgment of a window (alerts, diagnosis, cost from the same condition
evaluations) and the comparison of two runs all look at "host H from t0 to t1". This module
is the one place that window is read, from the history store or from a recorded stream file
(``gpufleet stream HOST --format jsonl``, or an export), so that the same data gives the same
answer whichever way it arrived: a test compares the two.

``RunWindow`` holds the messages in time order with the hello in force at the start; a hello
that changed inside the window (a sampler restart, a new plan) is kept in ``hellos`` so that
a judgment can say "the limit was changed at 10:42" instead of blending two settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import (
    Event,
    Hello,
    Message,
    Procs,
    Sample,
    StreamDecoder,
    VersionError,
)


class WindowError(Exception):
    """The window cannot be read: the message says what is missing and where to look."""


class WindowMissing(WindowError):
    """Nothing to read where the window points: no such file, host or samples (the CLI's
    "not found"); a plain WindowError is a file that cannot be read as a stream."""


@dataclass(frozen=True)
class RunWindow:
    """One host's data from ``t0`` to ``t1`` (epoch seconds), messages in time order."""

    host: str
    t0: float
    t1: float
    hello: Hello
    samples: tuple[Sample, ...]
    procs: tuple[Procs, ...] = ()
    events: tuple[Event, ...] = ()
    # Every hello seen in the window with the time it took effect (the first is ``hello``).
    hellos: tuple[tuple[float, Hello], ...] = ()
    bad_lines: int = 0  # lines of a stream file that could not be decoded (skipped)

    @property
    def duration_s(self) -> float:
        return max(0.0, self.t1 - self.t0)

    @property
    def gpus(self) -> list[int]:
        """The GPU indices that have at least one row in the window."""
        seen: set[int] = set()
        for s in self.samples:
            seen.update(s.gpu_indices())
        return sorted(seen)

    def messages(self) -> list[Message]:
        """The hello first, then samples, procs and events merged in time order (what a rule
        engine is fed)."""
        rest: list[Message] = [*self.samples, *self.procs, *self.events]
        rest.sort(key=lambda m: getattr(m, "t", 0.0))
        return [self.hello, *rest]


def from_messages(
    host: str,
    msgs: Iterable[Message],
    t0: float | None = None,
    t1: float | None = None,
    *,
    bad_lines: int = 0,
) -> RunWindow:
    """The window ``[t0, t1]`` of decoded messages (the whole stream where a bound is None).
    Raises ``WindowError`` when there is no hello or no sample in it."""
    hellos: list[tuple[float, Hello]] = []
    samples: list[Sample] = []
    procs: list[Procs] = []
    events: list[Event] = []
    last_t = 0.0
    for m in msgs:
        if isinstance(m, Hello):
            # A hello carries no time of its own: it takes effect at the last message seen.
            hellos.append((last_t, m))
            continue
        t = getattr(m, "t", None)
        if not isinstance(t, float | int):
            continue
        last_t = float(t)
        if (t0 is not None and t < t0) or (t1 is not None and t > t1):
            continue
        if isinstance(m, Sample):
            samples.append(m)
        elif isinstance(m, Procs):
            procs.append(m)
        elif isinstance(m, Event):
            events.append(m)
    if not hellos:
        raise WindowError(f"{host}: no hello line: not a gpufleet stream")
    if not samples:
        raise WindowMissing(f"{host}: no samples in the window")
    lo = samples[0].t if t0 is None else t0
    hi = samples[-1].t if t1 is None else t1
    # The hello in force at the window's start is the last one before it (or the first).
    start = [h for h in hellos if h[0] <= lo] or hellos[:1]
    inside = [h for h in hellos if lo < h[0] <= hi and h is not start[-1]]
    return RunWindow(
        host=host,
        t0=float(lo),
        t1=float(hi),
        hello=start[-1][1],
        samples=tuple(samples),
        procs=tuple(procs),
        events=tuple(events),
        hellos=(start[-1], *inside),
        bad_lines=bad_lines,
    )


def from_stream_file(
    path: Path, host: str | None = None, t0: float | None = None, t1: float | None = None
) -> RunWindow:
    """The window of a recorded stream file; the host name defaults to the hello's, else the
    file's stem. Undecodable lines are skipped and counted in ``bad_lines``."""
    dec = StreamDecoder()
    msgs: list[Message] = []
    try:
        with path.open("rb") as f:
            for line in f:
                m = dec.feed(line)
                if m is not None:
                    msgs.append(m)
    except FileNotFoundError:
        raise WindowMissing(f"{path}: no such file") from None
    except OSError as e:
        raise WindowError(f"{path}: cannot read: {e.strerror}") from None
    except VersionError as e:
        raise WindowError(f"{path}: {e}") from None
    name = host or _hello_host(msgs) or path.stem
    try:
        return from_messages(name, msgs, t0, t1, bad_lines=dec.bad_lines)
    except WindowError as e:
        raise type(e)(f"{path}: {str(e).split(': ', 1)[-1]}") from None


def _hello_host(msgs: Sequence[Message]) -> str | None:
    for m in msgs:
        if isinstance(m, Hello):
            h = m.host.get("hostname")
            return h if isinstance(h, str) and h else None
    return None


def from_store(store: Store, host: str, t0: float, t1: float) -> RunWindow:
    """The window of a host in the history store. Raises ``WindowError`` naming the hosts
    that do have history when this one has none, or when the window holds no sample."""
    if host not in store.hosts():
        known = ", ".join(store.hosts()) or "none yet"
        raise WindowMissing(f"no history for host {host!r} (hosts with history: {known})")
    hello = store.hello(host, at=t0) or store.hello(host)
    if hello is None:
        raise WindowMissing(f"no hello recorded for host {host!r}")
    samples = tuple(store.samples(host, t0, t1))
    if not samples:
        raise WindowMissing(f"no samples of {host!r} in the window")
    changed = [(t, h) for t, h in store.hellos(host, t0, t1) if t > t0]
    return RunWindow(
        host=host,
        t0=float(t0),
        t1=float(t1),
        hello=hello,
        samples=samples,
        procs=tuple(store.procs(host, t0, t1)),
        events=tuple(store.events(host, t0, t1)),
        hellos=((float(t0), hello), *changed),
    )
