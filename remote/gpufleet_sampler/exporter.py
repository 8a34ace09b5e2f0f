"""``exporter``: serve the sampler's latest values to Prometheus, as dcgm-exporter would.

``python3 -m gpufleet_sampler exporter [--listen 127.0.0.1:9400]`` (or the zipapp) samples
with the same loop as ``stream`` and serves ``/metrics`` in the Prometheus text format under
dcgm-exporter's names and labels (``prometheus_names`` holds the table), plus gpufleet's own
metrics for what dcgm-exporter lacks.

A scrape never waits for NVML: the main thread samples on its own schedule and swaps the
latest tick in under a lock; an HTTP thread renders that tick (once per tick, cached) and
answers. A driver call that hangs therefore makes the data stale, visible in
``gpufleet_last_sample_timestamp_seconds``, but never a scrape time-out.

It binds to loopback by default: the metrics say what runs on the machine (process names and
users), and there is no authentication. Reach it through an SSH tunnel
(``ssh -L 9400:127.0.0.1:9400 host``) or bind it elsewhere on purpose.

Python 3.8, stdlib only.
"""

import argparse
import contextlib
import signal
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from types import FrameType
from typing import Any, Dict, List, Optional, Tuple

from gpufleet_sampler import metric_names as pn
from gpufleet_sampler import protocol, stream
from gpufleet_sampler.listen_address import LOOPBACK, parse_listen
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.metrics_http import make_server


class _Stop(Exception):
    """Raised from the signal handler to leave the sampling loop."""


def _on_signal(signum: int, frame: Optional[FrameType]) -> None:
    raise _Stop()


class MetricsState(object):
    """The latest tick of one sampler and its rendering, shared by the sampling thread
    (``set_hello`` / ``update``) and the HTTP threads (``render``)."""

    def __init__(self, hostname: Optional[str] = None) -> None:
        self._lock = threading.Lock()
        self._hostname_override = hostname
        self._hostname = hostname or socket.gethostname()
        self._hello: Dict[str, Any] = {}
        self._gpus: List[Dict[str, Any]] = []
        self._columns: Tuple[str, ...] = protocol.COLUMN_NAMES
        self._driver: Optional[str] = None
        self._rows: List[List[Any]] = []
        self._link_rows: List[List[Any]] = []  # the latest links message (every ~5 s)
        self._procs: List[pn.ProcRow] = []
        self._xids: Dict[int, Dict[int, Tuple[int, float]]] = {}
        self._last_t: Optional[float] = None
        self._version = 0
        self._cache_version = -1
        self._cache = b""
        self.renders = 0

    def set_hello(self, hello: Dict[str, Any]) -> None:
        host = hello.get("host") or {}
        cols = hello.get("columns") or []
        with self._lock:
            self._hello = hello
            self._gpus = list(hello.get("gpus") or [])
            self._columns = tuple(c["name"] if isinstance(c, dict) else str(c) for c in cols)
            self._driver = host.get("driver_version")
            if not self._hostname_override and host.get("hostname"):
                self._hostname = str(host["hostname"])
            self._version += 1

    def update(self, msgs: List[Dict[str, Any]]) -> None:
        """Take one tick's messages (``Sampler.step``'s output)."""
        rows: Optional[List[List[Any]]] = None
        procs: Optional[List[pn.ProcRow]] = None
        t: Optional[float] = None
        xids: List[Tuple[int, int, float]] = []
        link_rows: Optional[List[List[Any]]] = None
        for m in msgs:
            kind = m.get("kind")
            if kind == protocol.KIND_SAMPLE:
                rows, t = m.get("gpus") or [], m.get("t")
            elif kind == protocol.KIND_LINKS:
                link_rows = m.get("gpus") or []
            elif kind == protocol.KIND_PROCS:
                procs = [
                    (
                        p.get("gpu"),
                        p.get("pid"),
                        p.get("name"),
                        p.get("user"),
                        p.get("mem_bytes"),
                        p.get("sm_pct"),
                    )
                    for p in m.get("procs") or []
                ]
            elif kind == protocol.KIND_EVENT and m.get("type") == protocol.EVENT_XID:
                gpu, code = m.get("gpu"), m.get("code")
                if isinstance(gpu, int) and isinstance(code, int):
                    xids.append((gpu, code, float(m.get("t") or time.time())))
        with self._lock:
            if rows is not None:
                self._rows, self._last_t = rows, t
            if procs is not None:
                self._procs = procs
            if link_rows is not None:
                self._link_rows = link_rows
            for gpu, code, xt in xids:
                seen = self._xids.setdefault(gpu, {})
                count = seen.get(code, (0, 0.0))[0]
                seen[code] = (count + 1, xt)
            self._version += 1

    def render(self) -> bytes:
        """The exposition of the latest tick (rendered once per tick, then cached)."""
        with self._lock:
            if self._cache_version == self._version:
                return self._cache
            exp = pn.Exposition()
            pn.render_host(
                exp,
                self._hostname,
                self._gpus,
                self._columns,
                self._rows,
                self._procs,
                self._xids,
                self._driver,
            )
            pn.render_links(exp, self._hostname, self._gpus, self._link_rows, self._driver)
            pn.render_host_info(exp, self._hostname, self._hello, self._last_t)
            self._cache = exp.render().encode("utf-8")
            self._cache_version = self._version
            self.renders += 1
            return self._cache


def _say(message: str) -> None:
    sys.stderr.write("gpufleet_sampler: {}\n".format(message))
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    problem = stream.validate(args)
    if problem is not None:
        _say(problem)
        return stream.EXIT_USAGE
    try:
        host, port = parse_listen(args.listen)
    except ValueError as e:
        _say(str(e))
        return stream.EXIT_USAGE
    try:
        backend = stream.open_backend(args)
    except Exception as e:  # any backend failure must become one clear line, not a trace
        _say(stream.backend_error(args, e))
        return stream.EXIT_USAGE if isinstance(e, ValueError) else stream.EXIT_BACKEND
    old = {}
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            old[sig] = signal.signal(sig, _on_signal)
    state = MetricsState(args.hostname)
    server: Optional[ThreadingHTTPServer] = None  # set once it serves
    rc = 0
    try:
        sampler = Sampler(backend, args.interval, procs_interval=args.procs_interval)
        state.set_hello(sampler.hello())
        # One tick before serving, so the first scrape already has values.
        state.update(sampler.step(time.monotonic(), time.time()))
        try:
            srv = make_server(state, host, port)
        except OSError as e:
            _say("cannot listen on {}: {}".format(args.listen, e.strerror or e))
            return stream.EXIT_USAGE
        bound_host, bound_port = str(srv.server_address[0]), int(srv.server_address[1])
        shown = "[{}]".format(bound_host) if ":" in bound_host else bound_host
        if host not in LOOPBACK:
            _say(
                "warning: serving on {} without authentication: anyone who can reach it sees "
                "the GPUs' processes and users".format(host)
            )
        sys.stdout.write("serving http://{}:{}/metrics\n".format(shown, bound_port))
        sys.stdout.flush()
        threading.Thread(target=srv.serve_forever, name="exporter-http", daemon=True).start()
        server = srv
        _loop(sampler, state, args.interval)
    except (_Stop, KeyboardInterrupt):
        pass
    except Exception as e:  # a backend that breaks mid-run: one clear line, not a trace
        _say("the {} backend failed: {}".format(args.backend, e or e.__class__.__name__))
        rc = stream.EXIT_BACKEND
    finally:
        for sig in old:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, signal.SIG_IGN)
        if server is not None:
            server.shutdown()
            server.server_close()
        try:
            backend.close()
        finally:
            for sig, handler in old.items():
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(sig, handler)
    return rc


def _loop(sampler: Sampler, state: MetricsState, interval: float) -> None:
    """Tick on absolute deadlines (as ``stream`` does), skipping missed ones."""
    mono0 = time.monotonic()
    k = 1
    while True:
        deadline = mono0 + k * interval
        now = time.monotonic()
        if now < deadline:
            time.sleep(deadline - now)
            now = time.monotonic()
        elif now - deadline > interval:
            k = int((now - mono0) / interval)
        state.update(sampler.step(now, time.time()))
        k += 1
