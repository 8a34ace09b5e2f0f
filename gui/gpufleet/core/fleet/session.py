"""One host's supervisor: connect, deploy, attach to the sampler daemon, parse, reconnect.

A ``HostSession`` runs in a thread of its own (plus a small watchdog thread) and goes through
connecting → deploying → streaming → reconnecting (capped exponential backoff with jitter) →
failed(reason) / stopped. It publishes ``HostMessage`` / ``HostStatus`` / ``HostGap`` through a
callback that must never block (the Fleet's bounded queues).

Nothing is lost across a reconnect: the session remembers the last sequence number it
received and re-attaches with ``attach --from-seq N``; the daemon backfills from its ring.
A new ``run_id`` in ``hello`` means the daemon was restarted: the session records a gap and
re-attaches from the start of the new run. A stream that stays silent for three sampling
intervals is stalled (a frozen link often looks alive) and is dropped and re-attached.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import (
    CONNECTING,
    DEPLOYING,
    FAILED,
    NO_GPU,
    NVML_FAILED,
    RECONNECTING,
    STOPPED,
    STREAMING,
    FleetEvent,
    HostGap,
    HostMessage,
    HostStatus,
)
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.link.channel import LineStream, Transport, TransportError
from gpufleet.core.link.nvidia_smi_link import with_collector
from gpufleet.core.link.transport import open_transport
from gpufleet.core.model.errors import ErrorKind, SessionState
from gpufleet.core.wire.messages import (
    ErrorMsg,
    Event,
    Hello,
    Links,
    Procs,
    Sample,
    StreamDecoder,
    VersionError,
)

log = logging.getLogger(__name__)

Publish = Callable[[FleetEvent], None]
Opener = Callable[[HostConfig], Transport]

# Backoff: network errors retry quickly (the host must be reached within 5 s of its return);
# a sampler that connects but dies or prints garbage is retried more slowly.
BACKOFF_INITIAL_S = 0.5
BACKOFF_CAP_NETWORK_S = 4.0
BACKOFF_CAP_SAMPLER_S = 30.0
STALL_INTERVALS = 3.0
HELLO_TIMEOUT_S = 30.0
HEALTHY_AFTER_S = 5.0
MAX_BAD_BEFORE_HELLO = 50
# A bad-lines status update at most this often: a sampler spewing junk must not flood queues.
BAD_LINE_STATUS_EVERY_S = 1.0
# A host whose NVML cannot start: tried this many times, this far apart, then left alone
# (the state stays, with its advice; editing the host or restarting the app tries again).
NO_GPU_TRIES = 4
NO_GPU_RETRY_S = 60.0
# NVML's words for "there is no driver here" (nvmlInit's NVMLError text): no GPU to watch.
_NO_DRIVER_WORDS = ("Driver Not Loaded", "Library Not Found", "Shared Library", "not installed")


def classify_backend_error(message: str) -> tuple[SessionState, str] | None:
    """(state, reason) for a sampler that could not start its NVML backend, from its error
    line (``cannot start the nvml backend: NVML could not start (Driver Not Loaded): ...``);
    None for other errors. NO_GPU when there is no driver, NVML_FAILED with NVML's reason
    otherwise."""
    if "NVML could not start" not in message:
        return None
    start, end = message.find("("), message.find(")")
    why = message[start + 1 : end] if 0 <= start < end else message
    if any(w.lower() in why.lower() for w in _NO_DRIVER_WORDS):
        return NO_GPU, f"no NVIDIA driver on this host (NVML: {why})"
    return NVML_FAILED, f"NVML failed: {why}"


class _Reattach(Exception):
    """The daemon was restarted: attach again from the start of the new run, at once."""


class HostSession:
    """Supervises the stream of one host (see the module docstring)."""

    def __init__(
        self,
        host: HostConfig,
        publish: Publish,
        *,
        opener: Opener | None = None,
        on_unknown_key: Callable[[str, str, str], bool] | None = None,
        state_dir: str | None = None,
        connect_timeout: float = 8.0,
        backoff_cap_s: float = BACKOFF_CAP_NETWORK_S,
        hello_timeout_s: float = HELLO_TIMEOUT_S,
    ) -> None:
        self.host = host
        self._publish = publish
        self._on_unknown_key = on_unknown_key
        self._connect_timeout = connect_timeout
        self._opener: Opener = opener or self._default_opener
        self.state_dir = state_dir
        self._backoff_cap = backoff_cap_s
        self._hello_timeout = hello_timeout_s

        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._stream: LineStream | None = None
        self._transport: Transport | None = None
        self._prefix: list[str] | None = None

        # Progress, read by the watchdog: monotonic deadlines of the current stream.
        self._attach_started: float | None = None
        self._last_sample_mono: float | None = None
        self._stall_limit_s = STALL_INTERVALS * host.interval_s
        self._abort_reason: str | None = None
        self._end_reason: str | None = None
        # Set by a stream whose sampler could not start NVML: (NO_GPU | NVML_FAILED, reason).
        self._no_gpu: tuple[SessionState, str] | None = None
        self._hello_mono = 0.0
        self._explained_through = 0
        self._restart_reported = False
        self._suppress_gap_notes = False
        # Until when (monotonic) someone looks at the per-link NVLink values: asked for again
        # on every attach while it lasts.
        self._links_wanted_until = 0.0

        # What the session knows of the stream (read by the fleet; ints and refs are atomic).
        self.run_id: str | None = None
        self.last_seq = 0
        self.hello: Hello | None = None
        self.latest_procs: Procs | None = None
        self.bad_lines = 0
        self.last_bad_line: str | None = None
        self.messages = 0
        self.duplicates = 0
        self.attaches = 0
        self._last_bad_status = 0.0
        self._status = HostStatus(host.name, CONNECTING, None, time.time())

    # ---------------------------------------------------------------------------- control

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=f"gpufleet-session-{self.host.name}")
        self._watchdog = threading.Thread(
            target=self._watch, name=f"gpufleet-watchdog-{self.host.name}"
        )
        self._thread.start()
        self._watchdog.start()

    def request_stop(self) -> None:
        """Ask the session to end (non-blocking): ends the stream in progress."""
        self._stop.set()
        self._abort("stopping")

    def stop(self, timeout: float = 10.0) -> None:
        self.request_stop()
        self.join(timeout)

    def join(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        for t in (self._thread, self._watchdog):
            if t is not None:
                t.join(max(0.0, deadline - time.monotonic()))

    def is_alive(self) -> bool:
        return any(t is not None and t.is_alive() for t in (self._thread, self._watchdog))

    def status(self) -> HostStatus:
        return self._status

    @property
    def prefix(self) -> list[str] | None:
        """The argv prefix that runs the sampler on the host, once deployed."""
        return list(self._prefix) if self._prefix is not None else None

    # ---------------------------------------------------------------------------- internals

    def watch_links(self, seconds: float) -> bool:
        """Ask the sampler for the per-link NVLink values at their full rate for ``seconds``
        (the per-link view is open, or a link alert is being judged): sent on the stream now
        where one runs, and with every attach while the time lasts. True if it went out."""
        self._links_wanted_until = max(self._links_wanted_until, time.monotonic() + seconds)
        with self._lock:
            stream = self._stream
        return stream is not None and stream.send_line(samplercmd.watch_links_line(seconds))

    def _default_opener(self, host: HostConfig) -> Transport:
        return with_collector(
            open_transport(
                host, on_unknown_key=self._on_unknown_key, connect_timeout=self._connect_timeout
            ),
            host,
        )

    def _set_state(
        self, state: SessionState, reason: str | None = None, kind: ErrorKind | None = None
    ) -> None:
        old = self._status
        if old.state == state and old.reason == reason and old.kind == kind:
            return
        st = HostStatus(self.host.name, state, reason, time.time(), kind)
        self._status = st
        self._publish(st)

    def _abort(self, reason: str) -> None:
        with self._lock:
            stream = self._stream
            if stream is None:
                return
            if self._abort_reason is None:
                self._abort_reason = reason
        stream.close()

    def _watch(self) -> None:
        """Drops a stream that stalls: no hello in time, or no sample for 3 intervals."""
        while not self._done.wait(0.25):
            now = time.monotonic()
            started = self._attach_started
            if started is None:
                continue
            last = self._last_sample_mono
            if last is None:
                if now - started > self._hello_timeout:
                    self._abort(f"no data from the sampler within {self._hello_timeout:g} s")
            elif now - last > self._stall_limit_s:
                self._abort(f"no sample for {now - last:.1f} s: the stream stalled")

    def _run(self) -> None:
        failures = 0
        no_gpu_tries = 0
        try:
            while not self._stop.is_set():
                got_hello = False
                kind: ErrorKind
                self._no_gpu = None
                try:
                    got_hello = self._attempt()
                    reason = self._end_reason or "the stream ended"
                    kind = "sampler"
                except TransportError as e:
                    if not e.retryable:
                        self._set_state(FAILED, str(e), e.kind)
                        return
                    reason, kind = str(e), e.kind
                except VersionError as e:
                    self._set_state(FAILED, str(e), "protocol")
                    return
                except Exception as e:  # a bug must not kill the host's supervision
                    log.exception("session %s: unexpected error", self.host.name)
                    reason, kind = f"internal error: {type(e).__name__}: {e}", "internal"
                if self._stop.is_set():
                    break
                if self._no_gpu is not None:
                    no_gpu_tries += 1
                    state, why = self._no_gpu
                    if no_gpu_tries >= NO_GPU_TRIES:
                        self._set_state(state, why, "no_gpu")
                        return
                    self._set_state(
                        state,
                        f"{why}; trying again in {NO_GPU_RETRY_S:g} s",
                        "no_gpu",
                    )
                    if self._stop.wait(NO_GPU_RETRY_S):
                        break
                    continue
                # Only a stream that worked for a while resets the backoff: a sampler that says
                # hello and dies at once must not be restarted twice a second.
                healthy = got_hello and time.monotonic() - self._hello_mono >= HEALTHY_AFTER_S
                failures = 0 if healthy else failures + 1
                self._set_state(RECONNECTING, reason, kind)
                # A link that works but a sampler that does not: no point in hammering it.
                cap = self._backoff_cap if kind != "sampler" else BACKOFF_CAP_SAMPLER_S
                delay = min(cap, BACKOFF_INITIAL_S * (2 ** max(0, failures - 1)))
                delay *= random.uniform(0.5, 1.0)
                if self._stop.wait(delay):
                    break
        finally:
            if self._stop.is_set():
                self._set_state(STOPPED, None)
            self._done.set()

    def _attempt(self) -> bool:
        """One connection: returns whether a hello came (the stream worked), raises on
        connection failures. Sets ``_end_reason``."""
        self._end_reason = None
        # Retries keep showing why they happen (reconnecting, no GPU), not "connecting".
        quiet = (RECONNECTING, NO_GPU, NVML_FAILED)
        if self._status.state not in quiet:
            self._set_state(CONNECTING)
        transport = self._opener(self.host)
        with self._lock:
            self._transport = transport
        got_hello = False
        try:
            if self._stop.is_set():
                return False
            if self._prefix is None:
                if self._status.state not in quiet:
                    self._set_state(DEPLOYING)
                self._prefix = transport.ensure_sampler()
            prefix = self._prefix
            while not self._stop.is_set():
                try:
                    ok = self._stream_once(transport, prefix)
                    if not ok:
                        # Maybe the sampler is gone (deleted, upgraded by another copy of
                        # the app): deploy again next time; the probe is one round trip.
                        self._prefix = None
                    return got_hello or ok
                except _Reattach:
                    got_hello = True
                    continue
            return got_hello
        finally:
            with self._lock:
                self._transport = None
            transport.close()

    def _stream_once(self, transport: Transport, prefix: list[str]) -> bool:
        argv = samplercmd.attach_argv(
            prefix,
            self.host,
            self.last_seq,
            self.state_dir,
            self.run_id if self.last_seq else None,
            watch_links_s=self._links_wanted_until - time.monotonic(),
        )
        # Right after a restart was recorded, the daemon's own note about it is not news.
        self._suppress_gap_notes = self._restart_reported
        self._restart_reported = False
        decoder = StreamDecoder()
        stream = transport.stream(argv)
        with self._lock:
            self._stream = stream
            self._abort_reason = None
        self.attaches += 1
        self._last_sample_mono = None
        self._attach_started = time.monotonic()
        got_hello = False
        sampler_error: str | None = None
        bad_before = 0
        try:
            if self._stop.is_set():
                return False
            for line in stream:
                msg = decoder.feed(line)
                if decoder.bad_lines != bad_before:
                    self._bad_lines(decoder.bad_lines - bad_before, decoder.last_error, line)
                    bad_before = decoder.bad_lines
                    if not got_hello and bad_before >= MAX_BAD_BEFORE_HELLO:
                        # Not our sampler talking (a login banner, a wrong program): stop
                        # reading it rather than wait for a hello that will not come.
                        self._abort(f"{bad_before} lines that are not the sampler's protocol")
                if msg is None:
                    continue
                if isinstance(msg, Hello):
                    got_hello = True
                    self._on_hello(msg)
                    continue
                if isinstance(msg, ErrorMsg):
                    sampler_error = msg.message
                    if msg.code == "backend":
                        self._no_gpu = classify_backend_error(msg.message)
                    self._publish(HostMessage(self.host.name, msg))
                    continue
                if isinstance(msg, Event) and "gap_from" in msg.raw:
                    # The daemon's note of what it no longer holds; its seq is our own N.
                    self._on_gap_note(msg)
                    self._publish(HostMessage(self.host.name, msg))
                    continue
                if not self._on_seq(msg):
                    continue
                if isinstance(msg, Sample):
                    self._last_sample_mono = time.monotonic()
                elif isinstance(msg, Procs):
                    self.latest_procs = msg
                self.messages += 1
                self._publish(HostMessage(self.host.name, msg))
        finally:
            self._attach_started = None
            with self._lock:
                self._stream = None
                aborted = self._abort_reason
            stream.close()
        reason = aborted or stream.end_reason() or "the stream ended"
        if sampler_error:
            reason = f"the sampler reported: {sampler_error}"
        if not got_hello and decoder.bad_lines:
            reason = (
                f"the sampler sent no valid hello ({decoder.bad_lines} bad lines, last: "
                f"{self.last_bad_line}); {reason}"
            )
        self._end_reason = reason
        return got_hello

    def _on_hello(self, hello: Hello) -> None:
        restarted = self.run_id is not None and hello.run_id != self.run_id
        self.hello = hello
        if hello.interval_s > 0:
            # The sampler's own interval, but never longer than the one asked for: a hello
            # claiming hours must not switch the stall watchdog off.
            interval = min(hello.interval_s, self.host.interval_s)
            self._stall_limit_s = max(STALL_INTERVALS * interval, 1.0)
        if restarted:
            self._publish(
                HostGap(
                    self.host.name,
                    self.last_seq,
                    time.time(),
                    f"the sampler was restarted (run {self.run_id} → {hello.run_id}): "
                    "what it sampled before is gone",
                )
            )
            self.run_id = hello.run_id
            if self.last_seq > 0:
                # Whether the new run continues the numbering or starts again from 1, what it
                # holds is all new: attach once more from its start.
                self.last_seq = 0
                self._explained_through = 0
                self._restart_reported = True
                raise _Reattach()
        self.run_id = hello.run_id
        self._publish(HostMessage(self.host.name, hello))
        self._last_sample_mono = self._hello_mono = time.monotonic()
        if not hello.gpus:
            # Connected and sampling, but the driver sees no GPU: nothing to monitor, and not
            # a network problem (the stream stays; its samples are empty).
            self._set_state(NO_GPU, "the NVIDIA driver sees no GPU on this host", "no_gpu")
            return
        # A collector that cannot do everything (nvidia-smi: no ring, no kill) says so here.
        limits = hello.raw.get("limits")
        self._set_state(STREAMING, self._bad_reason() or (str(limits) if limits else None))

    def _on_gap_note(self, note: Event) -> None:
        gap_from = note.raw.get("gap_from")
        gap_to = note.raw.get("gap_to")
        if not isinstance(gap_from, int) or not isinstance(gap_to, int):
            return
        self._explained_through = max(self._explained_through, gap_to)
        if self._suppress_gap_notes:
            return  # the restart that this note is about is already recorded
        self._publish(
            HostGap(self.host.name, max(0, gap_from - 1), time.time(), note.message or "gap")
        )

    def _on_seq(self, msg: Sample | Procs | Event | Links) -> bool:
        """Dedupes and detects holes in the sequence; False to drop the message."""
        seq = msg.seq
        if seq <= self.last_seq:
            self.duplicates += 1
            return False
        # Holes the daemon already explained (its thinned day tier) are not news.
        explained = seq - 1 <= self._explained_through
        if self.last_seq > 0 and seq > self.last_seq + 1 and not explained:
            self._publish(
                HostGap(
                    self.host.name,
                    self.last_seq,
                    time.time(),
                    f"{seq - self.last_seq - 1} messages after seq {self.last_seq} are no longer "
                    "in the sampler's ring",
                )
            )
        self.last_seq = seq
        return True

    def _bad_reason(self) -> str | None:
        if not self.bad_lines:
            return None
        return f"{self.bad_lines} bad lines from the sampler (last: {self.last_bad_line})"

    def _bad_lines(self, n: int, last: str | None, line: bytes) -> None:
        self.bad_lines += n
        text = line[:60].decode("utf-8", "replace").strip()
        text = "".join(c if c.isprintable() else "?" for c in text)
        self.last_bad_line = f"{last}; the line began {text!r}" if text else last
        now = time.monotonic()
        if now - self._last_bad_status >= BAD_LINE_STATUS_EVERY_S:
            self._last_bad_status = now
            with contextlib.suppress(Exception):
                self._set_state(self._status.state, self._bad_reason(), self._status.kind)
