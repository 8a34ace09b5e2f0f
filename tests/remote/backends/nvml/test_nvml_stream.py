"""The whole sampler on the NVML backend, through the fake pynvml: a real ``stream`` /
``check`` subprocess parsed by the laptop's decoder, and the loop driven over a simulated
minute."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from gpufleet.core.wire.messages import Event, Hello, Links, Procs, Sample, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.loop import Sampler

from tests.support.nvml_fake import PROFILES, ROOT, fake_env, fake_nvml, profile

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")


def _run(args: list[str], prof: str, tick_s: float = 0.05) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        env=fake_env(PROFILES / f"{prof}.json", tick_s=tick_s),
        cwd=str(ROOT),
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_stream_nvml_through_the_fake_parses_with_the_decoder() -> None:
    res = _run(["stream", "--backend", "nvml", "--count", "3", "--interval", "0.05"], "h100x8")
    assert res.returncode == 0, res.stderr.decode()
    dec = StreamDecoder()
    msgs = dec.feed_many(res.stdout.splitlines())
    assert dec.bad_lines == 0, dec.last_error
    assert isinstance(msgs[0], Hello)
    hello = msgs[0]
    assert hello.backend == "nvml" and len(hello.gpus) == 8
    assert hello.gpus[0].unsupported == {"fan_pct": "NotSupported: nvmlDeviceGetFanSpeed"}
    assert hello.gpus[0].nominal["nvlink_links"] == 18
    samples = [m for m in msgs if isinstance(m, Sample)]
    assert len(samples) == 3
    seqs = [m.seq for m in msgs if isinstance(m, (Sample, Procs, Event, Links))]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    for s in samples:
        assert s.gpu_indices() == list(range(8))
        assert s.value(0, "fan_pct") is None
        assert s.value(0, "temp_gpu_c") is not None
        assert s.value(7, "lost") == 0
    procs = [m for m in msgs if isinstance(m, Procs)]
    assert procs and procs[0].procs[0].mem_bytes == 71303168000


def test_stream_geforce_profile_nulls_and_reasons_survive_the_wire() -> None:
    res = _run(["stream", "--backend", "nvml", "--count", "2", "--interval", "0.05"], "rtx4090x2")
    assert res.returncode == 0, res.stderr.decode()
    dec = StreamDecoder()
    msgs = dec.feed_many(res.stdout.splitlines())
    assert dec.bad_lines == 0, dec.last_error
    hello = msgs[0]
    assert isinstance(hello, Hello)
    assert hello.gpus[1].unsupported["temp_mem_c"] == "NotSupported: field 82"
    sample = next(m for m in msgs if isinstance(m, Sample))
    assert sample.value(1, "temp_mem_c") is None
    assert sample.value(1, "fan_pct") is not None


def test_check_and_info_through_the_fake_are_one_json_object_each() -> None:
    res = _run(["check", "--backend", "nvml"], "h100x8")
    assert res.returncode == 0, res.stderr.decode()
    lines = res.stdout.splitlines()
    assert len(lines) == 1
    check = json.loads(lines[0])
    assert check["kind"] == "check" and len(check["gpus"]) == 8
    assert check["gpus"][0]["power_default_w"] == 700.0
    res = _run(["info", "--backend", "nvml"], "rtx4090x2")
    assert res.returncode == 0, res.stderr.decode()
    info = json.loads(res.stdout)
    assert info["kind"] == "info" and info["gpus"][1]["name"] == "NVIDIA GeForce RTX 4090"


def test_stream_without_a_driver_says_so_in_one_line() -> None:
    env = fake_env(PROFILES / "h100x8.json")
    env.pop("GPUFLEET_FAKE_NVML")
    res = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "stream", "--backend", "nvml", "--count", "1"],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert res.returncode != 0
    err = res.stderr.decode()
    assert "Traceback" not in err and "driver" in err


def test_loop_over_a_simulated_minute_bounds_bytes_and_tiers() -> None:
    with fake_nvml(profile("h100x8")) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            s = Sampler(b, interval=1.0, procs_interval=2.0)
            hello = s.hello()
            kinds: dict[str, int] = {}
            sample_bytes = 0
            for t in range(1, 61):
                fake._fake.set_time(float(t))
                for m in s.step(float(t), 1.7e9 + t):
                    kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
                    line = protocol.encode(m)
                    if m["kind"] == "sample":
                        sample_bytes += len(line) + 1
        finally:
            b.close()
    assert hello["backend"] == "nvml" and len(hello["gpus"]) == 8
    assert kinds["sample"] == 60
    assert 29 <= kinds["procs"] <= 31  # every 2 s, not every tick
    per_gpu_sample = sample_bytes / (60 * 8)
    assert per_gpu_sample < 400, per_gpu_sample


def _json_safe(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def test_hello_is_json_serialisable() -> None:
    with fake_nvml("rtx4090x2"):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            assert _json_safe(b.hello())["gpus"][0]["index"] == 0
            assert _json_safe(b.check())["gpus"][1]["index"] == 1
        finally:
            b.close()
