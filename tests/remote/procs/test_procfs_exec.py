"""procfs.ProcCache after exec(): a process keeps its pid and start ticks across exec, so the
cache (keyed by both) must notice the new program by its comm and re-read the command line.
A real shell that really execs Python."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from gpufleet_sampler.procs import procfs

from tests.support import exec_child


@pytest.fixture
def shell_then_python() -> Iterator[subprocess.Popen[str]]:
    with exec_child.shell_then_python() as p:
        yield p


def test_cache_follows_exec(shell_then_python: subprocess.Popen[str]) -> None:
    p = shell_then_python
    assert p.stdin is not None and p.stdout is not None
    cache = procfs.ProcCache()
    before = cache.lookup(p.pid)
    assert before is not None
    assert before.name == "sh" and before.cmd is not None and before.cmd.startswith("sh -c")
    assert cache.lookup(p.pid) is before  # unchanged: served from the cache

    p.stdin.write("go\n")
    p.stdin.flush()
    assert p.stdout.readline() == "ready\n"  # the exec has happened

    after = cache.lookup(p.pid)
    assert after is not None and after is not before
    assert after.start_ticks == before.start_ticks  # same process, same identity
    assert after.name == os.path.basename(sys.executable)[:15]
    assert after.cmd is not None and after.cmd.startswith(sys.executable + " -c ")
    assert "--token=***" in after.cmd and exec_child.TOKEN not in after.cmd
    assert len(cache) == 1
    assert cache.lookup(p.pid) is after


def test_stat_ident_matches_comm_and_ticks(shell_then_python: subprocess.Popen[str]) -> None:
    ident = procfs.stat_ident(shell_then_python.pid)
    assert ident == (procfs.start_ticks(shell_then_python.pid), "sh")
    assert procfs.proc_name(shell_then_python.pid) == "sh"
    assert procfs.stat_ident(2**22 + 12345) is None  # no such pid
