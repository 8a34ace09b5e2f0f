"""The `gpufleet stream`, `gpufleet kill` and hidden `gpufleet _sampler` commands, run as real
subprocesses against the demo fleet (local sim daemons, in the test's own data dir)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE
from gpufleet.core.config import instance_lock, paths
from gpufleet.core.fleet.demo import demo_host, demo_state_dir
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.history.audit import read_audit
from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import Hello, Links, Procs, Sample, StreamDecoder

from tests.support.cli_run import gpufleet
from tests.support.sampler_daemons import Recorder, contiguous, stop_daemons


@pytest.fixture
def demo_daemons() -> Iterator[None]:
    yield
    from gpufleet.core.fleet.demo import demo_hosts

    stop_daemons(demo_hosts(), str(demo_state_dir()))


def one_line_error(p: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_stream_jsonl_prints_replayable_protocol_lines_and_records_history(
    demo_daemons: None,
) -> None:
    p = gpufleet("stream", "demo:a100-train", "--seconds", "4", "--format", "jsonl")
    assert p.returncode == EXIT_OK, p.stderr
    dec = StreamDecoder()
    msgs = [m for m in (dec.feed(line) for line in p.stdout.splitlines()) if m is not None]
    assert dec.bad_lines == 0
    assert isinstance(msgs[0], Hello) and len(msgs[0].gpus) == 8
    samples = [m for m in msgs if isinstance(m, Sample)]
    assert len(samples) >= 2
    assert contiguous([m.seq for m in msgs if isinstance(m, (Sample, Procs, Links))])
    with Store(paths.history_file(demo=True)) as store:
        assert "a100-train" in store.hosts()
    assert not paths.history_file(demo=False).exists()


@pytest.mark.skipif(not instance_lock.LOCKS_SUPPORTED, reason="no flock here")
def test_stream_beside_a_window_on_the_same_store_prints_but_does_not_record_twice(
    demo_daemons: None,
) -> None:
    # The window records every demo host from the same samplers already: a second writer
    # would store each sample twice.
    with instance_lock.for_fleet(True, instance_lock.ROLE_WINDOW):
        p = gpufleet("stream", "demo:a100-train", "--seconds", "3", "--format", "jsonl")
    assert p.returncode == EXIT_OK, p.stderr
    dec = StreamDecoder()
    msgs = [dec.feed(line) for line in p.stdout.splitlines()]
    assert any(isinstance(m, Sample) for m in msgs) and dec.bad_lines == 0
    err = p.stderr
    assert f"not recording history: the gpufleet window (pid {os.getpid()}, since " in err, err
    hist = paths.history_file(demo=True)
    if hist.exists():
        with Store(hist) as store:
            assert "a100-train" not in store.hosts()


def test_stream_table_shows_one_row_per_gpu(demo_daemons: None) -> None:
    p = gpufleet("stream", "demo:power-capped-4090", "--seconds", "2.5", "--format", "table")
    assert p.returncode == EXIT_OK, p.stderr
    rows = [ln for ln in p.stdout.splitlines() if " 4090-x2 " in ln]
    assert len(rows) >= 2 and len(rows) % 2 == 0  # two GPUs per sample


def test_unknown_host_is_one_clear_line() -> None:
    p = gpufleet("stream", "nosuchhost", "--seconds", "1")
    assert p.returncode == EXIT_NOT_FOUND
    assert "no host named 'nosuchhost'" in one_line_error(p)
    p = gpufleet("kill", "demo:nosuch", "1", "--yes")
    assert p.returncode == EXIT_NOT_FOUND
    assert "demo:a100-train" in one_line_error(p)
    # A demo host's name without its prefix (as the window shows it): the line names it.
    p = gpufleet("check", "a100-ecc")
    assert p.returncode == EXIT_NOT_FOUND
    assert "the demo fleet has one: demo:a100-ecc" in one_line_error(p)


def test_kill_asks_needs_yes_without_a_tty_and_ends_the_process(demo_daemons: None) -> None:
    host = demo_host("demo:foreign-process")
    assert host is not None
    fleet = Fleet([host])
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: any(m.procs for m in rec.msgs(host.name, Procs)), 30, "processes")
    finally:
        fleet.stop()
    proc = next(m for m in rec.msgs(host.name, Procs) if m.procs).procs[-1]

    p = gpufleet("kill", f"demo:{host.name}", str(proc.pid))
    assert p.returncode == EXIT_USAGE
    assert "pass --yes" in p.stderr and "Traceback" not in p.stderr
    assert f"PID:     {proc.pid}" in p.stderr  # it showed what it would kill

    p = gpufleet("kill", f"demo:{host.name}", "999999999", "--yes")
    assert p.returncode == EXIT_NOT_FOUND
    assert "is not using a GPU" in p.stderr

    p = gpufleet("kill", f"demo:{host.name}", str(proc.pid), "--yes", "--grace", "5")
    assert p.returncode == EXIT_OK, p.stderr
    assert "ended" in p.stdout
    log = read_audit(demo=True)
    assert log[-1]["pid"] == proc.pid and log[-1]["result"] == "exited"
    assert not read_audit(demo=False)


def test_hidden_sampler_entry_runs_the_sampler_and_stays_out_of_help() -> None:
    p = gpufleet("_sampler", "info", "--backend", "sim", "--scenario", "ecc-xid")
    assert p.returncode == 0, p.stderr
    assert '"kind":"info"' in p.stdout.replace(" ", "")
    assert "_sampler" not in gpufleet("--help").stdout
    wrong = gpufleet("nope")
    assert wrong.returncode == 2 and "invalid choice: 'nope'" in wrong.stderr
    assert "'stream'" in wrong.stderr and "_sampler" not in wrong.stderr


def test_check_prints_verdicts_as_json_and_text() -> None:
    import json

    p = gpufleet("check", "demo:healthy-8xa100", "--format", "json")
    assert p.returncode == EXIT_OK, p.stderr
    out = json.loads(p.stdout)
    assert out["host"] == "a100-train" and out["verdict"] in ("pass", "warn")
    assert out["findings"] and all(f["sentence"] for f in out["findings"])
    assert out["facts"]["kind"] == "check"
    p = gpufleet("check", "demo:ecc-xid")
    head = p.stdout.splitlines()[0]
    assert head.startswith("a100-ecc (local sim/ecc-xid): "), p.stderr
    # Exit 1 exactly when the verdict is a fail (ECC errors on this scenario's GPU 2).
    assert p.returncode == (EXIT_FAILURE if head.endswith("FAIL") else EXIT_OK)
    assert "[FAIL]" in p.stdout or "[WARN]" in p.stdout
