"""The sampler daemon: real detached processes in a temporary state dir (sim backend, 20 Hz),
attached to by real ``attach`` subprocesses; ring gaps and slow clients driven in-process."""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet_sampler import protocol, protocol_schema, state_dir
from gpufleet_sampler.daemon import client, server
from gpufleet_sampler.ring import Ring

from tests.support.nvml_fake import PROFILES, fake_env
from tests.support.paths import REMOTE
from tests.support.waiting import wait_until

INTERVAL = "0.05"
# A small scenario keeps the daemons cheap on a shared 2-core machine.
SCENARIO = "power-capped-4090"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REMOTE))
    env.update(extra)
    return env


def _common(sd: Path, seed: int = 0, scenario: str = SCENARIO) -> list[str]:
    return [
        "--backend",
        "sim",
        "--scenario",
        scenario,
        "--seed",
        str(seed),
        "--interval",
        INTERVAL,
        "--state-dir",
        str(sd),
    ]


def sampler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        capture_output=True,
        text=True,
        env=env or _env(),
        timeout=60,
    )


def _paths(sd: Path, seed: int = 0, scenario: str = SCENARIO) -> state_dir.Paths:
    return state_dir.Paths(str(sd), state_dir.daemon_key("sim", scenario, seed))


class Attach:
    """A real ``attach`` subprocess and a line reader with a deadline."""

    def __init__(self, sd: Path, *extra: str, seed: int = 0, env: dict[str, str] | None = None):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "gpufleet_sampler", "attach", *_common(sd, seed), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env or _env(),
        )
        assert self.p.stdout is not None
        self.fd = self.p.stdout.fileno()
        self.buf = b""
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)

    def line(self, timeout: float = 20.0) -> dict[str, Any] | None:
        """The next message, or None at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0, "no line from attach in time"
            if not self.sel.select(left):
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(raw)
        return msg

    def until_seq(self, last: int) -> list[dict[str, Any]]:
        """Messages up to and including seq ``last`` (hello and notes included)."""
        out = []
        while True:
            m = self.line()
            assert m is not None, "attach ended early"
            out.append(m)
            if "gap_from" not in m and isinstance(m.get("seq"), int) and m["seq"] >= last:
                return out

    def close(self) -> int:
        """Close stdin (the client goes away) and return attach's exit status."""
        assert self.p.stdin is not None
        self.p.stdin.close()
        rc = self.p.wait(timeout=20)
        assert self.p.stdout is not None and self.p.stderr is not None
        self.p.stdout.close()
        self.p.stderr.close()
        self.sel.close()
        return rc


def _data_seqs(msgs: list[dict[str, Any]]) -> list[int]:
    return [
        m["seq"] for m in msgs if m["kind"] in ("sample", "procs", "event") and "gap_from" not in m
    ]


@pytest.fixture
def sd(tmp_path: Path) -> Iterator[Path]:
    """A state dir; every daemon left in it is stopped afterwards."""
    d = tmp_path / "state"
    yield d
    for lock in d.glob("daemon-*.lock"):
        key = lock.name[len("daemon-") : -len(".lock")]
        p = state_dir.Paths(str(d), key)
        pid = state_dir.lock_holder(p)
        if pid:
            client.request(p, {"op": "stop"})
            try:
                wait_until(lambda p=p: state_dir.lock_holder(p) is None, 15, "daemon to stop")
            except AssertionError:
                os.kill(pid, 9)


def _status(sd: Path, seed: int = 0) -> dict[str, Any] | None:
    return client.request(_paths(sd, seed), {"op": "status"})


def test_daemon_start_attach_stop(sd: Path) -> None:
    r = sampler("daemon", *_common(sd), "--idle-exit", "60")
    assert r.returncode == 0, r.stderr
    first = json.loads(r.stdout)
    assert first["status"] == "started" and first["run_id"]
    assert oct(sd.stat().st_mode & 0o777) == "0o700"
    # A second start finds it and says so.
    r = sampler("daemon", *_common(sd), "--idle-exit", "60")
    assert r.returncode == 0
    again = json.loads(r.stdout)
    assert again["status"] == "running" and again["pid"] == first["pid"]

    a = Attach(sd, "--from-seq", "0")
    hello = a.line()
    assert hello is not None and hello["kind"] == "hello" and hello["run_id"] == first["run_id"]
    msgs = a.until_seq(30)
    assert _data_seqs(msgs) == list(range(1, 31))
    assert a.close() == 0

    p = _paths(sd)
    r = sampler("stop", *_common(sd))
    assert r.returncode == 0
    assert json.loads(r.stdout)["stopped"] is True
    assert state_dir.lock_holder(p) is None
    assert not os.path.exists(p.sock)
    state = json.loads(Path(p.state).read_text())
    assert state["running"] is False and state["last_seq"] >= 30
    r = sampler("stop", *_common(sd))
    assert r.returncode == 0 and json.loads(r.stdout)["stopped"] is False


def test_attach_from_seq_gets_exactly_the_later_seqs(sd: Path) -> None:
    assert sampler("daemon", *_common(sd)).returncode == 0
    wait_until(lambda: (_status(sd) or {}).get("last_seq", 0) >= 40, what="40 messages")
    a = Attach(sd, "--from-seq", "25")
    assert (a.line() or {})["kind"] == "hello"
    msgs = a.until_seq(80)
    # Contiguous from 26: the backlog and the live part join without loss or repeat.
    assert _data_seqs(msgs) == list(range(26, 81))
    assert not [m for m in msgs if "gap_from" in m]
    assert a.close() == 0


def test_two_clients_at_once(sd: Path) -> None:
    assert sampler("daemon", *_common(sd)).returncode == 0
    a, b = Attach(sd, "--from-seq", "0"), Attach(sd, "--from-seq", "5")
    ha, hb = a.line(), b.line()
    assert ha is not None and hb is not None and ha["run_id"] == hb["run_id"]
    wait_until(lambda: (_status(sd) or {}).get("clients") == 2, what="two clients")
    ma, mb = a.until_seq(60), b.until_seq(60)
    assert _data_seqs(ma) == list(range(1, 61))
    assert _data_seqs(mb) == list(range(6, 61))
    assert a.close() == 0
    # The other client is unaffected by the first leaving.
    mb2 = b.until_seq(70)
    assert _data_seqs(mb2) == list(range(61, 71))
    assert b.close() == 0
    wait_until(lambda: (_status(sd) or {}).get("clients") == 0, what="clients gone")


def test_an_early_client_of_this_run_gets_exactly_what_follows_its_seq(sd: Path) -> None:
    """A from-seq ahead of the ring's head with this run's id: nothing is backfilled, the
    live part starts right after N (the client is early, not from another run)."""
    run_id = json.loads(sampler("daemon", *_common(sd)).stdout)["run_id"]
    head = (_status(sd) or {}).get("last_seq") or 0
    n = head + 40
    a = Attach(sd, "--from-seq", str(n), "--run-id", run_id)
    hello = a.line()
    assert hello is not None and hello["run_id"] == run_id
    msgs = a.until_seq(n + 10)
    assert _data_seqs(msgs) == list(range(n + 1, n + 11))
    assert not [m for m in msgs if "gap_from" in m]
    assert a.close() == 0


def test_a_client_of_another_run_gets_everything_with_a_note(sd: Path) -> None:
    assert sampler("daemon", *_common(sd)).returncode == 0
    wait_until(lambda: (_status(sd) or {}).get("last_seq", 0) >= 10, what="10 messages")
    # Named as another run, or far ahead of anything this run numbered without a name.
    for extra in (("--run-id", "0" * 32), ()):
        n = 10**6
        a = Attach(sd, "--from-seq", str(n), *extra)
        a.line()
        note = a.line()
        assert note is not None and note["type"] == "note" and note["reason"] == "restart"
        assert note["seq"] == n
        first = a.line()
        assert first is not None and first["seq"] == 1
        assert a.close() == 0


def test_restarted_daemon_has_new_run_and_continues_seq(sd: Path) -> None:
    first = json.loads(sampler("daemon", *_common(sd)).stdout)
    a = Attach(sd, "--from-seq", "0")
    a.line()
    a.until_seq(20)
    a.close()
    assert sampler("stop", *_common(sd)).returncode == 0
    last = json.loads(Path(_paths(sd).state).read_text())["last_seq"]

    second = json.loads(sampler("daemon", *_common(sd)).stdout)
    assert second["run_id"] != first["run_id"]
    assert second["pid"] != first["pid"]
    # A client that had everything of the first run: nothing is missing, new run.
    a = Attach(sd, "--from-seq", str(last))
    hello = a.line()
    assert hello is not None and hello["run_id"] == second["run_id"]
    msgs = a.until_seq(last + 10)
    assert _data_seqs(msgs) == list(range(last + 1, last + 11))
    a.close()
    # A client that was behind: told that the restart lost its messages.
    a = Attach(sd, "--from-seq", str(last - 5))
    a.line()
    note = a.line()
    assert note is not None
    assert note["kind"] == "event" and note["type"] == "note" and note["code"] is None
    assert note["reason"] == "restart"
    assert (note["gap_from"], note["gap_to"]) == (last - 4, last)
    assert protocol_schema.event_problems(note) == []
    nxt = a.line()
    assert nxt is not None and nxt["seq"] == last + 1
    a.close()


def test_idle_exit_after_last_client(sd: Path) -> None:
    r = sampler("daemon", *_common(sd), "--idle-exit", "2.0")
    assert r.returncode == 0
    p = _paths(sd)
    # A loaded machine may take longer than the idle limit to start the attach process, and
    # the daemon rightly leaves before it connects: --start then starts it again, and connects
    # as soon as it answers, so the verdict does not depend on how fast this machine is.
    a = Attach(sd, "--from-seq", "0", "--start", "--idle-exit", "2.0")
    a.line()
    # 100 messages at 20 Hz take about 5 s, longer than the idle limit: an attached client
    # keeps the daemon alive.
    msgs = a.until_seq(100)
    assert len(_data_seqs(msgs)) == 100
    assert state_dir.lock_holder(p) is not None
    assert a.close() == 0
    wait_until(lambda: state_dir.lock_holder(p) is None, 20, "the idle daemon to exit")
    assert not os.path.exists(p.sock)


def test_attach_start_launches_a_daemon(sd: Path) -> None:
    a = Attach(sd, "--from-seq", "0", "--start", "--idle-exit", "1.5")
    hello = a.line()
    assert hello is not None and hello["kind"] == "hello"
    assert _data_seqs(a.until_seq(10)) == list(range(1, 11))
    assert a.close() == 0
    # It stays behind, detached, for the next attach; then leaves by the idle limit given.
    wait_until(lambda: (_status(sd) or {}).get("clients") == 0, what="the daemon alone")
    wait_until(lambda: state_dir.lock_holder(_paths(sd)) is None, 20, "the idle daemon to exit")


def test_attach_without_daemon_says_so(sd: Path) -> None:
    r = sampler("attach", *_common(sd), "--from-seq", "0")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    err = json.loads(lines[0])
    assert err["kind"] == "error" and err["code"] == "no_daemon"
    assert "Traceback" not in r.stderr


def test_stopping_the_daemon_ends_attached_clients(sd: Path) -> None:
    assert sampler("daemon", *_common(sd)).returncode == 0
    a = Attach(sd, "--from-seq", "0")
    a.line()
    a.until_seq(5)
    assert sampler("stop", *_common(sd)).returncode == 0
    last = None
    while True:
        m = a.line()
        if m is None:
            break
        last = m
    assert last is not None and last["kind"] == "error" and last["code"] == "daemon_exit"
    assert a.p.wait(timeout=10) == 1
    a.close()


def test_bad_arguments_are_one_line(sd: Path) -> None:
    r = sampler("daemon", *_common(sd, scenario="no-such-scenario"))
    assert r.returncode != 0
    assert "no-such-scenario" in r.stderr and "Traceback" not in r.stderr
    r = sampler("daemon", *_common(sd), "--idle-exit", "0")
    assert r.returncode == 2 and "--idle-exit" in r.stderr
    # attach --start relays the daemon's own reason as one protocol error line.
    r = sampler("attach", *_common(sd, scenario="no-such-scenario"), "--start")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    err = json.loads(lines[0])
    assert err["kind"] == "error" and "no-such-scenario" in err["message"]


def test_state_file_reports_xids_for_check(sd: Path) -> None:
    # ecc-xid ~1400x fast: Xid 48 after 0.88 s, Xid 79 10 ms later.
    env = _env(GPUFLEET_SIM_TIME_SCALE="0.0007")
    r = sampler("daemon", *_common(sd, scenario="ecc-xid"), env=env)
    assert r.returncode == 0, r.stderr

    def xids() -> list[int] | None:
        st = state_dir.read_state("sim", "ecc-xid", 0, str(sd))
        codes = [x["code"] for x in (st or {}).get("xids", [])]
        return codes if 79 in codes else None

    assert wait_until(xids, what="Xid 79 in the state file") == [48, 79]
    st = state_dir.read_state("sim", "ecc-xid", 0, str(sd))
    assert st is not None and st["running"] is True and st["xid_count"] == 2
    # ``check`` of the same identity takes them from the daemon.
    r = sampler("check", *_common(sd, scenario="ecc-xid"), env=env)
    assert r.returncode == 0, r.stderr
    xid = json.loads(r.stdout)["xid"]
    assert xid["seen"] is True and xid["source"] == "daemon"
    assert [e["code"] for e in xid["events"]] == [48, 79]
    sampler("stop", *_common(sd, scenario="ecc-xid"))
    assert state_dir.read_state("sim", "ecc-xid", 0, str(sd)) is None
    r = sampler("check", *_common(sd, scenario="ecc-xid"), env=env)
    assert json.loads(r.stdout)["xid"]["seen"] == "unknown"
    # A restarted daemon (same boot) still knows them.
    assert sampler("daemon", *_common(sd, scenario="ecc-xid"), env=env).returncode == 0
    st = state_dir.read_state("sim", "ecc-xid", 0, str(sd))
    assert st is not None and [x["code"] for x in st["xids"]][:2] == [48, 79]


# ---- in-process: the daemon's loop driven tick by tick ------------------------------------


@pytest.fixture
def inproc(sd: Path) -> Iterator[server.Daemon]:
    sd.mkdir(mode=0o700)
    args = argparse.Namespace(
        command="daemon",
        backend="sim",
        scenario=SCENARIO,
        seed=99,
        interval=0.05,
        procs_interval=0.5,
        idle_exit=60.0,
        state_dir=str(sd),
        foreground=True,
    )
    p = state_dir.paths_for(args)
    fd = server._take_lock(p)
    assert fd is not None
    d = server.Daemon(args, p, fd)
    try:
        d.open()
        yield d
    finally:
        d.close()
        os.close(fd)


def _pump(d: server.Daemon) -> None:
    for key, mask in d.sel.select(0):
        d.handle(key, mask)


def _client(d: server.Daemon, from_seq: int, run_id: str | None = None) -> socket.socket:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(d.p.sock)
    req: dict[str, Any] = {"op": "attach", "from_seq": from_seq}
    if run_id is not None:
        req["run_id"] = run_id
    c.sendall(json.dumps(req).encode() + b"\n")
    c.setblocking(False)
    return c


def _drain(c: socket.socket) -> bytes:
    out = b""
    while True:
        try:
            chunk = c.recv(1 << 16)
        except BlockingIOError:
            return out
        if not chunk:
            return out
        out += chunk


def test_attach_older_than_ring_gets_thinned_history_and_gap_note(
    inproc: server.Daemon,
) -> None:
    d = inproc
    d.ring = Ring(interval=0.05, raw_samples=20, downsample=5)
    for k in range(200):
        d.tick(1000.0 + k * 0.05, 1.7e9 + k * 0.05)
    raw_first = d.ring.raw_first_seq()
    assert raw_first is not None and raw_first > 100
    c = _client(d, 0)
    buf = b""
    expected = 2 + len(d.ring.since(0)[0])
    deadline = time.monotonic() + 20
    while buf.count(b"\n") < expected and time.monotonic() < deadline:
        _pump(d)
        buf += _drain(c)
    c.close()
    msgs = [json.loads(x) for x in buf.splitlines()]
    assert msgs[0]["kind"] == "hello"
    note = msgs[1]
    assert note["type"] == "note" and note["reason"] == "ring"
    assert (note["gap_from"], note["gap_to"]) == (1, raw_first - 1)
    assert protocol_schema.event_problems(note) == []
    seqs = [m["seq"] for m in msgs[2:]]
    assert seqs == sorted(seqs)
    assert [s for s in seqs if s >= raw_first] == list(range(raw_first, d.ring.last_seq + 1))
    assert len([s for s in seqs if s < raw_first]) > 10


def test_slow_client_is_dropped_and_sampling_goes_on(
    inproc: server.Daemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = inproc
    monkeypatch.setattr(server, "CLIENT_LIVE_LIMIT", 16 << 10)
    slow = _client(d, 0)
    fast = _client(d, 0)
    _pump(d)
    _pump(d)
    assert len(d.clients) == 2
    got = b""
    n_ticks = 0
    # Until the slow client's socket buffer and then its queue overflow.
    while len(d.clients) == 2 and n_ticks < 20000:
        d.tick(1000.0 + n_ticks * 0.05, 1.7e9 + n_ticks * 0.05)
        n_ticks += 1
        _pump(d)
        got += _drain(fast)
    assert len(d.clients) == 1, "the slow client was never dropped"
    for k in range(20):
        d.tick(2000.0 + k * 0.05, 1.8e9 + k * 0.05)
        _pump(d)
        got += _drain(fast)
    msgs = [json.loads(x) for x in got.splitlines()]
    seqs = [m["seq"] for m in msgs[1:]]
    assert seqs == list(range(1, d.ring.last_seq + 1))
    # The slow one reads what was sent before the drop, then EOF.
    slow.setblocking(True)
    slow.settimeout(10)
    while slow.recv(1 << 16):
        pass
    slow.close()
    fast.close()


def test_a_watch_links_request_is_answered(sd: Path) -> None:
    """The laptop's per-link view asks the daemon for per-link NVLink values at their full
    rate (the sim reads them every 5 s anyway; the nvml backend's plan may not)."""
    assert sampler("daemon", *_common(sd)).returncode == 0
    p = _paths(sd)
    assert client.request(p, {"op": "watch_links", "seconds": 60}) == {"ok": True}
    assert client.request(p, {"op": "watch_links", "seconds": "soon"}) == {"ok": True}
    a = Attach(sd, "--from-seq", "0")
    assert (a.line() or {})["kind"] == "hello"
    assert a.close() == 0


def test_an_attached_client_asks_for_per_link_values_on_its_stdin(sd: Path) -> None:
    """``attach --watch-links S`` asks at once; the laptop renews with request lines on the
    attach's stdin (its SSH channel), which pass on to the daemon. Anything else there
    changes nothing: an attached client cannot stop the daemon."""
    assert sampler("daemon", *_common(sd)).returncode == 0
    p = _paths(sd)

    def watched() -> float:
        return float((client.request(p, {"op": "status"}) or {})["links_watched_s"])

    assert watched() == 0.0
    a = Attach(sd, "--from-seq", "0", "--watch-links", "30")
    try:
        assert (a.line() or {})["kind"] == "hello"
        assert 20.0 < watched() <= 30.0
        assert a.p.stdin is not None
        a.p.stdin.write(b'{"op": "watch_links", "seconds": 300}\n')
        a.p.stdin.flush()
        wait_until(lambda: watched() > 200.0, what="the renewed watch")
        a.p.stdin.write(b'not json\n{"op": "stop"}\n{"op": "watch_links", "seconds": 1e9}\n')
        a.p.stdin.flush()
        wait_until(lambda: watched() > 500.0, what="the capped watch")
        assert watched() <= protocol.WATCH_LINKS_MAX_S
        # Still streaming, still the same daemon.
        assert (a.line() or {}).get("kind") in ("sample", "procs", "event", "links")
        assert (client.request(p, {"op": "status"}) or {}).get("ok") is True
    finally:
        assert a.close() == 0


def test_an_nvml_daemon_sends_its_settled_cpu_plan_on_attach(sd: Path) -> None:
    """The plan is provisional in the hello made at start (GPM not yet timed); the hello an
    attach gets once the daemon has ticked a few times carries the settled one."""
    env = fake_env(PROFILES / "h100x8.json", tick_s=0.2)
    env["GPUFLEET_FAKE_NVML_COST"] = "h200"
    r = sampler("daemon", "--backend", "nvml", "--interval", "0.2", "--state-dir", str(sd), env=env)
    assert r.returncode == 0, r.stderr
    p = state_dir.Paths(str(sd), state_dir.daemon_key("nvml", None, 0))
    wait_until(
        lambda: (client.request(p, {"op": "status"}) or {}).get("last_seq", 0) >= 10,
        what="10 messages",
    )
    hello = client.request(p, {"op": "attach", "from_seq": 0})
    assert hello is not None and hello["kind"] == "hello"
    plan = hello["cpu_budget"]
    assert plan["settled"] is True and plan["within"] is True
    assert hello["gpus"][0]["gpm_throughput"] == ["nvlink", "pcie"]


def test_a_client_attached_before_the_plan_settled_gets_the_settled_hello(sd: Path) -> None:
    """The laptop's first attach to a fresh host comes before the sampler has timed GPM: its
    hello's plan is provisional. Once it settles the daemon sends the new hello on the same
    stream (no seq: the numbering goes on), so the laptop shows the real plan without a
    re-attach."""
    # 1 s ticks: the plan settles after its third (GPM timed), well after attach connects.
    env = fake_env(PROFILES / "h100x8.json", tick_s=1.0)
    env["GPUFLEET_FAKE_NVML_COST"] = "h200"
    base = ["--backend", "nvml", "--interval", "1", "--state-dir", str(sd)]
    p = subprocess.Popen(
        [sys.executable, "-m", "gpufleet_sampler", "attach", *base, "--from-seq", "0", "--start"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert p.stdout is not None
        hellos: list[dict[str, Any]] = []
        seqs: list[int] = []
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            assert line, "attach ended early"
            m = json.loads(line)
            if m["kind"] == "hello":
                hellos.append(m)
                if m["cpu_budget"]["settled"]:
                    break
            elif isinstance(m.get("seq"), int):
                seqs.append(m["seq"])
        assert len(hellos) >= 1 and hellos[-1]["cpu_budget"]["settled"] is True
        assert hellos[-1]["run_id"] == hellos[0]["run_id"]
        # The first hello was the provisional one, sent at once; the settled one came later,
        # in the stream, between numbered messages that go on without a gap.
        assert hellos[0]["cpu_budget"]["settled"] is False and len(hellos) >= 2
        assert seqs == list(range(1, len(seqs) + 1))
    finally:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=20)
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        p.stderr.close()
        client.request(
            state_dir.Paths(str(sd), state_dir.daemon_key("nvml", None, 0)), {"op": "stop"}
        )


def test_an_early_attach_before_the_first_tick_is_not_taken_for_another_run(
    inproc: server.Daemon,
) -> None:
    """What made ``test_two_clients_at_once`` flaky on a loaded machine, without the race:
    ``--from-seq 5`` arrives before the daemon has numbered anything. It is an early client
    of this run (with its run id, or naming none): no backfill and no note, then seq 6 on."""
    d = inproc
    clients = [_client(d, 5), _client(d, 5, d.sampler.run_id)]
    for _ in range(3):
        _pump(d)
    for k in range(20):
        d.tick(1000.0 + k * 0.05, 1.7e9 + k * 0.05)
        _pump(d)
    for c in clients:
        msgs = [json.loads(x) for x in _drain(c).splitlines()]
        c.close()
        assert msgs[0]["kind"] == "hello"
        assert not [m for m in msgs if "gap_from" in m]
        seqs = [m["seq"] for m in msgs[1:]]
        assert seqs and seqs == list(range(6, seqs[-1] + 1)), seqs
