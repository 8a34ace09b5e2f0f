"""How much of the GPU works: written streams of a busy-looking GPU whose SMs idle, a
memory-bound job, idle tensor cores, a throttled job, and a GPU without GPM where the power
draw stands in; through ``diagnose`` and ``gpufleet diagnose --file``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gpufleet.cli.main import main
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts import utilization
from gpufleet.core.verdicts.diagnosis import diagnose
from gpufleet.core.wire.messages import Hello, Message, Sample
from gpufleet_sampler import protocol

from tests.support.rules_support import T0, Stream

# A Hopper GPU at work as a well-fed training job shows it (the recorded H200 trace has SM
# active 95.5 %, occupancy 14.1 %, tensor 92.7 %).
GPM_BUSY: dict[str, Any] = {
    "sm_active_pct": 92.0,
    "sm_occupancy_pct": 30.0,
    "tensor_active_pct": 60.0,
    "dram_active_pct": 35.0,
    "power_w": 620.0,
    "power_limit_w": 700.0,
}


def stream(n: int = 300, **values: Any) -> list[Message]:
    s = Stream()
    msgs: list[Message] = [s.hello]
    msgs += [s.sample(t, **{**GPM_BUSY, **values}) for t in range(n)]
    return msgs


def run(msgs: list[Message]) -> list[Finding]:
    hello = next(m for m in msgs if isinstance(m, Hello))
    samples = [m for m in msgs if isinstance(m, Sample)]
    out = diagnose(hello, samples, [], [], samples[0].t, samples[-1].t)
    for f in out:
        assert "?" not in finding_sentence(f), finding_sentence(f)
    return out


def ids(out: list[Finding]) -> set[str]:
    return {f.id for f in out}


def test_a_well_fed_hopper_job_gets_no_utilization_finding() -> None:
    assert ids(run(stream())) == {"diag_none"}


def test_busy_but_not_compute_bound() -> None:
    # 99 % "utilization", a quarter of the SMs working: small kernels launched one by one.
    out = run(stream(util_gpu_pct=99, sm_active_pct=24.0, sm_occupancy_pct=6.0))
    (f,) = [f for f in out if f.id == "diag_not_compute_bound"]
    assert f.verdict == "warn" and f.gpu == 0
    assert f.values["sm_active_pct"] == pytest.approx(24.0)
    text = finding_sentence(f)
    assert "99 % utilization" in text and "active only 24 %" in text
    assert "batch size" in text
    assert "diag_none" not in ids(out)


def test_a_throttled_job_is_not_called_not_compute_bound() -> None:
    # Thermal slowdown: clocks held at 1,100 of 1,410 MHz, the SMs still fully at work.
    throttled = {"clock_reasons": 0x20, "sm_clock_mhz": 1100, "temp_gpu_c": 88}
    out = run(stream(util_gpu_pct=99, **throttled))
    assert "diag_thermal" in ids(out)
    assert not ids(out) & {"diag_not_compute_bound", "diag_memory_bound"}
    # Even with low SM activity on the record, the throttled samples are the diagnosis's
    # thermal finding, not a second, contradicting explanation.
    out = run(stream(util_gpu_pct=99, sm_active_pct=30.0, **throttled))
    assert "diag_thermal" in ids(out) and "diag_not_compute_bound" not in ids(out)


def test_memory_bound() -> None:
    out = run(stream(util_gpu_pct=99, sm_active_pct=35.0, dram_active_pct=85.0))
    assert "diag_memory_bound" in ids(out) and "diag_not_compute_bound" not in ids(out)
    (f,) = [f for f in out if f.id == "diag_memory_bound"]
    assert "DRAM was busy 85 %" in finding_sentence(f)


def test_tensor_cores_idle_in_a_busy_job() -> None:
    out = run(stream(util_gpu_pct=99, sm_active_pct=88.0, tensor_active_pct=0.5))
    (f,) = [f for f in out if f.id == "diag_tensor_idle"]
    assert f.verdict == "info" and "autocast" in finding_sentence(f)
    # Half-precision math on the FP16 pipes meanwhile: surely mixed precision, a warning.
    out = run(stream(util_gpu_pct=99, sm_active_pct=88.0, tensor_active_pct=0.5,
                     fp16_active_pct=35.0))  # fmt: skip
    (f,) = [f for f in out if f.id == "diag_tensor_idle"]
    assert f.verdict == "warn" and "FP16 pipes busy 35 %" in finding_sentence(f)
    # A job that keeps the tensor cores busy half the time does not get it.
    assert "diag_tensor_idle" not in ids(run(stream(util_gpu_pct=99, tensor_active_pct=50.0)))


def test_without_gpm_the_power_draw_stands_in() -> None:
    no_gpm = dict.fromkeys(utilization.GPM_METRICS)
    out = run(stream(util_gpu_pct=99, power_w=120.0, power_limit_w=400.0, **no_gpm))
    (f,) = [f for f in out if f.id == "diag_not_compute_bound"]
    assert f.values["variant"] == "power"
    text = finding_sentence(f)
    assert "30 % of its 400 W power limit" in text and "no GPM" in text
    # Near the limit: working as hard as it can, nothing to say.
    out = run(stream(util_gpu_pct=99, power_w=380.0, power_limit_w=400.0, **no_gpm))
    assert ids(out) == {"diag_none"}


def test_too_short_or_idle_windows_say_nothing() -> None:
    assert "diag_not_compute_bound" not in ids(run(stream(10, sm_active_pct=20.0)))
    assert not utilization.findings(0, [])
    idle = run(stream(util_gpu_pct=3, sm_active_pct=1.0))
    assert not ids(idle) & {"diag_not_compute_bound", "diag_memory_bound", "diag_tensor_idle"}


def test_picture_means_over_busy_samples() -> None:
    util = np.array([99.0, 99.0, 2.0, np.nan])
    sm = np.array([30.0, 20.0, 1.0, 50.0])
    p = utilization.picture(
        util, {"sm_active_pct": sm}, np.array([100.0, 300.0, 50.0, 1.0]), np.full(4, 400.0)
    )
    assert p.busy_samples == 2 and p.util == 99.0 and p.sm_active == 25.0
    assert p.tensor is None and p.has_gpm and p.power_frac == pytest.approx(0.5)
    none = utilization.picture(util, {"sm_active_pct": np.full(4, np.nan)})
    assert not none.has_gpm and none.power_frac is None


def test_diagnose_cli_on_a_written_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = Stream()
    path = tmp_path / "slow.jsonl"
    hello = {**dict(s.hello.raw), "kind": "hello"}
    lines = [protocol.encode(hello)]
    for t in range(200):
        row = [0, *({**GPM_BUSY, "util_gpu_pct": 99, "sm_active_pct": 22.0}.get(c) for c in
                    protocol.COLUMN_NAMES)]  # fmt: skip
        # The other columns of a busy, healthy A100 (clocks at max, cool, no reasons).
        base = s.sample(t)
        assert isinstance(base, Sample)
        full = [row[i] if row[i] is not None else base.rows[0][i] for i in range(len(row))]
        lines.append(protocol.encode({"kind": "sample", "seq": t + 1, "t": T0 + t, "mono": t,
                                      "gpus": [full]}))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    assert main(["diagnose", "h100-a", "--file", str(path), "--window", "10m"]) == 0
    assert "its SMs were active only 22 %" in capsys.readouterr().out
    assert main(["diagnose", "h100-a", "--file", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["id"] for f in out["diagnosis"]] == ["diag_not_compute_bound"]
