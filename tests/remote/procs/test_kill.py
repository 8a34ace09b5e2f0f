"""Safe kill, run as the real ``python -m gpufleet_sampler kill`` against real processes."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest
from gpufleet_sampler.procs import procfs

from tests.support.paths import REMOTE

TEST_USER = "gpufleet-kt"


def _kill(
    *args: str, python: str = sys.executable, user: int | None = None
) -> tuple[int, dict[str, object]]:
    env = dict(os.environ, PYTHONPATH=str(REMOTE))
    p = subprocess.run(
        [python, "-m", "gpufleet_sampler", "kill", *args],
        capture_output=True,
        env=env,
        timeout=60,
        user=user,
        group=None if user is None else pwd.getpwuid(user).pw_gid,
        extra_groups=None if user is None else [],
        cwd="/",
    )
    lines = p.stdout.decode().splitlines()
    assert len(lines) == 1, (p.stdout, p.stderr)
    return p.returncode, json.loads(lines[0])


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    p = subprocess.Popen(["sleep", "60"])
    yield p
    if p.poll() is None:
        p.kill()
    p.wait()


def _ticks(pid: int) -> int:
    t = procfs.start_ticks(pid)
    assert t is not None
    return t


def test_term_ends_a_real_process(sleeper: subprocess.Popen[bytes]) -> None:
    rc, out = _kill("--pid", str(sleeper.pid), "--start-time", str(_ticks(sleeper.pid)))
    assert rc == 0
    assert out["result"] == "exited" and out["signal"] == "TERM" and out["pid"] == sleeper.pid
    assert isinstance(out["elapsed_s"], float)
    assert sleeper.wait(timeout=5) == -15


def test_wrong_start_time_is_refused_and_process_lives(sleeper: subprocess.Popen[bytes]) -> None:
    ticks = _ticks(sleeper.pid)
    rc, out = _kill("--pid", str(sleeper.pid), "--start-time", str(ticks - 1))
    assert rc == 5
    assert out["result"] == "refused"
    assert str(ticks) in str(out["message"])
    assert sleeper.poll() is None
    assert procfs.start_ticks(sleeper.pid) == ticks


def test_missing_pid_is_not_found() -> None:
    p = subprocess.Popen(["true"])
    p.wait()
    rc, out = _kill("--pid", str(p.pid), "--start-time", "12345")
    assert rc == 8 and out["result"] == "not_found"


@pytest.mark.parametrize("pid", ["0", "-1", "1"])
def test_group_and_init_pids_are_refused(pid: str) -> None:
    rc, out = _kill("--pid", pid, "--start-time", "0")
    assert rc == 5 and out["result"] == "refused"


def test_term_ignored_is_still_running_then_kill_ends_it() -> None:
    code = (
        "import signal,sys,time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        ticks = str(_ticks(p.pid))
        rc, out = _kill("--pid", str(p.pid), "--start-time", ticks, "--grace", "0.3")
        assert rc == 7 and out["result"] == "still_running"
        assert "KILL" in str(out["message"])
        assert p.poll() is None
        rc, out = _kill("--pid", str(p.pid), "--start-time", ticks, "--signal", "KILL")
        assert rc == 0 and out["result"] == "exited" and out["signal"] == "KILL"
        assert p.wait(timeout=5) == -9
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()


def _unprivileged_python() -> tuple[int, str]:
    """A test user and an interpreter it can run, or skip with the reason."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create an unprivileged user for the test")
    try:
        pw = pwd.getpwnam(TEST_USER)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            pytest.skip("useradd is not available to create a test user")
        subprocess.run(
            [useradd, "--no-create-home", "--shell", "/bin/false", TEST_USER], check=True
        )
        pw = pwd.getpwnam(TEST_USER)
    for python in ("/usr/bin/python3", shutil.which("python3") or "", sys.executable):
        if not python:
            continue
        probe = subprocess.run(
            [python, "-c", "import gpufleet_sampler.procs.kill"],
            env=dict(os.environ, PYTHONPATH=str(REMOTE)),
            capture_output=True,
            user=pw.pw_uid,
            group=pw.pw_gid,
            extra_groups=[],
            cwd="/",
        )
        if probe.returncode == 0:
            return pw.pw_uid, python
    pytest.skip("no python3 and checkout readable by an unprivileged user")


@pytest.mark.parametrize("sudo", [False, True])
def test_process_of_another_user_is_permission_denied(
    sleeper: subprocess.Popen[bytes], sudo: bool
) -> None:
    uid, python = _unprivileged_python()
    extra = ["--sudo"] if sudo else []
    rc, out = _kill(
        "--pid",
        str(sleeper.pid),
        "--start-time",
        str(_ticks(sleeper.pid)),
        *extra,
        python=python,
        user=uid,
    )
    assert rc == 6, out
    assert out["result"] == "permission_denied"
    msg = str(out["message"])
    assert "root" in msg
    if sudo:
        # No passwordless sudo for the test user: said plainly, never a prompt.
        assert "sudo" in msg
    assert sleeper.poll() is None
