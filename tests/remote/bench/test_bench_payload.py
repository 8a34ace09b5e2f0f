"""The arrival benchmark's payload on stand-in instances (fake torch with a card's timings,
fake NVML with its telemetry), judged on the laptop's side: the verdict and reason of a
healthy card, a power-limited one, one at x8, a busy GPU, an instance without PyTorch; a
cancel that leaves nothing running; eight GPUs within the time and memory bounds."""

from __future__ import annotations

import os
import select
import subprocess
import time
from pathlib import Path

import orjson
from gpufleet.core.verdicts.arrival import collect, judge

from tests.support.bench_standin import bench_argv, card, run_bench, write_instance


def _judged(
    tmp_path: Path, cards: list[dict], seconds: float = 2.0, torch: bool = True, *extra: str
) -> dict:
    env = write_instance(tmp_path, cards, torch=torch)
    return judge("standin", collect(run_bench(env, seconds, *extra)))


def test_healthy_card_is_as_expected(tmp_path: Path) -> None:
    out = _judged(tmp_path, [card()])
    g = out["gpus"][0]
    assert out["verdict"] == "as_expected", g["reason"]
    assert g["verdict"] == "as_expected"
    assert abs(g["measured"]["matmul_bf16_tflops"] - 271.0) < 271.0 * 0.03
    assert abs(g["measured"]["hbm_gbps"] - 1830.0) < 1830.0 * 0.03
    assert "p2p_gbps" not in g["measured"] and "no peer" in g["reason"]


def test_power_limited_card_is_below_par_with_its_cause(tmp_path: Path) -> None:
    slow = card(bf16=0.7 * 271.0 / 0.869 * 0.869, fp16=0.7 * 271.0, tf32=0.7 * 135.0,
                clock=0.7, reasons=0x4, limit_w=250, default_w=400, power_w=248)  # fmt: skip
    out = _judged(tmp_path, [card(), slow])
    good, bad = out["gpus"]
    assert good["verdict"] == "as_expected"
    assert bad["verdict"] == "below_par" and out["verdict"] == "below_par"
    assert "BF16 matmul (TFLOPS) at 70 %" in bad["reason"]
    assert "lowered power limit: 250 W of its 400 W default" in bad["reason"]
    assert "hbm" not in str(bad["shortfalls"])  # memory is not clock-bound: not blamed


def test_card_at_x8_is_below_par_on_its_copies(tmp_path: Path) -> None:
    out = _judged(tmp_path, [card(h2d=13.2, d2h=13.3, width=8)])
    g = out["gpus"][0]
    assert g["verdict"] == "below_par"
    assert [s["metric"] for s in g["shortfalls"]] == ["h2d_gbps", "d2h_gbps"]
    assert "PCIe link trained at x8 of x16" in g["reason"]


def test_busy_gpu_is_refused_unless_forced(tmp_path: Path) -> None:
    miner = [{"pid": 1, "usedGpuMemory": 2 << 30}]  # pid 1 exists and is not us
    out = _judged(tmp_path, [card(), card(procs=miner)])
    assert out["gpus"][0]["verdict"] == "as_expected"
    busy = out["gpus"][1]
    assert busy["verdict"] == "not_measured" and busy["measured"] == {}
    assert "in use by another process" in busy["reason"] and "--force" in busy["reason"]
    assert out["verdict"] == "not_measured" and "GPU 1 not measured" in out["reason"]
    forced = _judged(tmp_path, [card(), card(procs=miner)], 2.0, True, "--force")
    assert forced["gpus"][1]["verdict"] == "as_expected"


def test_instance_without_pytorch_says_what_was_not_measured(tmp_path: Path) -> None:
    out = _judged(tmp_path, [card()], torch=False)
    g = out["gpus"][0]
    assert out["engine"] == "none"
    assert g["verdict"] == "not_measured" and g["measured"] == {}
    assert "no PyTorch on this instance" in " ".join(out["engine_notes"])
    assert "no PyTorch and no CUDA driver library (libcuda) found" in g["reason"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"


def test_cancel_leaves_nothing_running(tmp_path: Path) -> None:
    env = write_instance(tmp_path, [card(), card()])
    p = subprocess.Popen(bench_argv(60.0, "--cancel-on-eof"), env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, start_new_session=True)  # fmt: skip
    assert p.stdout is not None and p.stdin is not None
    worker = None
    lines = []
    while worker is None:
        ready, _, _ = select.select([p.stdout], [], [], 60.0)
        assert ready, "no bench_start line"
        line = p.stdout.readline()
        assert line, "the payload ended before it started"
        obj = orjson.loads(line) if line.strip() else {}
        lines.append(line)
        if obj.get("kind") == "bench_start":
            worker = int(obj["pid"])
    assert _alive(worker)
    p.stdin.close()  # the laptop closed the channel
    rest = p.stdout.read()
    assert p.wait(timeout=30) == 3
    ends = [orjson.loads(x) for x in rest.splitlines() if b"bench_end" in x]
    assert ends and ends[-1]["status"] == "cancelled"
    for _ in range(50):
        if not _alive(worker):
            break
        time.sleep(0.1)
    assert not _alive(worker)
    try:
        os.killpg(worker, 0)
        group_left = True
    except ProcessLookupError:
        group_left = False
    assert not group_left


def test_eight_gpus_within_time_and_memory_bounds(tmp_path: Path) -> None:
    env = write_instance(tmp_path, [card() for _ in range(8)])
    run = collect(run_bench(env, 6.0, "--mem-max-gib", "4"))
    assert run.end["status"] == "done"
    assert sorted(run.measured) == list(range(8))
    for g in range(8):
        assert len(run.measured[g]) == 7, run.skipped.get(g)
        t = run.telemetry[g]
        assert 0 < t["mem_peak_bytes"] <= t["mem_bound_bytes"] == 4 << 30
