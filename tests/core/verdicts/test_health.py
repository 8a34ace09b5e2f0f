"""The health check's verdicts on the real sampler's ``check`` facts (sim scenarios)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.findings import Finding
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check, overall_verdict

from tests.support.rules_support import ROOT


def sampler(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT / "remote"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full_env,
    )


def check(scenario: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    r = sampler("check", "--backend", "sim", "--scenario", scenario, *extra, env=env)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    assert isinstance(facts, dict)
    return facts


def by(findings: list[Finding], verdict: str) -> set[tuple[str, int | None]]:
    return {(f.id, f.gpu) for f in findings if f.verdict == verdict}


def test_healthy_passes(tmp_path: Path) -> None:
    findings = evaluate_check(check("healthy-8xa100", "--state-dir", str(tmp_path)))
    assert overall_verdict(findings) == "pass"
    assert by(findings, "warn") == set() and by(findings, "fail") == set()
    ids = {f.id for f in findings}
    assert {"driver", "power_limit", "temperature", "pcie_link", "ecc", "processes"} <= ids
    assert all(finding_sentence(f) for f in findings)


def test_power_capped_4090_fails_on_the_power_limit(tmp_path: Path) -> None:
    findings = evaluate_check(check("power-capped-4090", "--state-dir", str(tmp_path)))
    assert overall_verdict(findings) == "fail"
    assert by(findings, "fail") == {("power_limit", 0), ("power_limit", 1)}
    (f,) = [f for f in findings if f.id == "power_limit" and f.gpu == 0]
    assert f.values["power_limit_w"] == 300.0 and f.values["power_default_w"] == 450.0
    text = finding_sentence(f)
    assert "300 W" in text and "450 W" in text and "67 %" in text
    # Persistence mode is off on these GeForce boards: a warning, not the failure.
    assert ("persistence_mode", 0) in by(findings, "warn")


def test_ecc_xid_fails_once_a_daemon_has_seen_the_xids(tmp_path: Path) -> None:
    common = ["--backend", "sim", "--scenario", "ecc-xid", "--state-dir", str(tmp_path)]
    env = {"GPUFLEET_SIM_TIME_SCALE": "0.0007"}  # Xid 48 after 0.88 s, Xid 79 10 ms later
    # Before anyone watched: the board arrives with the previous tenant's uncorrectable error
    # still waiting for a reset (remap pending), which fails the start-of-rental check.
    fresh = evaluate_check(check("ecc-xid", "--state-dir", str(tmp_path)))
    assert overall_verdict(fresh) == "fail"
    assert ("remapped_rows", 2) in by(fresh, "fail")
    assert ("ecc", 2) in by(fresh, "warn")
    assert r_ok(sampler("daemon", *common, "--interval", "0.05", env=env))
    try:
        deadline = time.monotonic() + 30
        while True:
            facts = check("ecc-xid", "--state-dir", str(tmp_path), env=env)
            codes = [e.get("code") for e in facts["xid"]["events"]]
            if 79 in codes or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    finally:
        sampler("stop", *common)
    findings = evaluate_check(facts)
    assert overall_verdict(findings) == "fail"
    # GPU 1 arrives with one NVLink link down (11 of 12 up).
    assert by(findings, "fail") == {("xid", 2), ("remapped_rows", 2), ("nvlink", 1)}
    (x,) = [f for f in findings if f.id == "xid" and f.gpu == 2]
    assert x.values["xids"] == [48, 79]
    text = finding_sentence(x)
    assert "48, 79" in text and "fallen off the bus" in text and "double-bit" in text


def r_ok(r: subprocess.CompletedProcess[str]) -> bool:
    assert r.returncode == 0, r.stderr
    return True


BASE_GPU: dict[str, Any] = {
    "index": 0,
    "name": "NVIDIA A100-SXM4-80GB",
    "persistence_mode": True,
    "pstate": 0,
    "util_gpu_pct": 0,
    "power_enforced_w": 400.0,
    "power_default_w": 400.0,
    "temp_gpu_c": 35,
    "temp_slowdown_c": 89,
    "temp_mem_c": 40,
    "temp_mem_max_c": 95,
    "pcie_gen": 1,
    "pcie_max_gen": 4,
    "pcie_width": 16,
    "pcie_max_width": 16,
    "nvlink_links": 12,
    "nvlink_up": 12,
    "ecc_mode": True,
    "ecc_dbe_vol": 0,
    "ecc_sbe_agg": 0,
    "ecc_dbe_agg": 0,
    "remapped_rows_correctable": 0,
    "remapped_rows_uncorrectable": 0,
    "remap_pending": 0,
    "remap_failed": 0,
    "retired_pending": None,
    "process_list": [],
    "mem_total_bytes": 80 << 30,
    "mem_reserved_bytes": 600 << 20,
    "virtualization_mode": "none",
}


def facts(**gpu: Any) -> dict[str, Any]:
    return {
        "kind": "check",
        "driver_version": "550.90.07",
        "cuda_version": "12.4",
        "host": {"user": "me"},
        "gpus": [{**BASE_GPU, **gpu}],
        "xid": {"seen": False, "source": "daemon", "since": 1.7e9, "events": []},
    }


@pytest.mark.parametrize(
    ("gpu", "fid", "verdict"),
    [
        ({}, "pcie_link", "pass"),  # Gen1 at idle is on purpose
        ({"pcie_width": 8}, "pcie_link", "warn"),
        ({"remap_pending": 1}, "remapped_rows", "fail"),
        ({"remap_failed": 1}, "remapped_rows", "fail"),
        ({"ecc_dbe_vol": 1}, "ecc", "fail"),
        ({"retired_pending": 1}, "retired_pages", "fail"),
        ({"temp_gpu_c": 85}, "temperature", "fail"),
        ({"temp_gpu_c": 65}, "temperature", "warn"),  # that hot at idle: poor cooling
        ({"temp_mem_c": 102}, "mem_temperature", "fail"),
        ({"nvlink_up": 11}, "nvlink", "fail"),
        ({"mem_reserved_bytes": 8 << 30}, "reserved_memory", "warn"),
        ({"virtualization_mode": "vgpu"}, "virtualization", "warn"),
        ({"persistence_mode": False}, "persistence_mode", "warn"),
        ({"lost": 1}, "gpu_lost", "fail"),
        ({"process_list": [{"pid": 9, "name": "xmrig", "user": "me"}]}, "processes", "fail"),
        ({"process_list": [{"pid": 9, "name": "python", "user": "bob"}]}, "processes", "warn"),
        ({"process_list": [{"pid": 9, "name": "python", "user": "me"}]}, "processes", "pass"),
        (
            {"pstate": 8, "util_gpu_pct": 30, "process_list": [{"pid": 9, "user": "me"}]},
            "pstate",
            "warn",
        ),
    ],
)
def test_verdicts_on_recorded_facts(gpu: dict[str, Any], fid: str, verdict: str) -> None:
    findings = evaluate_check(facts(**gpu))
    got = {f.id: f for f in findings if f.gpu == 0}
    assert got[fid].verdict == verdict
    assert "?" not in finding_sentence(got[fid]).replace("?)", "")


def test_allow_list_from_the_host_config() -> None:
    f = facts(process_list=[{"pid": 9, "name": "jupyter", "user": "me"}])
    host = HostConfig(name="h", allowed_processes=("python*",))
    (p,) = [x for x in evaluate_check(f, host) if x.id == "processes"]
    assert p.verdict == "warn"


def test_critical_and_application_xids() -> None:
    f = facts()
    f["xid"]["events"] = [{"gpu": 0, "code": 13, "t": 1.7e9}]
    (x,) = [x for x in evaluate_check(f) if x.id == "xid" and x.gpu == 0]
    assert x.verdict == "warn"
    f["xid"]["events"].append({"gpu": 0, "code": 79, "t": 1.7e9})
    (x,) = [x for x in evaluate_check(f) if x.id == "xid" and x.gpu == 0]
    assert x.verdict == "fail" and x.values["xids"] == [13, 79]


@pytest.mark.parametrize(
    "xid",
    [
        None,  # an older sampler: no xid section at all
        {"seen": "unknown", "source": "none", "events": []},  # a one-shot check, no daemon
    ],
)
def test_unknown_xids_are_not_a_pass(xid: dict[str, Any] | None) -> None:
    """Nothing watched the driver's Xids: the line says they could not be checked and why,
    as INFO, never PASS; the overall verdict (and the exit code) stays with what was checked."""
    f = facts()
    f["xid"] = xid
    findings = evaluate_check(f)
    (x,) = [x for x in findings if x.id == "xid"]
    assert x.verdict == "info"
    text = finding_sentence(x)
    assert text.startswith("Xid errors could not be checked: no sampler daemon has been watching")
    assert overall_verdict(findings) == "pass"


def test_check_cli_prints_unknown_xids_as_info_and_exits_by_the_verdict() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "gpufleet", "check", "demo:healthy-8xa100"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    lines = p.stdout.splitlines()
    (xid,) = [line for line in lines if "Xid errors" in line]
    assert xid.strip().startswith("[INFO] Xid errors could not be checked"), p.stdout
    assert p.returncode == (1 if lines[0].endswith("FAIL") else 0), p.stderr


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ([], "must be a JSON object"),
        ({"kind": "error", "message": "NVML not found"}, "NVML not found"),
        ({"kind": "check"}, "no 'gpus' list"),
    ],
)
def test_bad_facts_are_one_line_errors(bad: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        evaluate_check(bad)


# --- recorded facts: the real NVML trace format --------------------------------------------

H200_CHECK = ROOT / "docs" / "device" / "h200-check.json"


def _h200() -> dict[str, Any]:
    facts = json.loads(H200_CHECK.read_text())
    assert isinstance(facts, dict)
    return facts


def test_real_h200_check_facts() -> None:
    # Recorded on a real H200 (nvml backend): virtualization_mode is NVML's integer, 1 =
    # passthrough; 18.37 GB used, 18.36 GB held by the listed process.
    findings = evaluate_check(_h200())
    got = {f.id: f for f in findings if f.gpu == 0}
    assert got["virtualization"].verdict == "pass"
    assert got["virtualization"].values["mode"] == "passthrough"
    assert got["hidden_memory"].verdict == "pass"
    assert got["mem_temperature"].values["limit_c"] == 95
    assert overall_verdict(findings) == "pass"


@pytest.mark.parametrize(
    ("mode", "name", "verdict"),
    [(0, "none", "pass"), (1, "passthrough", "pass"), (2, "vgpu", "warn"), (3, "host_vgpu", "pass"),
     ("vgpu", "vgpu", "warn"), ("NVML_GPU_VIRTUALIZATION_MODE_VGPU", "vgpu", "warn")],
)  # fmt: skip
def test_virtualization_mode_as_nvml_reports_it(mode: Any, name: str, verdict: str) -> None:
    facts = _h200()
    facts["gpus"][0]["virtualization_mode"] = mode
    (f,) = [f for f in evaluate_check(facts) if f.id == "virtualization"]
    assert (f.values["mode"], f.verdict) == (name, verdict)
    if verdict == "warn":
        assert "vGPU guest" in finding_sentence(f)


def test_hidden_memory_and_memory_over_its_own_limit() -> None:
    facts = _h200()
    g = facts["gpus"][0]
    g["mem_used_bytes"] = g["process_list"][0]["mem_bytes"] + 30 * (1 << 30)
    g["temp_mem_c"] = 96  # its own limit is 95 °C
    got = {f.id: f for f in evaluate_check(facts) if f.gpu == 0}
    assert got["hidden_memory"].verdict == "warn"
    assert "30.0 GiB of its memory is in use" in finding_sentence(got["hidden_memory"])
    assert got["mem_temperature"].verdict == "fail"


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "gui") + os.pathsep + str(ROOT / "remote")}
    return subprocess.run(
        [sys.executable, "-m", "gpufleet", "check", *args],
        capture_output=True,
        text=True,
        timeout=60,
        input=None if stdin is None else stdin.decode(),
        env=env,
        check=False,
    )


def test_check_facts_offline_same_verdicts_and_exit_code(tmp_path: Path) -> None:
    p = _cli("--facts", str(H200_CHECK))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == "vm: PASS"
    assert "virtualization passthrough" in p.stdout
    # A vGPU guest with a failing limit, from stdin, as JSON: the same exit code as live.
    facts = _h200()
    facts["gpus"][0]["virtualization_mode"] = 2
    facts["gpus"][0]["power_enforced_w"] = 400.0
    p = _cli("rental-7", "--facts", "-", "--format", "json", stdin=json.dumps(facts).encode())
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["host"] == "rental-7" and out["verdict"] == "fail"
    verdicts = {f["id"]: f["verdict"] for f in out["findings"] if f["gpu"] == 0}
    assert verdicts["virtualization"] == "warn" and verdicts["power_limit"] == "fail"
    # Its own JSON output judged again gives the same answer.
    saved = tmp_path / "out.json"
    saved.write_text(p.stdout)
    again = _cli("--facts", str(saved), "--format", "json")
    assert again.returncode == 1 and json.loads(again.stdout)["verdict"] == "fail"


@pytest.mark.parametrize(
    ("content", "needle"),
    [("", "empty"), ("not json", "no check object"), ("[1]", "must be a JSON object"),
     ('{"kind": "check"}', "no 'gpus' list")],
)  # fmt: skip
def test_check_facts_bad_input(tmp_path: Path, content: str, needle: str) -> None:
    f = tmp_path / "facts.json"
    f.write_text(content)
    p = _cli("--facts", str(f))
    assert p.returncode != 0 and needle in p.stderr and "Traceback" not in p.stderr
