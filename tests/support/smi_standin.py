"""A local host read through the stand-in nvidia-smi (tests/fixtures/nvidia-smi: sh + awk
playing a recorded board back), for every test folder that runs the nvidia-smi path whole."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link.channel import Transport
from gpufleet.core.link.nvidia_smi_link import with_collector
from gpufleet.core.link.transport import LocalTransport

from tests.support.paths import FIXTURES

FIX = FIXTURES / "nvidia-smi"


def fake_smi(root: Path, model: str) -> Path:
    """A bin directory with the stand-in nvidia-smi playing ``model``'s fixtures."""
    d = root / f"fake-{model}"
    d.mkdir()
    shutil.copy(FIX / "fake-nvidia-smi", d / "nvidia-smi")
    shutil.copy(FIX / "play.awk", d / "play.awk")
    shutil.copy(FIX / f"{model}-q.xml", d / "q.xml")
    shutil.copy(FIX / f"{model}-query.csv", d / "query.csv")
    shutil.copy(FIX / f"{model}-apps.csv", d / "apps.csv")
    if (FIX / f"{model}-list.txt").exists():
        shutil.copy(FIX / f"{model}-list.txt", d / "list.txt")
    (d / "nvidia-smi").chmod(0o755)
    return d


def local_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> tuple[HostConfig, Transport]:
    """A local host read through the stand-in nvidia-smi playing ``model``'s fixtures."""
    bin_dir = fake_smi(tmp_path, model)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    h = HostConfig(name=model, transport="local", collector="nvidia-smi", interval_s=0.2)
    return h, with_collector(LocalTransport(h), h)
