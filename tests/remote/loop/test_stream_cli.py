"""The sampler's ``stream``, ``info`` and ``check`` commands as real subprocesses.

The acceptance command of the sampler issue runs as the user would run it
(``python3 -m gpufleet_sampler stream ...``) and every line goes through the laptop's own
parser. Stopping (SIGTERM, a closed pipe) must be quiet and must not leave simulated
processes behind.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gpufleet.core.wire.messages import Event, Hello, Links, Procs, Sample, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.procs import procfs

from tests.support.paths import ROOT

REMOTE = ROOT / "remote"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REMOTE)
    env.pop("GPUFLEET_SIM_TIME_SCALE", None)
    return env


def sampler(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        capture_output=True,
        env=_env(),
        timeout=timeout,
        check=False,
    )


def popen_sampler(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )


def _gone(pid: int) -> bool:
    """Exited (or a zombie waiting for a reaper that is not ours)."""
    state = procfs.proc_state(pid)
    return state is None or state in ("Z", "X")


def _wait_gone(pids: list[int], timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [p for p in left if not _gone(p)]
        if left:
            time.sleep(0.05)
    return left


def test_acceptance_healthy_8xa100_twenty_samples() -> None:
    r = sampler(
        "stream", "--backend", "sim", "--scenario", "healthy-8xa100", "--interval", "0.1",
        "--count", "20",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr.decode()
    assert r.stderr == b""
    lines = r.stdout.splitlines()
    dec = StreamDecoder()
    msgs = [dec.feed(line) for line in lines]
    assert dec.bad_lines == 0, dec.last_error
    assert isinstance(msgs[0], Hello)
    hello = msgs[0]
    assert hello.protocol == protocol.PROTOCOL_VERSION
    assert hello.columns == protocol.COLUMN_NAMES
    assert len(hello.gpus) == 8
    assert len({g.uuid for g in hello.gpus}) == 8
    samples = [m for m in msgs if isinstance(m, Sample)]
    assert len(samples) == 20
    for s in samples:
        assert s.gpu_indices() == list(range(8))
    # One counter for every kind: contiguous over the whole stream, not only over samples.
    seqs = [m.seq for m in msgs[1:] if isinstance(m, (Sample, Procs, Event, Links))]
    assert seqs == list(range(1, len(seqs) + 1))
    assert len(seqs) == len(lines) - 1
    # Real timing: ticks on a 0.1 s grid (monotonic), wall clock close to now.
    monos = [s.mono for s in samples]
    assert all(b > a for a, b in itertools.pairwise(monos))
    assert abs(samples[-1].t - time.time()) < 60
    # Lines stay small: the budget is 400 bytes per GPU-sample.
    sample_lines = [ln for ln in lines if b'"kind":"sample"' in ln]
    assert max(len(ln) for ln in sample_lines) / 8 < 400


def test_no_wait_is_refused_for_nvml() -> None:
    r = sampler("stream", "--backend", "nvml", "--no-wait", "--count", "1")
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "--no-wait" in err and "sim" in err
    assert "Traceback" not in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--scenario", "no-such-thing"], "unknown sim scenario"),
        (["--interval", "0"], "--interval"),
        (["--count", "-1"], "--count"),
    ],
)
def test_bad_arguments_give_one_clear_line(args: list[str], needle: str) -> None:
    r = sampler("stream", "--backend", "sim", "--no-wait", *args)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert needle in err
    assert "Traceback" not in err


def test_sigterm_stops_quietly_and_takes_the_sim_processes_along() -> None:
    p = popen_sampler(
        "stream", "--backend", "sim", "--scenario", "crashed-idle", "--interval", "0.1",
        "--procs-interval", "0.1",
    )  # fmt: skip
    assert p.stdout is not None
    dec = StreamDecoder()
    pids: list[int] = []
    try:
        while not pids:
            line = p.stdout.readline()
            assert line, p.stderr.read().decode() if p.stderr else ""
            msg = dec.feed(line)
            if isinstance(msg, Procs):
                pids = sorted({pr.pid for pr in msg.procs})
        assert pids and all(not _gone(pid) for pid in pids)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0
    assert err == b""
    # What was written before the signal is whole lines.
    for line in out.splitlines():
        dec.feed(line)
    assert dec.bad_lines == 0
    assert _wait_gone(pids) == []


def test_sim_processes_exit_when_the_sampler_is_killed_hard() -> None:
    p = popen_sampler(
        "stream", "--backend", "sim", "--scenario", "power-capped-4090", "--interval", "0.1",
    )  # fmt: skip
    assert p.stdout is not None
    dec = StreamDecoder()
    pids: list[int] = []
    try:
        while not pids:
            line = p.stdout.readline()
            assert line
            msg = dec.feed(line)
            if isinstance(msg, Procs):
                pids = sorted({pr.pid for pr in msg.procs})
    finally:
        p.kill()  # SIGKILL: no cleanup runs; the children must notice by themselves
        p.communicate(timeout=20)
    assert len(pids) == 2
    assert _wait_gone(pids) == []


def test_closed_pipe_ends_the_stream_without_a_traceback() -> None:
    p = popen_sampler("stream", "--backend", "sim", "--scenario", "healthy-8xa100", "--no-wait")
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.readline()
    p.stdout.close()
    try:
        rc = p.wait(timeout=30)
        err = p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()
    assert rc == 0
    assert b"Traceback" not in err and b"BrokenPipe" not in err


def test_killing_a_sim_process_ends_its_load_on_the_next_tick() -> None:
    p = popen_sampler(
        "stream", "--backend", "sim", "--scenario", "power-capped-4090", "--interval", "0.1",
        "--procs-interval", "0.1",
    )  # fmt: skip
    assert p.stdout is not None
    dec = StreamDecoder()
    victim = None
    other = None
    try:
        while victim is None:
            line = p.stdout.readline()
            assert line
            msg = dec.feed(line)
            if isinstance(msg, Procs) and len(msg.procs) == 2:
                by_gpu = {pr.gpu: pr for pr in msg.procs}
                victim, other = by_gpu[0], by_gpu[1]
        assert victim.cmd is not None and "serve.py" in victim.cmd
        assert victim.start_ticks == procfs.start_ticks(victim.pid)
        os.kill(victim.pid, signal.SIGTERM)
        killed_at = None
        seen_gone_from_procs = False
        while True:
            line = p.stdout.readline()
            assert line
            msg = dec.feed(line)
            if isinstance(msg, Procs) and killed_at is not None:
                pids = {pr.pid for pr in msg.procs}
                assert victim.pid not in pids
                assert other.pid in pids
                seen_gone_from_procs = True
            if isinstance(msg, Sample):
                util0 = msg.value(0, "util_gpu_pct")
                if util0 == 0 and killed_at is None:
                    killed_at = msg.seq
                    assert msg.value(0, "mem_used_bytes") < 64 << 20
                    util1 = msg.value(1, "util_gpu_pct")
                    assert util1 is not None and util1 > 50
                if killed_at is not None and seen_gone_from_procs:
                    break
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=20)
    assert _wait_gone([other.pid]) == []


@pytest.mark.parametrize("command", ["info", "check"])
def test_info_and_check_print_one_json_object(command: str) -> None:
    r = sampler(command, "--backend", "sim", "--scenario", "power-capped-4090")
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    obj = json.loads(lines[0])
    assert obj["kind"] == command
    assert obj["protocol"] == protocol.PROTOCOL_VERSION
    assert obj["backend"] == "sim"
    assert obj["host"]["driver_version"]
    assert obj["host"]["boot_id"]
    assert len(obj["gpus"]) == 2
    if command == "check":
        assert obj["driver_version"] and obj["cuda_version"]
        assert obj["xid"]["seen"] == "unknown"
        g = obj["gpus"][0]
        assert g["power_enforced_w"] == 300.0
        assert g["power_default_w"] == 450.0
        assert g["temp_gpu_c"] < g["temp_slowdown_c"]
        assert g["pcie_gen"] <= g["pcie_max_gen"]
        assert g["ecc_sbe_vol"] is None and "ecc_sbe_vol" in g["unsupported"]
        assert g["processes"] == 1
        assert "serve.py" in g["process_list"][0]["cmd"]
        assert g["mem_reserved_bytes"] < g["mem_total_bytes"]
        assert g["virtualization_mode"] in ("none", "passthrough", "vgpu", "host_vgpu")
        assert g["persistence_mode"] is False
        # The processes check listed were real, and check did not leave them running.
        assert _wait_gone([g["process_list"][0]["pid"]]) == []


def test_check_on_ecc_history_and_bad_scenario() -> None:
    r = sampler("check", "--backend", "sim", "--scenario", "ecc-xid")
    obj = json.loads(r.stdout)
    g2 = obj["gpus"][2]
    assert g2["remapped_rows_correctable"] == 2
    assert g2["ecc_mode"] is True
    r = sampler("check", "--backend", "sim", "--scenario", "nope")
    assert r.returncode == 2
    err = json.loads(r.stdout)
    assert err["kind"] == "error" and "unknown sim scenario" in err["message"]


def test_zipapp_runs_info_and_check_on_sim(tmp_path: Path) -> None:
    zipapp = pytest.importorskip("gpufleet.core.link.zipapp")
    pyz = zipapp.build_sampler_zipapp(tmp_path)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    for command in ("info", "check"):
        r = subprocess.run(
            [sys.executable, str(pyz), command, "--backend", "sim", "--scenario", "crashed-idle"],
            capture_output=True,
            env=env,
            cwd=str(tmp_path),
            timeout=60,
            check=False,
        )
        assert r.returncode == 0, r.stderr.decode()
        obj = json.loads(r.stdout)
        assert obj["kind"] == command
        assert len(obj["gpus"]) == 4
