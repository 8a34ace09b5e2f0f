"""The arrival benchmark's verdict reasons are structured (an id and values) beside the
documented English ``reason``, and the GUI and the CLI word them in the user's language from
that structure: runs written as the benchmark's own JSON lines (the sampler's kinds), judged by
the real judge, worded with a translator installed; the JSON stays English; a result stored
before reasons were structured still shows its English reason."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pytest
from gpufleet.core.text import translate
from gpufleet.core.text.bench import bench_table, host_bench_line, verdict_line
from gpufleet.core.text.bench_reasons import TEMPLATES, reason_of, reasons_text
from gpufleet.core.verdicts.arrival import collect, judge
from gpufleet_sampler.bench_protocol import (
    KIND_END,
    KIND_REFUSED,
    KIND_RESULT,
    KIND_SKIP,
    KIND_START,
    KIND_TELEMETRY,
)

A100 = "NVIDIA A100-SXM4-80GB"
# An A100 held at 250 W of 400 W: matmul at ~70 % of a good card's (271 TFLOPS BF16).
LOW_POWER = {"sm_clock_mhz": 986, "sm_clock_max_mhz": 1410, "power_share": 0.9,
             "power_limit_w": 250.0, "power_default_w": 400.0, "thermal_share": 0.0,
             "pcie_width": 16, "pcie_max_width": 16, "pcie_gen": 4, "pcie_max_gen": 4}  # fmt: skip


def _lines(*objs: Mapping[str, Any]) -> list[bytes]:
    return [orjson.dumps(o) for o in objs]


def _run(gpus: int, *body: Mapping[str, Any], status: str = "ok", message: str = "") -> Any:
    start = {"kind": KIND_START, "engine": "torch", "seconds": 60,
             "gpus": [{"index": i, "name": A100} for i in range(gpus)],
             "measured_gpus": list(range(gpus))}  # fmt: skip
    end = {"kind": KIND_END, "status": status, "message": message, "elapsed_s": 50.0}
    return collect(_lines(start, *body, end))


def _result(gpu: int, metric: str, value: float) -> dict[str, Any]:
    return {"kind": KIND_RESULT, "gpu": gpu, "metric": metric, "value": value}


def _low_power_run() -> Any:
    return _run(
        2,
        _result(0, "matmul_bf16_tflops", 189.5),
        _result(0, "hbm_gbps", 1900.0),
        {"kind": KIND_TELEMETRY, "gpu": 0, **LOW_POWER},
        {"kind": KIND_SKIP, "gpu": 0, "metric": "p2p_gbps", "reason": "peer access unsupported"},
        {"kind": KIND_REFUSED, "gpu": 1, "message": "in use by another process: miner (pid 7)"},
    )


@pytest.fixture
def pseudo_zh() -> Iterator[dict[str, str]]:
    """A translator for BenchReasons and Bench that marks each sentence (its placeholders
    kept), as a real .qm would; the others untranslated."""
    table = {t: "〔" + t + "〕" for t in TEMPLATES.values()}
    table["SM clock {sm:.0f} MHz of {top:.0f} MHz max"] = "SM 时钟 {sm:.0f}/{top:.0f} MHz"
    table["BF16 matmul (TFLOPS)"] = "BF16 矩阵乘 (TFLOPS)"

    def tr(context: str, text: str) -> str:
        return table.get(text, text) if context == "BenchReasons" else text

    translate.set_translator(tr)
    yield table
    translate.set_translator(None)


def test_a_below_par_gpu_carries_its_shortfall_and_cause_as_ids_and_values() -> None:
    res = judge("h", _low_power_run())
    g0, g1 = res["gpus"]
    assert g0["verdict"] == "below_par"
    assert [r["id"] for r in g0["reasons"]] == ["shortfall", "power_lowered", "step_skipped"]
    short, cause, _skip = g0["reasons"]
    assert short["values"]["metric"] == "matmul_bf16_tflops"
    assert short["values"]["pct"] == pytest.approx(
        189.5 / g0["good_card"]["matmul_bf16_tflops"] * 100
    )
    assert cause["values"] == {"limit": 250.0, "default": 400.0, "sm": 986.0, "top": 1410.0}
    # The documented English reason, worded from the same structure.
    assert g0["reason"] == reasons_text(g0["reasons"], translate=False)
    assert g0["reason"].startswith("BF16 matmul (TFLOPS) at 70 % of a good card (189.5 of ")
    assert (
        ": clock held by a lowered power limit: 250 W of its 400 W default (SM clock 986 MHz "
        "of 1410 MHz max); ask the provider to restore it; peer copy (GB/s) not measured: "
        "peer access unsupported"
    ) in g0["reason"]
    assert g1["verdict"] == "not_measured" and [r["id"] for r in g1["reasons"]] == ["refused"]
    assert g1["reason"] == (
        "not run: in use by another process: miner (pid 7); --force runs it anyway"
    )
    assert res["reasons"] == [
        {"id": "host_below", "values": {"gpus": [0]}},
        {"id": "host_also_unmeasured", "values": {"gpus": [1]}},
    ]
    assert res["reason"] == "GPU 0 below par; GPU 1 not measured"


@pytest.mark.parametrize(
    ("telemetry", "cause"),
    [
        ({"pcie_width": 8, "pcie_max_width": 16}, "pcie_width"),
        ({"pcie_width": 16, "pcie_max_width": 16, "pcie_gen": 3, "pcie_max_gen": 4}, "pcie_gen"),
        ({"pcie_width": 16, "pcie_max_width": 16, "pcie_gen": 4, "pcie_max_gen": 4}, "pcie_full"),
    ],
)
def test_each_pcie_cause_is_its_own_id(telemetry: dict[str, Any], cause: str) -> None:
    run = _run(
        1,
        _result(0, "h2d_gbps", 13.0),
        _result(0, "d2h_gbps", 13.3),
        {"kind": KIND_TELEMETRY, "gpu": 0, **telemetry},
    )
    (g,) = judge("h", run)["gpus"]
    ids = [r["id"] for r in g["reasons"]]
    assert ids == ["shortfall", "shortfall", cause]  # one cause for both copies
    assert g["reason"] == reasons_text(g["reasons"], translate=False)


def test_the_gui_and_cli_word_the_reasons_in_the_users_language(pseudo_zh: Any) -> None:
    res = judge("h", _low_power_run())
    g0 = res["gpus"][0]
    # The JSON's reason stays English with a translator installed (docs/cli.md).
    assert g0["reason"].startswith("BF16 matmul (TFLOPS) at 70 % of a good card")
    said = reason_of(g0)
    assert said.startswith("〔BF16 矩阵乘 (TFLOPS) at 70 % of a good card (189.5 of ")
    assert "〕: 〔clock held by a lowered power limit: 250 W of its 400 W default" in said
    assert "(SM 时钟 986/1410 MHz)" in said
    assert reason_of(res["gpus"][1]) == (
        "〔not run: in use by another process: miner (pid 7); --force runs it anyway〕"
    )
    # Where the GUI and the CLI show them: the verdict line, the table, the host's line.
    assert "〔GPU 0 below par〕; 〔GPU 1 not measured〕" in verdict_line(res)
    assert said in bench_table(res)
    assert "〔GPU 0 below par〕" in host_bench_line(res, 0.0, 60.0)


def test_a_host_not_measured_says_why_from_its_first_gpus_reasons(pseudo_zh: Any) -> None:
    run = _run(1, {"kind": KIND_SKIP, "gpu": 0, "metric": "hbm_gbps", "reason": "no libcuda"})
    res = judge("h", run)
    assert res["reason"] == "GPU 0 not measured: memory bandwidth (GB/s) not measured: no libcuda"
    assert reason_of(res) == (
        "〔GPU {gpus} not measured〕".replace("{gpus}", "0")
        + ": 〔memory bandwidth (GB/s) not measured: no libcuda〕"
    )


def test_a_run_cut_short_without_a_message_has_no_dangling_colon() -> None:
    (g,) = judge("h", _run(1, status="cancelled"))["gpus"]
    assert g["reasons"] == [{"id": "ended_early_silent", "values": {"status": "cancelled"}}]
    assert g["reason"] == "the run ended early (cancelled)"
    (g,) = judge("h", _run(1, status="timeout", message="60 s bound"))["gpus"]
    assert g["reason"] == "the run ended early (timeout): 60 s bound"


def test_old_results_and_bad_translations_still_read() -> None:
    # Stored before reasons were structured: its English reason, as it was.
    assert reason_of({"reason": "GPU 0 below par"}) == "GPU 0 below par"
    # A reason id from a newer gpufleet: its id, never an exception.
    assert reason_of({"reasons": [{"id": "from_the_future", "values": {}}]}) == "from_the_future"

    def broken(context: str, text: str) -> str:
        return "{nonexistent}" if context == "BenchReasons" else text

    translate.set_translator(broken)
    try:
        res = judge("h", _low_power_run())
        assert reason_of(res["gpus"][1]).startswith("not run: in use by another process")
    finally:
        translate.set_translator(None)
