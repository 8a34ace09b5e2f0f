"""The arrival benchmark without PyTorch, through the CUDA driver library: a stand-in libcuda
(tests/fakes/libcuda/standin.c, compiled here with cc) with the real entry points and a
card's copy timings. The copies are measured and judged, matmul is said not measured (no
cuBLAS), and a card at x8 comes out below par on its host copies with the PCIe cause."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpufleet.core.verdicts.arrival import collect, judge

from tests.support.bench_standin import card, run_bench, write_instance
from tests.support.paths import FAKES

SOURCE = FAKES / "libcuda" / "standin.c"


@pytest.fixture
def libcuda(tmp_path: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build the stand-in libcuda")
    out = tmp_path / "libcuda-standin.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(SOURCE)], check=True)
    return out


def test_copies_through_libcuda_are_measured_and_judged(tmp_path: Path, libcuda: Path) -> None:
    cards = [card(), card(h2d=13.2, d2h=13.3, width=8)]
    env = write_instance(tmp_path, cards, torch=False)
    env["GPUFLEET_BENCH_LIBCUDA"] = str(libcuda)
    # hbm:h2d:d2h:p2p:free GiB, as the cards above would copy.
    env["GPUFLEET_FAKE_CUDA"] = "1830:26.7:26.7:262:70;1830:13.2:13.3:262:70"
    out = judge("standin", collect(run_bench(env, 3.0)))
    assert out["engine"] == "cuda"
    good, x8 = out["gpus"]
    assert set(good["measured"]) == {"hbm_gbps", "h2d_gbps", "d2h_gbps", "p2p_gbps"}
    assert abs(good["measured"]["hbm_gbps"] - 1830.0) < 1830.0 * 0.05
    assert abs(good["measured"]["h2d_gbps"] - 26.7) < 26.7 * 0.05
    assert "cuBLAS" in good["reason"]  # matmul: said, never guessed
    assert x8["verdict"] == "below_par"
    assert [s["metric"] for s in x8["shortfalls"]] == ["h2d_gbps", "d2h_gbps"]
    assert "PCIe link trained at x8 of x16" in x8["reason"]
