"""The run's end check (tests/conftest.py, tests/support/process_leaks.py): a test that leaves a
sampler daemon alive fails the run, which names it and stops the daemon; a test whose
processes are gone by its end does not. Each case is a real pytest run of its own, with this
suite's conftest as its plugin, on a two-test file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REMOTE, ROOT

# A stand-in daemon: detached in a session of its own, as lifecycle.start_detached starts
# one, with the sampler's name on its command line; it writes its pid, then waits.
LEAKY = """
import subprocess, sys
from pathlib import Path

import pytest

WAIT = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"

def test_leaves_a_daemon(tmp_path):
    subprocess.Popen(
        [sys.executable, "-c", WAIT, str(Path(__file__).parent / "pid"), "gpufleet_sampler"],
        start_new_session=True,
    )

def test_stops_what_it_starts():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "gpufleet_sampler"])
    p.terminate()
    p.wait(10)
"""


def _run(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_case.py").write_text(body)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(REMOTE)])
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), *args, str(tmp_path / "test_case.py")],
        capture_output=True, text=True, timeout=120, env=env, cwd=str(tmp_path), check=False,
    )  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


# make test runs the suite in two pytest-xdist workers: a worker's check reaches the run's end.
@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one process", "xdist workers"])
def test_a_leaked_daemon_fails_the_run_names_its_test_and_is_stopped(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    p = _run(tmp_path, LEAKY, *args)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "2 passed" in out  # the tests themselves passed: the run's end check failed it
    assert "tests left processes running" in out
    pid = int((tmp_path / "pid").read_text())
    assert f"test_case.py::test_leaves_a_daemon left pid {pid} running" in out
    assert "test_stops_what_it_starts" not in out
    assert not _alive(pid)


def test_a_run_whose_tests_stop_what_they_start_passes(tmp_path: Path) -> None:
    body = LEAKY.replace("def test_leaves_a_daemon", "def _unused")
    p = _run(tmp_path, body)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "left processes" not in p.stdout + p.stderr
