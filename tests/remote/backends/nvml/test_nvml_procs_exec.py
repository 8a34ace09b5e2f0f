"""The NVML backend's process list after exec(): a process keeps its pid and start ticks across
exec, so the backend's process info (kept per pid and start ticks) must notice the new program
(procfs.ProcCache compares the comm of the stat it reads anyway). Through the fake pynvml, whose
process list names a real ``sh`` that really execs Python."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.support import exec_child
from tests.support.nvml_fake import fake_nvml, profile


@pytest.fixture
def shell_then_python() -> Iterator[subprocess.Popen[str]]:
    with exec_child.shell_then_python() as p:
        yield p


def test_nvml_procs_follow_exec(shell_then_python: subprocess.Popen[str]) -> None:
    p = shell_then_python
    assert p.stdin is not None and p.stdout is not None
    prof = profile("h100x8")
    prof["defaults"]["nvmlDeviceGetComputeRunningProcesses"] = [
        {"pid": p.pid, "usedGpuMemory": 1 << 30}
    ]
    prof["defaults"]["nvmlDeviceGetProcessUtilization"] = [{"pid": p.pid, "smUtil": 40}]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            fake._fake.set_time(1.0)
            before = b.procs(1.0)
            p.stdin.write("go\n")
            p.stdin.flush()
            assert p.stdout.readline() == "ready\n"  # the exec has happened
            fake._fake.set_time(2.0)
            after = b.procs(2.0)
        finally:
            b.close()
    assert len(before) == len(after) == 8  # the process is on every GPU of the profile
    assert {(x["name"], x["pid"]) for x in before} == {("sh", p.pid)}
    assert all(x["cmd"].startswith("sh -c ") for x in before)
    ticks = {x["start_ticks"] for x in before}
    assert len(ticks) == 1 and None not in ticks
    # Same process (pid and start ticks), new program: its name and command line follow.
    assert {x["start_ticks"] for x in after} == ticks
    assert {x["name"] for x in after} == {os.path.basename(sys.executable)[:15]}
    cmd = after[0]["cmd"]
    assert cmd.startswith(sys.executable + " -c ")
    assert "--token=***" in cmd and exec_child.TOKEN not in cmd
    assert {x["cmd"] for x in after} == {cmd}


def test_nvml_procs_of_a_pid_that_is_gone_have_no_identity() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    prof = profile("h100x8")
    prof["defaults"]["nvmlDeviceGetComputeRunningProcesses"] = [
        {"pid": gone.pid, "usedGpuMemory": 1 << 20}
    ]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            fake._fake.set_time(1.0)
            procs = b.procs(1.0)
        finally:
            b.close()
    assert procs and all(x["pid"] == gone.pid for x in procs)
    assert all(x["name"] is None and x["cmd"] is None and x["start_ticks"] is None for x in procs)
