"""Shared fixtures: every test gets its own config and data dirs, Qt runs offscreen, a
test that leaves a thread running fails (as napari does), and a run where a test left a
sampler daemon or a child process alive fails at its end, naming the test
(tests/support/process_leaks.py)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import process_leaks
from tests.support.webhook_sink import WebhookSink

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The run's mark, inherited by every process it starts (process_leaks tells ours by it).
os.environ[process_leaks.SESSION_ENV] = str(os.getpid())
# pid -> (start time, the test during which it appeared), for the check at the run's end.
_SEEN: dict[int, tuple[int, str]] = {}


@pytest.fixture(autouse=True)
def no_leftover_processes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    tmp = str(tmp_path_factory.getbasetemp())
    before = process_leaks.snapshot(tmp)
    yield
    for pid, started in process_leaks.snapshot(tmp).items():
        if before.get(pid) != started and _SEEN.get(pid, (None,))[0] != started:
            _SEEN[pid] = (started, request.node.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Every fixture is torn down by now: what appeared during a test and is still alive
    was left by it. Named, stopped, and the run fails. A pytest-xdist worker hands its lines
    to the controller (``workeroutput``), which reports them and fails the run."""
    alive = process_leaks.still_alive({p: s for p, (s, _t) in _SEEN.items()}, grace_s=5.0)
    lines = [
        f"  {_SEEN[p][1]} left pid {p} running: {process_leaks.command(p)[:200]}" for p in alive
    ]
    process_leaks.stop(alive)
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["leaked_processes"] = lines
        return
    lines += _WORKER_LEAKS
    if not lines:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "tests left processes running (stopped now)", red=True)
        for line in lines:
            reporter.write_line(line, red=True)
    else:
        sys.stderr.write("\n".join(["tests left processes running (stopped now):", *lines, ""]))
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


# What the xdist workers left (each worker's own end check), for the controller's report.
_WORKER_LEAKS: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_LEAKS.extend(getattr(node, "workeroutput", {}).get("leaked_processes", []))


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    cfg = tmp_path / "config"
    data = tmp_path / "data"
    cfg.mkdir()
    data.mkdir()
    monkeypatch.setenv("GPUFLEET_CONFIG_DIR", str(cfg))
    monkeypatch.setenv("GPUFLEET_DATA_DIR", str(data))
    yield tmp_path


@pytest.fixture(autouse=True)
def no_leftover_threads(request: pytest.FixtureRequest) -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    if request.node.get_closest_marker("allow_threads"):
        return
    deadline = time.monotonic() + 5.0
    while True:
        extra = [
            t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon
        ]
        if not extra or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not extra, f"test left threads running: {[t.name for t in extra]}"


@pytest.fixture
def webhook_sink() -> Iterator[WebhookSink]:
    """A local webhook receiver (``tests/support/webhook_sink.py``), closed after the test."""
    with WebhookSink() as sink:
        yield sink


@pytest.fixture
def secret_service() -> None:
    """Skips the test unless a private Secret Service is usable (tools/run-tests starts one:
    dbus-run-session + an unlocked gnome-keyring), so no test touches the user's keyring."""
    from gpufleet.core.config import secrets

    if not os.environ.get("GPUFLEET_TEST_KEYRING_HOME"):
        pytest.skip(
            "needs a private Secret Service: run under tools/run-tests "
            "(dbus-run-session + an unlocked gnome-keyring)"
        )
    why = secrets.store_available()
    if why:
        pytest.skip(f"no usable Secret Service: {why}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_threads: the test may leave non-daemon threads")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root (network or PID namespaces, tc); runs in CI as root")
    for item in items:
        if item.get_closest_marker("root"):
            item.add_marker(skip)


@pytest.fixture
def generous_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that compare exact sampler values: the NVML backend plans its tiers from call
    times it measures at start, and the fake pynvml's own Python (not NVML's cost) measured on
    a loaded machine could stretch a tier and change which source a value comes from. A budget
    no timing reaches keeps every tier at the period it is needed at."""
    monkeypatch.setenv("GPUFLEET_CPU_BUDGET_PCT", "100")
