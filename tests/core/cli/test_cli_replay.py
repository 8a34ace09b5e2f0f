"""``gpufleet replay`` of each sim scenario's recorded stream names the right alert at the
right time; garbage lines are counted, not fatal; ``gpufleet rules list`` and
``gpufleet diagnose --file`` work on the same recordings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gpufleet.cli.main import main

from tests.support.rules_support import sim_stream_lines

# scenario -> (samples to record, {(rule, gpu, key): seconds after the first sample})
EXPECTED: dict[str, tuple[int, dict[tuple[str, int | None, str], float]]] = {
    "healthy-8xa100": (300, {}),
    "thermal-throttle-h100": (100, {
        ("mem_temp_high", 5, ""): 80,  # over its own 95 °C limit for its 60 s
        ("temp_near_slowdown", 5, ""): 49,
        ("thermal_throttle", 5, ""): 51,
    }),
    "power-capped-4090": (30, {("power_limit_low", 0, ""): 0, ("power_limit_low", 1, ""): 0}),
    "crashed-idle": (1100, {("idle_billed", None, ""): 1080}),
    "foreign-process": (90, {("miner_process", 3, ""): 60}),
    # 21 min degraded on GPU 1's down link, then GPU 2's double-bit error and its fall.
    "ecc-xid": (1380, {
        ("ecc_dbe_increase", 2, ""): 1260,
        ("remap_pending", 2, ""): 0,
        ("xid", 2, "48"): 1260,
        ("xid", 2, "79"): 1275,
        ("gpu_lost", 2, ""): 1275,
        ("nvlink_down", 1, ""): 10,  # GPU 1's NVLink link 5 is down from the start (for 10 s)
    }),
}  # fmt: skip


def record(tmp_path: Path, scenario: str, count: int, extra: bytes = b"") -> Path:
    path = tmp_path / f"{scenario}.jsonl"
    path.write_bytes(b"".join(sim_stream_lines(scenario, count)) + extra)
    return path


def replay_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["replay", *argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, dict)
    return out


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_replay_names_the_right_alert_at_the_right_time(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    count, expected = EXPECTED[scenario]
    path = record(tmp_path, scenario, count)
    out = replay_json(capsys, str(path), "--price-per-hour", "3")
    fired = {
        (a["rule_id"], a["gpu"], a["key"]): a["t_rel_s"]
        for a in out["alerts"]
        if a["state"] == "firing"
    }
    assert fired.keys() == expected.keys()
    for key, t in expected.items():
        assert fired[key] == pytest.approx(t, abs=2), key
    assert out["bad_lines"] == 0 and out["samples"] == count
    assert out["cost"]["total"] == pytest.approx(3.0 * (count - 1) / 3600)
    assert all(a["title"] and a["sentence"] for a in out["alerts"])
    assert out["diagnosis"]


def test_text_output_and_garbage_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = record(tmp_path, "ecc-xid", 1380, b'not json\n{"kind": "sample"}\n' + b"x" * 100 + b"\n")
    assert main(["replay", str(path), "--host", "rented-a100"]) == 0
    text = capsys.readouterr().out
    assert "3 bad line(s) skipped" in text
    lines = [line for line in text.splitlines() if "FIRING" in line]
    assert len(lines) == 6  # five on GPU 2, GPU 1's NVLink link down
    assert any("+1275s" in line and "Xid 79" in line for line in lines)
    assert "Diagnosis:" in text and "fell off the bus" in text
    assert "rented-a100" in text


def test_replay_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello world\n")
    r = subprocess.run(
        [sys.executable, "-m", "gpufleet", "replay", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1 and "no hello line" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "gpufleet", "replay", str(tmp_path / "missing.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 8 and "no such file" in r.stderr


def test_config_host_price_and_rule_overrides_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpufleet.core.config import paths

    paths.config_dir().mkdir(parents=True, exist_ok=True)
    paths.rules_file().write_text("[rules.idle_billed]\nfor_s = 60\n")
    path = record(tmp_path, "crashed-idle", 300)
    out = replay_json(capsys, str(path), "--price-per-hour", "10", "--currency", "EUR")
    (a,) = [a for a in out["alerts"] if a["rule_id"] == "idle_billed"]
    assert a["t_rel_s"] == pytest.approx(240, abs=2)
    assert "€" in a["sentence"] and out["cost"]["currency"] == "EUR"


def test_rules_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list"]) == 0
    text = capsys.readouterr().out
    assert "thermal_throttle" in text and "idle_billed" in text and "15 min" in text
    assert main(["rules", "list", "--format", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rules} >= {"xid", "budget_80"}


def test_diagnose_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = record(tmp_path, "thermal-throttle-h100", 200)
    assert main(["diagnose", "h100-a", "--file", str(path), "--window", "2m"]) == 0
    text = capsys.readouterr().out
    assert "GPU 5 was slowed by temperature" in text
    assert main(["diagnose", "h100-a", "--file", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # The thermal finding, and the throttled share every view computes the same way.
    # The alerts of the window are in its diagnosis too (diag_alert where it has no finding).
    got = sorted(f["id"] for f in out["diagnosis"] if f["id"] != "diag_alert")
    assert got == ["diag_thermal", "diag_throttled"]


def test_diagnose_from_the_history_store(capsys: pytest.CaptureFixture[str]) -> None:
    from gpufleet.core.config import paths
    from gpufleet.core.history.store import Store
    from gpufleet.core.wire.messages import Sample

    from tests.support.rules_support import decode

    msgs = decode(sim_stream_lines("power-capped-4090", 120))
    with Store(paths.history_file()) as st:
        for m in msgs:
            st.write("4090-x2", m)
        st.flush()
    last = max(m.t for m in msgs if isinstance(m, Sample))
    import datetime

    until = datetime.datetime.fromtimestamp(last, datetime.timezone.utc).isoformat()
    rc = main(["diagnose", "4090-x2", "--window", "1m", "--format", "json", "--until", until])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert {f["id"] for f in out["diagnosis"]} == {"diag_power_limit", "diag_throttled"}
    assert out["samples"] >= 55
    assert main(["diagnose", "nobody", "--window", "1m"]) == 8
    assert "no history for host 'nobody'" in capsys.readouterr().err


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_replay_tells_restart_from_stall_and_disconnect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded stream (lines written here from the protocol) with a 2-hour absence back-
    filled from the day tier, then a sampler restart: a restart note, no stall."""
    from tests.support.rules_support import BUSY, T0, Stream, row

    s = Stream()
    hello = dict(s.hello.raw)
    lines = [_line(hello)]
    seq = 0

    def sample(t: float) -> bytes:
        return _line({"kind": "sample", "seq": seq, "t": T0 + t, "mono": t, "gpus": [row(0, BUSY)]})

    for t in range(300):
        seq += 1
        lines.append(sample(t))
    lines.append(_line(hello))  # the reconnect
    lines.append(_line({"kind": "event", "seq": seq, "t": T0 + 7500, "type": "note",
                        "gpu": None, "code": None, "reason": "ring", "gap_from": seq + 1,
                        "gap_to": seq + 60 * 100, "message": "day tier"}))  # fmt: skip
    for t in range(300, 3900, 60):  # the day tier: one sample a minute
        seq += 90
        lines.append(sample(t))
    for t in range(3900, 7500):  # the raw ring's hour, then live
        seq += 1
        lines.append(sample(t))
    lines.append(_line({**hello, "run_id": "second-life"}))
    for t in range(7560, 7700):
        seq += 1
        lines.append(sample(t))
    path = tmp_path / "away.jsonl"
    path.write_bytes(b"".join(lines))
    out = replay_json(capsys, str(path))
    fired = [(a["rule_id"], a["t_rel_s"]) for a in out["alerts"] if a["state"] == "firing"]
    assert fired == [("sampler_restarted", 7560)]
    (a,) = [a for a in out["alerts"] if a["state"] == "firing"]
    assert "restarted" in a["title"] and "driver hung" not in a["sentence"]
