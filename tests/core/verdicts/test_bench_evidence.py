"""The arrival benchmark's results where a user looks after the run: the evidence bundle
(the runs of the window, else the latest before it) and the Prometheus gauges (fed by a run,
and seeded from the history when an exporter starts). The results are the sampler's own
benchmark on the simulator's power-capped 4090s and idle A100s, judged as the CLI judges."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import orjson
from gpufleet.core.history import bench_results
from gpufleet.core.history.store import Store
from gpufleet.core.pipeline.bench import seed_bench
from gpufleet.core.prometheus.exporter import FleetMetrics
from gpufleet.core.verdicts.arrival import collect, judge
from gpufleet.core.verdicts.bundle import build_bundle

from tests.support.paths import ROOT


def sim_bench(host: str, scenario: str) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "bench", "--backend", "sim",
         "--scenario", scenario, "--seconds", "2"],
        capture_output=True, cwd=ROOT / "remote", timeout=120, check=False,
    )  # fmt: skip
    assert p.stdout, p.stderr
    return judge(host, collect(p.stdout.splitlines()))


def gauge_lines(fm: FleetMetrics, name: str) -> list[str]:
    return [ln for ln in fm.render().decode().splitlines() if ln.startswith(name + "{")]


def test_gauges_say_each_gpus_verdict_and_ratio_to_a_good_card(tmp_path: Path) -> None:
    capped = sim_bench("4090-x2", "power-capped-4090")
    assert capped["verdict"] == "below_par"
    fm = FleetMetrics()
    assert gauge_lines(fm, "gpufleet_bench_verdict") == []  # no run, no series
    fm.set_bench("4090-x2", capped)
    verdicts = gauge_lines(fm, "gpufleet_bench_verdict")
    assert len(verdicts) == 2
    assert all('verdict="below_par"' in v and v.endswith(" 2") for v in verdicts)
    ratios = {
        ln.split('metric="')[1].split('"')[0]: float(ln.rsplit(" ", 1)[1])
        for ln in gauge_lines(fm, "gpufleet_bench_good_card_ratio")
        if 'gpu="0"' in ln
    }
    assert 0.6 < ratios["matmul_bf16_tflops"] < 0.85  # the clock held by 300 W of 450 W
    assert ratios["hbm_gbps"] > 0.95  # memory is not clock-bound
    assert "p2p_gbps" not in ratios  # not measured: no series, never a zero
    assert "# TYPE gpufleet_bench_verdict gauge" in fm.render().decode()


def test_exporter_is_seeded_with_each_hosts_latest_run(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    capped = sim_bench("4090-x2", "power-capped-4090")
    bench_results.record(path, {**capped, "verdict": "as_expected"}, t=1000.0)
    bench_results.record(path, capped, t=2000.0)
    fm = FleetMetrics()
    seed_bench(fm, path, ["4090-x2", "never-benched"])
    assert all('verdict="below_par"' in v for v in gauge_lines(fm, "gpufleet_bench_verdict"))
    assert "never-benched" not in fm.render().decode()


def test_bundle_carries_the_window_runs_else_the_latest_before(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    idle = sim_bench("a100-eval", "crashed-idle")
    with Store(path) as store:
        bench_results.record(path, idle, t=1000.0)
        bench_results.record(path, {**idle, "verdict": "below_par"}, t=5000.0)
        out = tmp_path / "b.zip"
        build_bundle(store, "a100-eval", 4000.0, 6000.0, out)
        inside = orjson.loads(zipfile.ZipFile(out).read("benchmarks.json"))
        assert [r["verdict"] for r in inside] == ["below_par"]
        build_bundle(store, "a100-eval", 2000.0, 3000.0, out)
        before = orjson.loads(zipfile.ZipFile(out).read("benchmarks.json"))
        assert [r["verdict"] for r in before] == ["as_expected"]
        assert before[0]["gpus"][0]["good_card"] and before[0]["t"].startswith("1970")
        build_bundle(store, "other-host", 0.0, 9000.0, out)
        assert orjson.loads(zipfile.ZipFile(out).read("benchmarks.json")) == []
