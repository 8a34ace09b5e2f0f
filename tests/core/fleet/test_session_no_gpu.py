"""A host that answers but has nothing to monitor has its own state, not "unreachable": no
NVIDIA driver (NVML's library missing, the real nvml backend over the fake pynvml, through
a real local sampler daemon), no GPU the driver sees (a profile with none), and NVML that
fails to start for another reason (NVML's own error texts); not retried forever."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import pynvml
import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet import session as session_mod
from gpufleet.core.fleet.events import (
    GAVE_UP_STATES,
    NO_GPU,
    NVML_FAILED,
    RECONNECTING,
    FleetEvent,
    HostStatus,
)
from gpufleet.core.fleet.session import HostSession, classify_backend_error

from tests.support.paths import FAKES
from tests.support.sampler_daemons import Recorder, stop_daemons


def nvml_host(name: str) -> HostConfig:
    return HostConfig(name=name, transport="local", backend="nvml")


def states(rec: Recorder, host: str) -> list[HostStatus]:
    return [e for e in rec.events if isinstance(e, HostStatus) and e.host == host]


def start(host: HostConfig, sd: str) -> tuple[HostSession, Recorder]:
    q: queue.Queue[FleetEvent] = queue.Queue()
    s = HostSession(host, q.put_nowait, state_dir=sd)  # type: ignore[arg-type]
    s.start()
    return s, Recorder(q)


def test_no_driver_is_its_own_state_and_is_given_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake pynvml without a profile answers nvmlInit as a machine without the driver's
    # library does (NVMLError_LibraryNotFound).
    monkeypatch.setenv("PYTHONPATH", str(FAKES))
    monkeypatch.delenv("GPUFLEET_FAKE_NVML", raising=False)
    monkeypatch.setattr(session_mod, "NO_GPU_RETRY_S", 0.2)
    monkeypatch.setattr(session_mod, "NO_GPU_TRIES", 2)
    sd = str(tmp_path / "state")
    host = nvml_host("nodriver")
    s, rec = start(host, sd)
    try:
        rec.wait(lambda: not s.is_alive(), 60, "the session to give up")
    finally:
        s.stop()
        stop_daemons([host], sd)
    seen = states(rec, "nodriver")
    final = seen[-1]
    assert final.state == NO_GPU and final.state in GAVE_UP_STATES
    assert "no NVIDIA driver" in (final.reason or "")
    assert "Library Not Found" in (final.reason or "")
    # One slow retry before giving up, shown as what it is (not "connecting" again).
    assert "trying again" in (seen[-2].reason or "") and seen[-2].state == NO_GPU
    assert not any(e.state == RECONNECTING for e in seen), [e.state for e in seen]


def test_a_driver_that_sees_no_gpu_is_no_gpu_while_connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prof = tmp_path / "none.json"
    prof.write_text(
        json.dumps({"format": "gpufleet-nvml-profile", "version": 1, "count": 0, "gpus": []})
    )
    monkeypatch.setenv("PYTHONPATH", str(FAKES))
    monkeypatch.setenv("GPUFLEET_FAKE_NVML", str(prof))
    sd = str(tmp_path / "state")
    host = nvml_host("empty")
    s, rec = start(host, sd)
    try:
        rec.wait(
            lambda: any(e.state == NO_GPU for e in states(rec, "empty")), 60, "the no-GPU state"
        )
    finally:
        s.stop()
        stop_daemons([host], sd)
    st = next(e for e in states(rec, "empty") if e.state == NO_GPU)
    assert "sees no GPU" in (st.reason or "")


def _line(code: int) -> str:
    """The sampler's error line for an nvmlInit failure with NVML's own error text."""
    e = pynvml.NVMLError(code)
    return (
        f"cannot start the nvml backend: NVML could not start ({e}): is the NVIDIA driver "
        "installed and loaded?"
    )


@pytest.mark.parametrize(
    ("code", "state"),
    [
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, NO_GPU),
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, NO_GPU),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, NVML_FAILED),
        (pynvml.NVML_ERROR_NO_PERMISSION, NVML_FAILED),
        (pynvml.NVML_ERROR_UNKNOWN, NVML_FAILED),
    ],
)
def test_nvml_start_errors_are_classified(code: int, state: str) -> None:
    got = classify_backend_error(_line(code))
    assert got is not None
    assert got[0] == state
    assert str(pynvml.NVMLError(code)) in got[1]
    if state == NVML_FAILED:
        assert got[1].startswith("NVML failed: ")


def test_other_sampler_errors_are_not_a_gpu_state() -> None:
    assert classify_backend_error("unknown sim scenario 'x'") is None
    assert classify_backend_error("the sampler daemon closed the stream") is None
