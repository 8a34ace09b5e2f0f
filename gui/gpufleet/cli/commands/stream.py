"""``gpufleet stream HOST``: print a host's live samples (and its backfill) to stdout.

``--format jsonl`` prints the protocol's own lines, hello first, so the output can be replayed;
``--format table`` one line per GPU per sample. Status changes and gaps go to stderr. Every
message is also recorded into the history store (the demo's own store for demo hosts), unless
the window or ``serve`` runs on that store: it records every configured (or demo) host
already, from the same sampler, and a second writer would store each sample twice.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import sys
import time
from typing import IO, Any

from gpufleet.cli import argtypes
from gpufleet.cli.demodaemons import demo_daemons_stopped
from gpufleet.cli.errors import EXIT_CONNECT, EXIT_OK, CliError
from gpufleet.cli.hostarg import (
    add_live_host_args,
    exit_code_for,
    hostkey_hint,
    resolve_host,
    unknown_key_callback,
)
from gpufleet.core.config import instance_lock, paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import GAVE_UP_STATES, RECONNECTING, STREAMING
from gpufleet.core.fleet.fleet import Fleet, HostGap, HostMessage, HostStatus
from gpufleet.core.history.store import Store
from gpufleet.core.text.sampler_cost import sampler_cost_text
from gpufleet.core.text.sanitize import clean
from gpufleet.core.wire.encode import encode_line
from gpufleet.core.wire.messages import Hello, Message, Sample

_TABLE_COLUMNS = (
    ("util_gpu_pct", "util%", "{:>5.0f}"),
    ("sm_clock_mhz", "SM MHz", "{:>6.0f}"),
    ("temp_gpu_c", "temp°C", "{:>6.0f}"),
    ("power_w", "power W", "{:>7.1f}"),
    ("power_limit_w", "limit W", "{:>7.0f}"),
    ("mem_used_bytes", "mem GiB", "{:>7.1f}"),
    ("clock_reasons", "reasons", "{:>7}"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stream",
        help="print a host's samples as they come (jsonl: the protocol's own lines)",
        description="Stream a host's GPU samples to stdout: the sampler's ring first (what it "
        "kept while nobody listened), then live. HOST is a configured host name or a demo "
        "host (demo:a100-train, demo:thermal-throttle-h100, ...).",
    )
    add_live_host_args(p)
    p.add_argument("--seconds", type=argtypes.positive, default=None, help="stop after N seconds")
    p.add_argument("--format", choices=("jsonl", "table"), default="jsonl")
    p.add_argument("--no-record", action="store_true", help="do not record into the history store")
    p.set_defaults(func=run)


def _fmt(value: Any, spec: str, metric: str) -> str:
    if value is None:
        return f"{'-':>{len(spec.format(0))}}"
    if metric == "mem_used_bytes":
        value = value / 2**30
    if metric == "clock_reasons":
        return spec.format(hex(int(value)))
    return spec.format(value)


def _table_lines(host: str, s: Sample) -> list[str]:
    stamp = time.strftime("%H:%M:%S", time.localtime(s.t))
    out = []
    for r in s.rows:
        gpu = r[0]
        cells = [_fmt(s.value(int(gpu or 0), m), spec, m) for m, _, spec in _TABLE_COLUMNS]
        out.append(f"{stamp} {s.seq:>7} {host:<14} {gpu!s:>3} " + " ".join(cells))
    return out


def _table_header() -> str:
    heads = " ".join(f"{h:>{len(spec.format(0))}}" for _, h, spec in _TABLE_COLUMNS)
    return f"{'time':<8} {'seq':>7} {'host':<14} gpu " + heads


def _open_store(demo: bool) -> Any:
    holder = instance_lock.holder(instance_lock.fleet_data_dir(demo))
    if holder is not None:
        print(
            f"gpufleet: not recording history: {instance_lock.holder_name(holder)} "
            "records this host already",
            file=sys.stderr,
        )
        return None
    try:
        return Store(paths.history_file(demo))
    except Exception as e:  # a broken history file must not stop the live view
        print(f"gpufleet: not recording history: {e}", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> int:
    host = resolve_host(args.host)
    fleet = Fleet([host], on_unknown_key=unknown_key_callback(args.accept_new))
    store = None if args.no_record else _open_store(fleet.demo)
    out: IO[bytes] = sys.stdout.buffer
    events = fleet.subscribe()
    if args.format == "table":
        out.write((_table_header() + "\n").encode())
    with demo_daemons_stopped(fleet):
        fleet.start()
        got_data, last_status = _pump(args, fleet, events, store, out, host)
    if not got_data:
        why = last_status.reason if last_status is not None and last_status.reason else "no data"
        raise CliError(
            f"{host.name}: nothing received within {args.seconds:g} s: {why}", EXIT_CONNECT
        )
    return EXIT_OK


def _pump(
    args: argparse.Namespace,
    fleet: Fleet,
    events: Any,
    store: Any,
    out: IO[bytes],
    host: HostConfig,
) -> tuple[bool, HostStatus | None]:
    """Print (and record) what arrives until the time is up; → (any data?, last status)."""
    deadline = time.monotonic() + args.seconds if args.seconds is not None else None
    got_data = False
    last_status: HostStatus | None = None
    try:
        while deadline is None or time.monotonic() < deadline:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            try:
                ev = events.get(timeout=wait)
            except queue.Empty:
                continue
            if isinstance(ev, HostMessage):
                got_data = True
                _emit(out, args.format, ev.host, ev.msg)
                if store is not None:
                    store.write(ev.host, ev.msg)
            elif isinstance(ev, HostStatus):
                last_status = ev
                if ev.state in GAVE_UP_STATES:
                    raise CliError(
                        f"{host.name}: {ev.reason}{hostkey_hint(ev.kind)}", exit_code_for(ev.kind)
                    )
                if ev.state == RECONNECTING or (ev.state == STREAMING and ev.reason):
                    # A reason may quote the sampler's stderr or a bad line: escaped.
                    why = f": {clean(ev.reason)}" if ev.reason else ""
                    print(f"gpufleet: {ev.host} {ev.state}{why}", file=sys.stderr)
            elif isinstance(ev, HostGap):
                print(
                    f"gpufleet: {ev.host}: gap after seq {ev.after_seq}: {clean(ev.reason)}",
                    file=sys.stderr,
                )
    except BrokenPipeError:
        # `gpufleet stream HOST | head`: the reader left; that is a normal end. Point stdout
        # at /dev/null so that the interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return True, last_status
    finally:
        fleet.stop()
        if store is not None:
            store.close()
        with contextlib.suppress(BrokenPipeError, ValueError):
            out.flush()
    return got_data, last_status


def _emit(out: IO[bytes], fmt: str, host: str, msg: Message) -> None:
    if fmt == "jsonl":
        out.write(encode_line(msg))
        out.flush()
        return
    if isinstance(msg, Sample):
        out.write(("\n".join(_table_lines(host, msg)) + "\n").encode())
        out.flush()
    elif isinstance(msg, Hello):
        # Versions and GPU names come from the instance: escaped for the terminal.
        names = [clean(g.name) for g in msg.gpus]
        gpus = ", ".join(f"{names.count(n)} × {n}" for n in dict.fromkeys(names))
        version = f"{clean(msg.sampler_version)} ({clean(msg.backend)})"
        print(f"gpufleet: {host}: sampler {version}, {gpus}", file=sys.stderr)
        cost = sampler_cost_text(msg.raw)
        if cost:
            print(f"gpufleet: {host}: {clean(cost)}", file=sys.stderr)
