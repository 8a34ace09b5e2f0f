"""A host without python3 read through nvidia-smi, over a real sshd: an unprivileged test
user whose PATH holds no python3, only a stand-in ``nvidia-smi`` (sh + awk, playing back the
recorded output of two power-capped RTX 4090s) and the few tools it needs. The fleet picks
nvidia-smi by itself (``collector = "auto"``); the host streams, its series fill the live
buffers the plots draw from, the rules raise the power-limit alert, and the status says what
this path cannot do."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config import secrets
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.events import FAILED, STREAMING, HostStatus
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet.core.wire.messages import Hello, Procs

from tests.support.paths import FIXTURES
from tests.support.sampler_daemons import Recorder

FIX = FIXTURES / "nvidia-smi"
TOOLS = ("sh", "cat", "awk", "sleep")


@pytest.fixture
def smi_bin() -> Iterator[Path]:
    """A PATH directory the test user can read: the stand-in nvidia-smi and its fixtures, and
    links to the tools it needs; nothing else (no python3)."""
    d = Path(tempfile.mkdtemp(prefix="gpufleet-smi-"))
    try:
        d.chmod(0o755)
        shutil.copy(FIX / "fake-nvidia-smi", d / "nvidia-smi")
        for src, dst in (
            ("play.awk", "play.awk"),
            ("rtx4090x2-q.xml", "q.xml"),
            ("rtx4090x2-query.csv", "query.csv"),
            ("rtx4090x2-apps.csv", "apps.csv"),
        ):
            shutil.copy(FIX / src, d / dst)
        for p in d.iterdir():
            p.chmod(0o755)
        for tool in TOOLS:
            found = shutil.which(tool)
            assert found is not None, tool
            (d / tool).symlink_to(os.path.realpath(found))
        assert shutil.which("python3", path=str(d)) is None
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_host_without_python3_streams_plots_and_alerts_through_nvidia_smi(
    password_user: tuple[str, str],
    secret_service: None,
    sshd_factory: Callable[..., Any],
    ssh_host_config: Callable[..., HostConfig],
    smi_bin: Path,
) -> None:
    # Password login: sshd reads a user's authorized_keys as that user, and the test's key
    # file lives in root's private temporary directory.
    user, password = password_user
    server = sshd_factory(password_auth=True, user=user, extra_config=(f"SetEnv PATH={smi_bin}",))
    host = ssh_host_config(server, "gpu-minimal", interval_s=0.5, key_path=None, auth="password")
    assert host.collector == "auto"
    secrets.set_secret(host.name, "password", password)
    fleet = Fleet([host], connect_timeout=8.0)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        try:
            rec.wait(
                lambda: len(rec.samples(host.name)) >= 12 and bool(rec.msgs(host.name, Procs)),
                90,
                "a dozen samples and a process list through nvidia-smi",
            )
        except AssertionError as e:
            got = len(rec.samples(host.name))
            raise AssertionError(f"{e}: {got} samples, {rec.of(host.name, HostStatus)}") from e
        status = fleet.status(host.name)
        # The health check over the same path: from nvidia-smi -q -x.
        facts = fleet.check(host.name)
    finally:
        fleet.stop()
        secrets.delete_secret(host.name, "password")
    states = rec.of(host.name, HostStatus)
    assert not [s for s in states if s.state == FAILED], states
    assert status.state == STREAMING
    # The status says what this path cannot do.
    assert "nvidia-smi" in (status.reason or "") and "no offline ring" in (status.reason or "")
    assert "no python3" in (status.reason or "")
    (hello,) = rec.msgs(host.name, Hello)
    assert (
        hello.backend == "nvidia-smi"
        and [g.name for g in hello.gpus] == ["NVIDIA GeForce RTX 4090"] * 2
    )
    samples = rec.samples(host.name)
    assert samples[-1].value(1, "power_limit_w") == 300
    assert samples[-1].value(0, "sm_clock_mhz") in (2325, 2310, 2295)
    procs = rec.msgs(host.name, Procs)[-1]
    assert {(p.gpu, p.pid) for p in procs.procs} == {(0, 48211), (1, 48212)}
    # Plots: the live buffers the tabs draw from hold both GPUs' series.
    live = LiveBuffers(window_s=600)
    for m in rec.msgs(host.name):
        live.feed(host.name, m)
    assert live.gpus(host.name) == [0, 1]
    assert len(live.series(host.name, 0, "util_gpu_pct")) >= 12
    # Alerts: the rules see a 300 W limit against the 450 W default.
    engine = RuleEngine(load_rules(), [host])
    alerts = [a for m in rec.msgs(host.name) for a in engine.feed(host.name, m)]
    fired = {(a.rule_id, a.gpu) for a in alerts}
    assert {("power_limit_low", 0), ("power_limit_low", 1)} <= fired, fired
    failed = {(f.id, f.gpu) for f in evaluate_check(facts) if f.verdict == "fail"}
    assert failed == {("power_limit", 0), ("power_limit", 1)}, failed


def test_collector_sampler_keeps_the_python3_error(
    sshd_factory: Callable[..., Any],
    ssh_host_config: Callable[..., HostConfig],
    smi_bin: Path,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home-sampleronly"
    home.mkdir(mode=0o700)
    server = sshd_factory(extra_config=(f"SetEnv HOME={home} PATH={smi_bin}",))
    host = ssh_host_config(server, "sampler-only", collector="sampler")
    fleet = Fleet([host], connect_timeout=8.0)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(
            lambda: any(s.state == FAILED for s in rec.of(host.name, HostStatus)),
            60,
            "the host to fail for want of python3",
        )
    finally:
        fleet.stop()
    failed = [s for s in rec.of(host.name, HostStatus) if s.state == FAILED][-1]
    assert failed.kind == "no_python" and "python3 (>= 3.8) not found" in (failed.reason or "")
    assert not rec.samples(host.name)
