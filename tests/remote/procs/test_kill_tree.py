"""``kill --tree`` and ``--watch`` on real processes, without a namespace or a GPU: a parent
with children ends with them and no other process does; where NVML cannot be read the
result says the memory was not watched and the kill itself still happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet_sampler.procs import procfs

from tests.support.paths import REMOTE, SUPPORT

HOLDER = SUPPORT / "gpu_holder_proc.py"


def _kill(*args: str) -> tuple[int, dict[str, Any]]:
    # No driver here: the real pynvml's nvmlInit fails, as on a host without a GPU.
    env = dict(os.environ, PYTHONPATH=str(REMOTE))
    p = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "kill", *args],
        capture_output=True,
        env=env,
        timeout=60,
    )
    lines = p.stdout.decode().splitlines()
    assert len(lines) == 1, (p.stdout, p.stderr)
    return p.returncode, json.loads(lines[0])


def _alive(pid: int) -> bool:
    st = procfs.proc_state(pid)
    return st is not None and st not in ("Z", "X")


@pytest.fixture
def family(tmp_path: Path) -> Iterator[tuple[dict[str, Any], subprocess.Popen[str]]]:
    dev = tmp_path / "dev"
    dev.mkdir()
    p = subprocess.Popen(
        [sys.executable, str(HOLDER), str(dev), "--workers", "2", "--session"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    info = json.loads(p.stdout.readline())
    yield info, p
    for w in info["workers"]:
        if _alive(int(w)):
            os.kill(int(w), 9)
    if p.poll() is None:
        p.kill()
    p.wait()


def test_tree_kill_ends_the_parent_and_its_children_only(
    family: tuple[dict[str, Any], subprocess.Popen[str]],
) -> None:
    info, parent = family
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        pid = int(info["pid"])
        ticks = procfs.start_ticks(pid)
        assert ticks is not None
        rc, out = _kill("--pid", str(pid), "--start-time", str(ticks), "--tree", "--watch", "2")
        assert rc == 0, out
        workers = [int(w) for w in info["workers"]]
        assert sorted(m["pid"] for m in out["tree"]) == sorted([pid, *workers])
        assert parent.wait(timeout=10) == -15
        deadline = time.monotonic() + 10
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(w) for w in workers)
        assert bystander.poll() is None
        mem = out["memory"]
        assert isinstance(mem, dict) and mem["watched"] is False
        assert "not watched" in str(mem["message"])
    finally:
        bystander.kill()
        bystander.wait()


def test_tree_kill_refuses_a_wrong_start_time_and_signals_nothing(
    family: tuple[dict[str, Any], subprocess.Popen[str]],
) -> None:
    info, parent = family
    pid = int(info["pid"])
    ticks = procfs.start_ticks(pid)
    assert ticks is not None
    rc, out = _kill("--pid", str(pid), "--start-time", str(ticks - 1), "--tree")
    assert rc == 5 and out["result"] == "refused"
    assert parent.poll() is None
    assert all(_alive(int(w)) for w in info["workers"])
