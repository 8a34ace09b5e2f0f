"""Hosts read through ``nvidia-smi`` instead of the sampler: the transport path.

``with_collector(transport, host)`` wraps a host's transport. For ``collector = "sampler"``
it changes nothing. For ``"nvidia-smi"``, and for ``"auto"`` (the default) when deploying
finds no python3 >= 3.8 but ``nvidia-smi`` is on the host's PATH, the sampler's commands are
answered from ``nvidia-smi`` instead: ``ensure_sampler`` returns the marker prefix
``SMI_PREFIX``, and the session's ``attach`` becomes a ``SmiStream``, which yields the same
protocol lines the sampler would (parsed by ``gpufleet.core.wire.nvidia_smi``), so the
session, the fleet and everything after them do not know the difference.

On the host that is: ``nvidia-smi -q -x`` and one ``--query-gpu`` probe once per connection,
then one long-lived ``nvidia-smi --query-gpu=… -lms N`` for the samples and one long-lived
shell loop that runs ``--query-compute-apps`` every ``APPS_INTERVAL_S`` seconds for the
processes: nothing is spawned per tick. What this cannot do (no ring while the laptop is
away, no watchdog, no kill) travels in ``hello["limits"]`` to the host's status; the health
``check`` is made from one ``nvidia-smi -q -x`` (no Xids: nothing watched for them).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any, Final

from gpufleet_sampler import protocol, protocol_schema

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link.channel import LineStream, Transport, TransportError, last_line
from gpufleet.core.wire import nvidia_smi as smi

# The argv prefix ensure_sampler returns for a host read through nvidia-smi: never a program
# name on the host (it starts with "@"), so it cannot be run there by mistake.
SMI_PREFIX: Final = "@nvidia-smi"
APPS_INTERVAL_S: Final = 3.0
APPS_END: Final = "@@gpufleet-apps-end"
XML_BEGIN: Final = "@@gpufleet-xml-begin"
XML_END: Final = "@@gpufleet-xml-end"
PROBE_TIMEOUT_S: Final = 60.0
# One run id per host for the life of this app: seq numbers continue across reconnects, so
# the session neither drops the new lines as duplicates nor takes them for a restart.
_RUN_IDS: dict[str, str] = {}
_RUN_LOCK = threading.Lock()


def _run_id(host: str) -> str:
    with _RUN_LOCK:
        rid = _RUN_IDS.get(host)
        if rid is None:
            rid = _RUN_IDS[host] = f"nvidia-smi-{os.getpid()}-{time.time_ns():x}"
        return rid


def _apps_script(interval_s: float, xml_every: int = 0) -> str:
    """The side loop: the processes every ``interval_s``; with ``xml_every`` > 0 (a host with
    MIG slices) also one ``-q -x`` every that many loops, for the slices' memory."""
    fields = ",".join(smi.APPS_FIELDS)
    xml = (
        f'if [ $((n % {xml_every})) -eq 0 ]; then echo "{XML_BEGIN}"; nvidia-smi -q -x; '
        f'echo "{XML_END} $?"; fi; '
        if xml_every > 0
        else ""
    )
    return (
        f"n=0; while :; do nvidia-smi --query-compute-apps={fields} --format=csv,noheader,nounits; "
        f'echo "{APPS_END} $?"; {xml}n=$((n + 1)); sleep {interval_s:g}; done'
    )


def _from_seq(argv: list[str]) -> int:
    if "--from-seq" in argv:
        i = argv.index("--from-seq")
        with contextlib.suppress(IndexError, ValueError):
            return max(0, int(argv[i + 1]))
    return 0


class SmiStream(LineStream):
    """The protocol lines of one ``attach``, made from nvidia-smi's output (see module)."""

    def __init__(self, inner: Transport, host: HostConfig, from_seq: int, why: str) -> None:
        self._inner = inner
        self._host = host
        self._seq = itertools.count(from_seq + 1)
        self._from_seq = from_seq
        self._why = why
        self._lock = threading.Lock()
        self._closed = False
        self._streams: list[LineStream] = []
        self._apps: queue.Queue[tuple[float, list[dict[str, Any]]]] = queue.Queue(maxsize=64)
        self._apps_thread: threading.Thread | None = None
        self._error: str | None = None
        self._query: LineStream | None = None
        # (GPU index, slot) -> memory used of each MIG slice, from the latest -q -x.
        self._slice_mem: dict[tuple[int, int], int | None] = {}

    # -- helpers ---------------------------------------------------------------------------

    def _line(self, obj: dict[str, Any]) -> bytes:
        return protocol.encode(obj).encode() + b"\n"

    def _error_line(self, message: str) -> bytes:
        self._error = message
        return self._line({"kind": protocol.KIND_ERROR, "message": message, "code": "nvidia-smi"})

    def _open(self, argv: list[str]) -> LineStream | None:
        s = self._inner.stream(argv)
        with self._lock:
            if self._closed:
                s.close()
                return None
            self._streams.append(s)
        return s

    def _probe(self) -> tuple[smi.Inventory, smi.FieldPlan, dict[int, smi.GpuRow]] | str:
        rc, out, err = self._inner.run(["nvidia-smi", "-q", "-x"], timeout=PROBE_TIMEOUT_S)
        if rc != 0:
            return f"nvidia-smi -q -x failed (exit status {rc}): {last_line(err or out)}"
        try:
            inv = smi.parse_inventory(out)
        except smi.SmiError as e:
            return str(e)
        if inv.slices():
            self._slice_mem = {(s.parent, s.slot): s.mem_used_bytes for s in inv.slices()}
            inv = self._named_slices(inv)
        plan = smi.FieldPlan.initial()
        # An older nvidia-smi refuses a field it does not know and prints nothing else: ask
        # again without it (or with its older name) until it answers.
        for _ in range(sum(len(names) for _, names, _ in smi.QUERY) + 1):
            argv = [
                "nvidia-smi",
                "--query-gpu=" + ",".join(plan.fields()),
                "--format=csv,noheader,nounits",
            ]
            rc, out, err = self._inner.run(argv, timeout=PROBE_TIMEOUT_S)
            if rc == 0:
                break
            text = (out + err).decode("utf-8", "replace")
            bad = smi.invalid_field(text)
            if bad is None or not plan.refuse(bad):
                return f"nvidia-smi --query-gpu failed (exit status {rc}): {last_line(text)}"
        else:
            return "nvidia-smi refused every query field"
        asm = smi.QueryAssembler(plan.columns(), [g.index for g in inv.gpus], smi.vgpu_guests(inv))
        first: dict[int, smi.GpuRow] = {}
        for raw in out.decode("utf-8", "replace").splitlines():
            for tick in asm.feed(raw):
                first.update(tick)
        first.update(asm.rows)
        return inv, plan, first

    def _named_slices(self, inv: smi.Inventory) -> smi.Inventory:
        """The MIG slices' UUIDs and profiles from ``nvidia-smi -L`` (-q -x has neither); the
        slices stay, unnamed, when it fails."""
        try:
            rc, out, _err = self._inner.run(["nvidia-smi", "-L"], timeout=PROBE_TIMEOUT_S)
        except TransportError:
            return inv
        if rc != 0:
            return inv
        return inv.named(smi.list_gpus(out.decode("utf-8", "replace")))

    def _take_xml(self, lines: list[str], status: str) -> None:
        if status != "0":
            return
        try:
            mem = smi.slice_memory("\n".join(lines))
        except smi.SmiError:
            return  # one bad read: the slices keep their last memory reading
        with self._lock:
            self._slice_mem.update(mem)

    def _read_apps(self, stream: LineStream, uuid_index: dict[str, int]) -> None:
        lines: list[str] = []
        xml: list[str] | None = None
        try:
            for raw in stream:
                text = raw.decode("utf-8", "replace").rstrip("\r\n")
                if xml is not None:
                    if text.startswith(XML_END):
                        self._take_xml(xml, text[len(XML_END) :].strip())
                        xml = None
                    else:
                        xml.append(text)
                elif text.startswith(XML_BEGIN):
                    xml = []
                elif text.startswith(APPS_END):
                    status = text[len(APPS_END) :].strip()
                    if status == "0":
                        entries = smi.apps_procs(lines, uuid_index)
                        with contextlib.suppress(queue.Full):
                            self._apps.put_nowait((time.time(), entries))
                    lines = []
                elif text.strip():
                    lines.append(text)
        except Exception:  # the process list is a side stream: the samples go on without it
            return

    # -- LineStream ------------------------------------------------------------------------

    def _lines(self) -> Iterator[bytes]:
        probed = self._probe()
        if isinstance(probed, str):
            yield self._error_line(probed)
            return
        inv, plan, first = probed
        interval = max(0.1, float(self._host.interval_s or 1.0))
        hello = smi.hello_obj(inv, plan, first, _run_id(self._host.name), interval, self._host.host)
        hello["limits"] = f"{smi.LIMITS} ({self._why})" if self._why else smi.LIMITS
        yield self._line(hello)
        if self._from_seq > 0:
            note = protocol_schema.event(
                protocol.EVENT_NOTE,
                None,
                None,
                "reconnected through nvidia-smi: what happened while "
                "disconnected was not recorded (there is no sampler ring on this host)",
            )
            yield self._line(protocol_schema.numbered(next(self._seq), time.time(), note))
        xml_every = math.ceil(smi.SLICE_MEMORY_EVERY_S / APPS_INTERVAL_S) if inv.slices() else 0
        apps = self._open(["/bin/sh", "-c", _apps_script(APPS_INTERVAL_S, xml_every)])
        if apps is not None:
            self._apps_thread = threading.Thread(
                target=self._read_apps,
                args=(apps, inv.uuid_index()),
                name=f"gpufleet-smi-apps-{self._host.name}",
                daemon=True,
            )
            self._apps_thread.start()
        argv = [
            "nvidia-smi",
            "--query-gpu=" + ",".join(plan.fields()),
            "--format=csv,noheader,nounits",
            "-lms",
            str(max(100, round(interval * 1000))),
        ]
        query = self._open(argv)
        if query is None:
            return
        self._query = query
        asm = smi.QueryAssembler(plan.columns(), [g.index for g in inv.gpus], smi.vgpu_guests(inv))
        slices = inv.slices()
        try:
            for raw in query:
                for tick in asm.feed(raw.decode("utf-8", "replace")):
                    rows = [smi.sample_row(tick[i]) for i in sorted(tick)]
                    rows.extend(self._slice_rows(slices))
                    t = time.time()
                    yield self._line(
                        {
                            "kind": protocol.KIND_SAMPLE,
                            "seq": next(self._seq),
                            "t": t,
                            "mono": time.monotonic(),
                            "gpus": rows,
                        }
                    )
                while True:
                    try:
                        t_apps, entries = self._apps.get_nowait()
                    except queue.Empty:
                        break
                    yield self._line(
                        {
                            "kind": protocol.KIND_PROCS,
                            "seq": next(self._seq),
                            "t": t_apps,
                            "procs": entries,
                        }
                    )
        finally:
            self.close()

    def _slice_rows(self, slices: list[smi.SmiSlice]) -> list[list[Any]]:
        with self._lock:
            mem = dict(self._slice_mem)
        return [smi.slice_row(s, mem.get((s.parent, s.slot))) for s in slices]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            streams, self._streams = self._streams, []
        for s in streams:
            with contextlib.suppress(Exception):
                s.close()

    def end_reason(self) -> str | None:
        if self._error is not None:
            return f"nvidia-smi: {self._error}"
        # Why the long-lived query ended (exit status, its last words); None when we ended it.
        reason = self._query.end_reason() if self._query is not None else None
        return f"nvidia-smi --query-gpu: {reason}" if reason else None


class CollectorTransport:
    """A transport that serves the sampler's commands from nvidia-smi where it must (see the
    module docstring); everything else goes to ``inner`` as it is."""

    def __init__(self, inner: Transport, host: HostConfig) -> None:
        self._inner = inner
        self._host = host
        self._smi_why: str | None = None  # set once this host is read through nvidia-smi

    @property
    def label(self) -> str:
        return self._inner.label

    @property
    def inner(self) -> Transport:
        return self._inner

    @property
    def via_smi(self) -> bool:
        return self._smi_why is not None

    def _has_smi(self) -> bool:
        try:
            rc, out, _ = self._inner.run(
                ["/bin/sh", "-c", "command -v nvidia-smi"], timeout=PROBE_TIMEOUT_S
            )
        except TransportError:
            return False
        return rc == 0 and bool(out.strip())

    def ensure_sampler(self) -> list[str]:
        if self._smi_why is not None:
            return [SMI_PREFIX]
        mode = self._host.collector
        if mode == "nvidia-smi":
            self._smi_why = "set in the host's settings"
            return [SMI_PREFIX]
        try:
            return self._inner.ensure_sampler()
        except TransportError as e:
            if e.kind != "no_python" or mode != "auto":
                raise
            if not self._has_smi():
                raise TransportError(
                    f"{e}. nvidia-smi is not on the host's PATH either, so it cannot be read "
                    "without python3",
                    kind=e.kind,
                    retryable=e.retryable,
                ) from e
            self._smi_why = "no python3 >= 3.8 on the host"
            return [SMI_PREFIX]

    def run(
        self, argv: list[str], stdin: bytes | None = None, timeout: float = 30.0
    ) -> tuple[int, bytes, bytes]:
        if argv[:1] != [SMI_PREFIX]:
            return self._inner.run(argv, stdin, timeout)
        cmd = argv[1] if len(argv) > 1 else ""
        if cmd == "stop":
            return 0, b"", b""  # no daemon here: the query processes end with the stream
        if cmd == "kill":
            msg = (
                "this host is read through nvidia-smi, which gives no process start time: a "
                "safe kill (PID and start time checked together) needs the sampler, i.e. "
                "python3 >= 3.8 on the host"
            )
            return 3, protocol.encode({"result": "refused", "message": msg}).encode(), b""
        if cmd == "check":
            # The health check's facts from one inventory (no Xids: nothing watched for them).
            rc, out, err = self._inner.run(["nvidia-smi", "-q", "-x"], timeout=PROBE_TIMEOUT_S)
            if rc != 0:
                return rc, out, err
            try:
                facts = smi.check_facts(out)
            except smi.SmiError as e:
                return 2, b"", str(e).encode()
            return 0, protocol.encode(dict(facts)).encode() + b"\n", b""
        why = f"{cmd} needs the sampler (python3 >= 3.8 on the host); {smi.LIMITS}"
        return 2, b"", why.encode()

    def stream(self, argv: list[str]) -> LineStream:
        if argv[:1] != [SMI_PREFIX]:
            return self._inner.stream(argv)
        return SmiStream(self._inner, self._host, _from_seq(argv), self._smi_why or "")

    def close(self) -> None:
        self._inner.close()


def with_collector(transport: Transport, host: HostConfig) -> Transport:
    """``transport`` as this host's collector setting wants it (see the module docstring)."""
    if host.collector == "sampler" or (host.transport == "local" and host.collector == "auto"):
        return transport
    return CollectorTransport(transport, host)
