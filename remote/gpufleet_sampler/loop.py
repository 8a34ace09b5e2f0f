"""The sampling loop's core: turns backend readings into protocol messages.

``Sampler`` owns the sequence counter (one counter shared by ``sample``, ``procs`` and
``event``, so a client can prove nothing was lost) and the process-list tier. It does not
own the clock: callers (``stream``, the daemon) pass the monotonic and wall times of each
tick, which is what lets ``--no-wait`` replay an hour of simulated time in seconds.

This is the hot path of a sampler that runs on a GPU someone is paying for: per tick it
builds one dict per message and hands the backend's rows through untouched (they are already
rounded lists), so the cost is the backend's plus one ``json.dumps`` by the caller.

Python 3.8, stdlib only.
"""

import os
import platform
import socket
import uuid
from typing import Any, Dict, List, Optional

from gpufleet_sampler import __version__, protocol, protocol_schema
from gpufleet_sampler.backends.base import Backend


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, "r") as f:
            return f.read()
    except OSError:
        return None


def _boot_time() -> Optional[int]:
    """``btime`` from /proc/stat: boot time in epoch seconds, so a client can turn a
    process's start ticks into a wall-clock time (start = btime + ticks / clk_tck)."""
    text = _read_text("/proc/stat")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("btime "):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def _mem_total_bytes() -> Optional[int]:
    text = _read_text("/proc/meminfo")
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def host_facts() -> Dict[str, Any]:
    """Facts about the instance that do not depend on the backend (the backend adds driver
    and CUDA versions). Read once per hello."""
    boot_id = (_read_text("/proc/sys/kernel/random/boot_id") or "").strip() or None
    try:
        clk_tck = int(os.sysconf("SC_CLK_TCK"))  # type: Optional[int]
    except (ValueError, OSError, AttributeError):
        clk_tck = None
    return {
        "hostname": socket.gethostname(),
        "boot_id": boot_id,
        "boot_time": _boot_time(),
        "clk_tck": clk_tck,
        "kernel": platform.release(),
        "os": platform.system(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "mem_total_bytes": _mem_total_bytes(),
        "pid": os.getpid(),
        "user": _user_name(),
    }


def _user_name() -> Optional[str]:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return None


class Sampler(object):
    """Builds the messages of one run: ``hello`` once, then ``step`` per tick."""

    def __init__(
        self,
        backend: Backend,
        interval: float,
        procs_interval: float = 2.0,
        run_id: Optional[str] = None,
        start_seq: int = 1,
    ) -> None:
        self.backend = backend
        self.interval = float(interval)
        self.procs_interval = float(procs_interval)
        self.run_id = run_id or uuid.uuid4().hex
        self._next_seq = int(start_seq)
        # None: the first step always sends a process list, so a client knows the processes
        # from the start of a run.
        self._last_procs_mono = None  # type: Optional[float]
        # Ticks dropped because one overran its interval (the caller counts them with
        # ``skip``); sent in each sample once non-zero.
        self.skipped = 0

    @property
    def next_seq(self) -> int:
        """The sequence number the next message will get."""
        return self._next_seq

    def hello(self) -> Dict[str, Any]:
        """The full ``hello`` message (it takes no sequence number: it is the stream's
        header, re-sent on every attach)."""
        info = self.backend.hello()
        host = host_facts()
        host.update(info.get("host") or {})
        return protocol_schema.hello(
            {
                "protocol": protocol.PROTOCOL_VERSION,
                "sampler_version": __version__,
                "run_id": self.run_id,
                "backend": self.backend.name,
                "scenario": getattr(self.backend, "scenario", None),
                "interval_s": self.interval,
                "procs_interval_s": self.procs_interval,
                "columns": protocol.hello_columns(),
                "link_columns": protocol.hello_link_columns(),
                "links_interval_s": float(
                    getattr(self.backend, "links_interval", protocol.LINKS_INTERVAL_S)
                ),
                "host": host,
                "gpus": info.get("gpus") or [],
                **(
                    {protocol.CPU_BUDGET_KEY: info[protocol.CPU_BUDGET_KEY]}
                    if info.get(protocol.CPU_BUDGET_KEY)
                    else {}
                ),
            }
        )

    def skip(self, ticks: int) -> None:
        """Count ``ticks`` deadlines the caller dropped because a tick overran: a late tick
        is never made up by a burst, and the client can tell a gap from a lost message."""
        if ticks > 0:
            self.skipped += int(ticks)

    def step(self, mono: float, wall: float) -> List[Dict[str, Any]]:
        """One tick: a ``sample``, a ``procs`` when ``procs_interval`` has elapsed, a ``links``
        when the backend read per-link NVLink values (its medium tier), then any ``event``s,
        each with the next sequence number."""
        t = round(wall, 3)
        seq = self._next_seq
        out = [
            {
                "kind": protocol.KIND_SAMPLE,
                "seq": seq,
                "t": t,
                "mono": round(mono, 3),
                "gpus": self.backend.tick(mono),
            }
        ]
        if self.skipped:
            out[0][protocol.SKIPPED_KEY] = self.skipped
        seq += 1
        last = self._last_procs_mono
        # A small slack so that a procs interval that is a multiple of the tick interval
        # is not missed by a float rounding and pushed one whole tick late.
        if last is None or mono - last >= self.procs_interval - 1e-6:
            self._last_procs_mono = mono
            out.append(
                {
                    "kind": protocol.KIND_PROCS,
                    "seq": seq,
                    "t": t,
                    "procs": self.backend.procs(mono),
                }
            )
            seq += 1
        link_rows = self.backend.links(mono)
        if link_rows:
            out.append({"kind": protocol.KIND_LINKS, "seq": seq, "t": t, "gpus": link_rows})
            seq += 1
        for ev in self.backend.events(mono):
            out.append(protocol_schema.numbered(seq, t, ev))
            seq += 1
        self._next_seq = seq
        return out

    def extra(self, msg: Dict[str, Any], wall: float) -> Dict[str, Any]:
        """A message made outside the tick (the watchdog's events), numbered in the same
        sequence as the tick's."""
        out = dict(msg)
        out["seq"] = self._next_seq
        out["t"] = round(wall, 3)
        self._next_seq += 1
        return out
