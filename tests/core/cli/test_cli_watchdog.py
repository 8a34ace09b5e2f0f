"""`gpufleet watchdog HOST …` through the real CLI and the local transport, on the demo's
crashed-idle host: armed it warns; cancelled from the CLI it does not act."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.cli.main import main
from gpufleet.core.fleet.demo import demo_hosts, demo_state_dir
from gpufleet_sampler import state_dir
from gpufleet_sampler.daemon import client

HOST = "demo:a100-eval"  # the crashed-idle scenario


@pytest.fixture
def daemon_paths(monkeypatch: pytest.MonkeyPatch) -> Iterator[state_dir.Paths]:
    monkeypatch.setenv("GPUFLEET_SIM_TIME_SCALE", "0.01")  # the job dies 1.8 s in
    # The demo host's own seed: the daemon the CLI starts (seed 0 named another, left running).
    seed = next(h.seed for h in demo_hosts() if h.scenario == "crashed-idle")
    p = state_dir.Paths(str(demo_state_dir()), state_dir.daemon_key("sim", "crashed-idle", seed))
    yield p
    client.request(p, {"op": "stop"})
    deadline = time.monotonic() + 20
    while client.request(p, {"op": "status"}) is not None and time.monotonic() < deadline:
        time.sleep(0.05)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["watchdog", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_arm_then_cancel_from_the_cli_does_not_act(capsys, daemon_paths, tmp_path: Path) -> None:
    record = tmp_path / "acted"
    rc, out, err = run(
        capsys,
        HOST,
        "arm",
        "--action",
        "command",
        "--command",
        f"touch {record}",
        "--idle",
        "1s",
        "--grace",
        "2m",
    )
    assert rc == 0, err
    assert "watchdog watching: action command, idle 1 s, grace 120 s" in out
    deadline = time.monotonic() + 60
    while True:
        rc, out, err = run(capsys, HOST, "status")
        if "watchdog pending" in out or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert "acts in" in out and "unless cancelled" in out
    rc, out, err = run(capsys, HOST, "cancel")
    assert rc == 0 and "watchdog cancelled" in out
    rc, _, err = run(capsys, HOST, "cancel")
    assert rc == 1 and "nothing to cancel" in err
    assert not record.exists()
    rc, out, _ = run(capsys, HOST, "disarm")
    assert rc == 0 and "disarmed" in out


def test_bad_usage(capsys) -> None:
    rc, _, err = run(capsys, HOST, "arm", "--action", "command")
    assert rc == 2 and "needs --command" in err
    rc, _, err = run(capsys, HOST, "arm", "--grace", "soon")
    assert rc == 2 and "--grace: bad duration" in err
