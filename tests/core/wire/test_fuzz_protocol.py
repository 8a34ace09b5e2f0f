"""Mutated protocol lines (a fixed seed, a bounded number of rounds) through the decoder, the
live buffers, the history store, the rule engine and the CLI's replay and diagnose: no
exception anywhere, and every line is either a message or a counted bad line.

The streams start as the real sampler's (sim backend); each round mutates some of their
lines in the ways a broken or hostile sampler could: a leaf replaced by a value at or past
the edge of what the laptop can hold (2**63, ±1e308, a list, an object, a string, a huge
time), a key dropped, a kind swapped, the bytes cut, flipped or doubled.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import HostStatus
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history.store import Store
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import Message, StreamDecoder, VersionError

from tests.support.paths import SUPPORT
from tests.support.rules_support import sim_stream_lines
from tests.support.sampler_daemons import Recorder

# A NumPy warning here is a cast or an overflow on garbage (2**63 as a reason mask, a
# power limit of 1e-308): undefined results, as wrong as an exception.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SEED = 18
FAKE = str(SUPPORT / "fake_sampler.py")
ROUNDS = 80
# Bounded in rounds and in time: well under half a minute on a loaded two-core machine.
BUDGET_S = 25.0
SCENARIOS = ("ecc-xid", "foreign-process", "thermal-throttle-h100")

HOSTILE: tuple[Any, ...] = (
    2**63,
    2**64 - 1,
    -(2**63) - 1,
    -1,
    0,
    1e308,
    -1e308,
    1.5e19,
    -4e38,
    1e-308,
    True,
    None,
    [],
    [1, 2],
    [[0]],
    {},
    {"a": 1},
    "",
    "x",
    "\x1b[2J\x1b]52;c;aGk=\x07",
    "9" * 30,
    253_402_300_800.0,
)


def _refuse(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output (not JSON)")


def _leaves(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(_leaves(v, (*path, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(_leaves(v, (*path, i)))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    return obj


def mutate(rng: random.Random, line: bytes) -> bytes:
    how = rng.random()
    if how < 0.15:  # bytes: cut, flipped, doubled
        b = bytearray(line.rstrip(b"\n"))
        pick = rng.randrange(3)
        if pick == 0 and b:
            del b[rng.randrange(len(b)) :]
        elif pick == 1 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        else:
            b.extend(bytes(b))
        return bytes(b) + b"\n"
    obj = json.loads(line)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        paths = _leaves(obj)
        path = rng.choice(paths[1:] or paths)
        if rng.random() < 0.1 and path and isinstance(path[-1], str):
            parent = obj
            for k in path[:-1]:
                parent = parent[k]
            del parent[path[-1]]
        elif rng.random() < 0.05:
            obj["kind"] = rng.choice(("hello", "sample", "procs", "event", "links", "error", 7))
        else:
            obj = _set(obj, path, copy.deepcopy(rng.choice(HOSTILE)))
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def mutated_stream(rng: random.Random, base: tuple[bytes, ...]) -> list[bytes]:
    rate = rng.choice((0.05, 0.2, 0.5))
    out = [base[0]]  # the hello survives in most rounds, so that the rest is parsed too
    if rng.random() < 0.15:
        out = [mutate(rng, base[0])]
    out += [mutate(rng, ln) if rng.random() < rate else ln for ln in base[1:]]
    return out


@pytest.fixture(scope="module")
def bases() -> dict[str, tuple[bytes, ...]]:
    return {s: sim_stream_lines(s, 120, seed=3) for s in SCENARIOS}


def test_mutated_streams_raise_nothing_and_every_bad_line_is_counted(
    bases: dict[str, tuple[bytes, ...]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GPUFLEET_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GPUFLEET_DATA_DIR", str(tmp_path / "data"))
    rng = random.Random(SEED)
    store = Store(tmp_path / "fuzz.sqlite", flush_interval_s=0.2)
    live = LiveBuffers(window_s=600)
    deadline = time.monotonic() + BUDGET_S
    total_bad = total_lines = rounds = 0
    t_min, t_max = math.inf, -math.inf
    for r in range(ROUNDS):
        if time.monotonic() > deadline:
            break
        scenario = SCENARIOS[r % len(SCENARIOS)]
        lines = mutated_stream(rng, bases[scenario])
        host = f"h{r}"
        dec = StreamDecoder()
        msgs: list[Message] = []
        nonblank = 0
        version_error = False
        for ln in lines:
            if ln.strip():
                nonblank += 1
            try:
                m = dec.feed(ln)
            except VersionError:
                version_error = True
                continue
            if m is not None:
                msgs.append(m)
        # Every line is a message, a counted bad line or (a mutated protocol number) the
        # version error the stream is refused with.
        assert len(msgs) + dec.bad_lines + version_error == nonblank, (r, dec.last_error)
        total_bad += dec.bad_lines
        total_lines += nonblank
        for m in msgs:
            live.feed(host, m)
            store.write(host, m)
            t = getattr(m, "t", None)
            if isinstance(t, float):
                t_min, t_max = min(t_min, t), max(t_max, t)
        # Live reads over what was fed.
        for gpu in live.gpus(host):
            live.series(host, gpu, "util_gpu_pct")
        path = tmp_path / f"{host}.jsonl"
        path.write_bytes(b"".join(lines))
        for argv in (
            ["replay", str(path), "--format", "json"],
            ["replay", str(path)],
            ["diagnose", host, "--file", str(path), "--format", "json"],
            ["diagnose", host, "--file", str(path)],
        ):
            rc = main(argv)
            out = capsys.readouterr()
            assert rc in (0, 1, 3), (argv, rc, out.err[-2000:])
            assert "Traceback" not in out.err, (argv, out.err[-2000:])
            if rc == 0 and "json" in argv:
                json.loads(out.out, parse_constant=_refuse)
        rounds += 1
    store.flush()
    assert store.errors == 0, store.last_error
    # What was stored reads back.
    for host in store.hosts():
        store.time_range(host)
        list(store.samples(host, t_min, t_max + 1))
        store.events(host, t_min, t_max + 1)
        store.procs(host, t_min, t_max + 1)
    store.close()
    assert rounds >= 10, f"only {rounds} rounds in {BUDGET_S} s"
    assert total_bad > 0.02 * total_lines


def test_mutated_streams_over_a_live_session_are_counted_and_stored(
    bases: dict[str, tuple[bytes, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same mutations through a real HostSession (a fake sampler prints them): the
    session counts exactly the decoder's bad lines, never fails on an internal error, and
    what it publishes is stored without an error."""
    rng = random.Random(SEED + 1)
    store = Store(tmp_path / "live.sqlite", flush_interval_s=0.2)
    for r, scenario in enumerate(SCENARIOS):
        # The hello intact: a session that never gets one stops reading (by design).
        lines = [bases[scenario][0], *mutated_stream(rng, bases[scenario])[1:]]
        path = tmp_path / f"live{r}.jsonl"
        path.write_bytes(b"".join(lines))
        dec = StreamDecoder()
        for ln in lines:
            dec.feed(ln)
        monkeypatch.setenv("GPUFLEET_FAKE_LINES", str(path))
        host = HostConfig(name=f"fz{r}", transport="local", backend="sim")
        fleet = Fleet([host], opener=lambda h: LocalTransport(h, prefix=[sys.executable, FAKE,
                                                                       "lines"]))  # fmt: skip
        rec = Recorder(fleet.subscribe())
        fleet.start()
        try:
            session = fleet.session(host.name)
            assert session is not None
            rec.wait(lambda s=session, n=dec.bad_lines: s.bad_lines >= n, 60, "the bad lines")
            time.sleep(0.5)
            rec.pump()
            assert session.bad_lines == dec.bad_lines
            reasons = [e.reason or "" for e in rec.of(host.name, HostStatus)]
            assert not [x for x in reasons if "internal error" in x], reasons
        finally:
            fleet.stop()
        for m in rec.msgs(host.name):
            store.write(host.name, m)
    store.flush()
    assert store.errors == 0, store.last_error
    store.close()
