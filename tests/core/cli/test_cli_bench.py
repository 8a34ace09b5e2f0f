"""`gpufleet bench` and `gpufleet check --bench` as real subprocesses on the demo fleet (the
simulator's cards run the benchmark payload through the local link): the documented JSON,
each demo host's verdict and reason, the record in the history, the comparison with the
host's earlier run, and the errors a user can make."""

from __future__ import annotations

import subprocess
from typing import Any

import orjson
from gpufleet.cli.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from gpufleet.core.config import paths
from gpufleet.core.history import bench_results
from gpufleet_sampler.bench_protocol import METRICS

from tests.support.cli_run import gpufleet as run_gpufleet

VERDICTS = {"as_expected", "below_par", "not_measured"}


def gpufleet(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_gpufleet(*args, timeout=timeout)


def bench_json(host: str, *extra: str) -> tuple[int, dict[str, Any]]:
    p = gpufleet("bench", host, "--seconds", "3", "--format", "json", *extra)
    assert "Traceback" not in p.stderr, p.stderr
    return p.returncode, orjson.loads(p.stdout)


def assert_documented_shape(out: dict[str, Any]) -> None:
    assert isinstance(out["host"], str)
    for g in out["gpus"]:
        assert isinstance(g["index"], int) and isinstance(g["name"], str)
        assert g["verdict"] in VERDICTS
        assert set(g["measured"]) <= set(METRICS)
        assert all(isinstance(v, float) for v in g["measured"].values())
        assert isinstance(g["good_card"], dict) and isinstance(g["datasheet"], dict)
        assert g["advertised"] is None or isinstance(g["advertised"], dict)
        assert isinstance(g["reason"], str) and g["reason"]


def test_idle_a100_is_as_expected_and_recorded_then_compared() -> None:
    rc, out = bench_json("demo:a100-eval")
    assert rc == EXIT_OK
    assert_documented_shape(out)
    assert out["verdict"] == "as_expected"
    assert all(g["verdict"] == "as_expected" for g in out["gpus"])
    assert all("matmul_bf16_tflops" in g["measured"] for g in out["gpus"])
    runs = bench_results.runs_of_host(paths.history_file(demo=True), "a100-eval")
    assert [r.verdict for r in runs] == ["as_expected"]
    _rc, again = bench_json("demo:a100-eval")
    assert again["compare"]["host_runs"] == 1
    assert again["compare"]["host_earlier"]["hbm_gbps"] > 0


def test_hot_gpu_5_of_h100_a_is_below_par_for_heat() -> None:
    rc, out = bench_json("demo:h100-a")
    assert rc == EXIT_FAILURE
    assert_documented_shape(out)
    low = [g["index"] for g in out["gpus"] if g["verdict"] == "below_par"]
    assert low == [5], [(g["index"], g["reason"]) for g in out["gpus"]]
    assert "heat" in out["gpus"][5]["reason"] or "thermal" in out["gpus"][5]["reason"]


def test_power_capped_4090s_are_below_par_for_the_power_limit() -> None:
    rc, out = bench_json("demo:4090-x2")
    assert rc == EXIT_FAILURE
    assert [g["verdict"] for g in out["gpus"]] == ["below_par", "below_par"]
    for g in out["gpus"]:
        assert "lowered power limit: 300 W of its 450 W default" in g["reason"]
        assert "p2p_gbps" not in g["measured"]  # GeForce: no peer access, said so
        assert "peer access" in g["reason"]


def test_busy_gpu_of_a100_shared_is_refused() -> None:
    rc, out = bench_json("demo:a100-shared")
    assert rc == EXIT_OK  # nothing measured is below par: refused is not a failure
    busy = [g for g in out["gpus"] if g["verdict"] == "not_measured"]
    assert [g["index"] for g in busy] == [3]
    assert busy[0]["measured"] == {} and "xmrig" in busy[0]["reason"]
    assert "--force" in busy[0]["reason"]
    assert out["verdict"] == "not_measured"


def test_check_of_a_host_never_benchmarked_offers_it_once() -> None:
    p = gpufleet("check", "demo:a100-eval")
    assert "'gpufleet bench a100-eval' measures what it delivers" in p.stdout
    bench_json("demo:a100-eval")
    p = gpufleet("check", "demo:a100-eval")
    assert "gpufleet bench" not in p.stdout


def test_check_with_bench_adds_the_benchmark_and_its_exit_code() -> None:
    p = gpufleet("check", "demo:4090-x2", "--bench", "--bench-seconds", "3", "--format", "json")
    out = orjson.loads(p.stdout)
    assert p.returncode == EXIT_FAILURE
    assert out["bench"]["host"] == "4090-x2" and out["bench"]["verdict"] == "below_par"
    assert_documented_shape(out["bench"])
    text = gpufleet("check", "demo:a100-eval", "--bench", "--bench-seconds", "3")
    assert text.returncode == EXIT_OK, text.stderr
    assert "a100-eval: as expected" in text.stdout and "Good card" in text.stdout


def test_bad_arguments_get_one_line_errors() -> None:
    p = gpufleet("bench", "demo:a100-eval", "--seconds", "0.5")
    assert p.returncode == EXIT_USAGE and "between 1 and 3600" in p.stderr
    p = gpufleet("bench", "demo:a100-eval", "--gpus", "one")
    assert p.returncode == EXIT_USAGE and "expected indices like 0,1,3" in p.stderr
    p = gpufleet("check", "--facts", "-", "--bench")
    assert p.returncode == EXIT_USAGE and "cannot go with --facts" in p.stderr
