"""What an instance hides, said where the user looks: ``gpufleet check`` (text and JSON) from
a check's facts, and the evidence bundle's summary, which is the window's one judgment (the
diagnosis reconciled with what the rules fired on), not a second diagnosis of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.history.store import Store
from gpufleet.core.verdicts.bundle import build_bundle
from gpufleet.core.verdicts.sensors import check_reports
from gpufleet.core.wire.encode import encode_line
from gpufleet.core.wire.messages import Message

from tests.support.judgment_streams import ALL
from tests.support.rules_support import ROOT, T0, decode

H200_CHECK = ROOT / "docs" / "device" / "h200-check.json"
# What a virtualization layer that answers "not supported" leaves of the check's facts.
VGPU_HIDES = ("temp_gpu_c", "temp_mem_c", "power_w", "power_enforced_w", "clock_reasons")


def _facts(hidden: tuple[str, ...] = ()) -> dict[str, Any]:
    facts = json.loads(H200_CHECK.read_text())
    assert isinstance(facts, dict)
    for key in hidden:
        facts["gpus"][0][key] = None
    return facts


def _check(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "gui") + os.pathsep + str(ROOT / "remote")}
    return subprocess.run(
        [sys.executable, "-m", "gpufleet", "check", *args, "--facts", "-"],
        capture_output=True, text=True, timeout=60, input=stdin, env=env, check=False,
    )  # fmt: skip


def test_a_check_that_reports_everything_says_so() -> None:
    (rep,) = check_reports(_facts())
    # The real H200 check: no NVLink on this card (not hidden), a process with its memory.
    assert rep.hidden == () and "nvlink" not in rep.reported
    assert {"temperature", "power", "clock_reasons", "ecc", "processes"} <= set(rep.reported)
    p = _check(stdin=json.dumps(_facts()))
    assert p.returncode == 0, p.stderr
    assert "GPU 0: Reports every sensor (GPU temperature" in p.stdout


def test_check_names_what_a_vgpu_instance_hides_in_text_and_json() -> None:
    facts = _facts(VGPU_HIDES)
    facts["gpus"][0]["process_list"][0]["mem_bytes"] = None  # NVML names it, not its memory
    (rep,) = check_reports(facts)
    assert set(rep.hidden) == {"temperature", "memory_temperature", "power", "power_limit",
                               "clock_reasons", "processes"}  # fmt: skip
    p = _check(stdin=json.dumps(facts))
    line = [x for x in p.stdout.splitlines() if "hides" in x]
    assert line == [
        "  GPU 0: Reports ECC errors; hides GPU temperature, memory temperature, power draw, "
        "power limit, clock event reasons, processes."
    ], p.stdout
    p = _check("--format", "json", stdin=json.dumps(facts))
    out = json.loads(p.stdout)
    assert out["sensors"] == [{"gpu": 0, "reported": ["ecc"], "hidden": list(rep.hidden)}]


def _recent(msgs: list[Message], shift: float) -> list[Message]:
    """The stream moved to recent times (the store keeps raw samples for 7 days)."""
    lines = []
    for m in msgs:
        obj = json.loads(encode_line(m))
        if "t" in obj:
            obj["t"] += shift
        lines.append(json.dumps(obj).encode() + b"\n")
    return decode(lines)


def _bundle_summary(tmp_path: Path, case: str) -> str:
    host, msgs = ALL[case]()
    shift = time.time() - 4 * 3600 - T0
    store = Store(tmp_path / "h.sqlite")
    for m in _recent(msgs, shift):
        store.write(host, m)
    store.flush()
    assert store.errors == 0, store.last_error
    out = tmp_path / "b.zip"
    t0 = T0 + shift
    build_bundle(store, host, t0 - 10, t0 + 3 * 3600, out)
    store.close()
    with zipfile.ZipFile(out) as z:
        return z.read("summary.txt").decode("utf-8")


@pytest.mark.parametrize("case", ["hidden-4090", "hidden-a100-vgpu"])
def test_the_bundle_summary_is_the_judgment_hidden_sensors_not_judged(
    tmp_path: Path, case: str
) -> None:
    summary = _bundle_summary(tmp_path, case)
    assert "cannot be judged here" in summary
    assert "this instance does not report clock event reasons" in summary  # the alert's words
    assert "GPU 0: Reports " in summary and "hides GPU temperature" in summary
    assert "look normal" not in summary


def test_the_bundle_summary_never_calls_normal_what_the_rules_flagged(tmp_path: Path) -> None:
    summary = _bundle_summary(tmp_path, "pcie-x8-stop")
    findings = summary.split("Findings:")[1].split("Alerts:")[0]
    assert "PCIe" in findings and "x8" in findings
    assert "look normal" not in findings
