"""The evidence bundle: every part is in the zip, the PNG plots open and are readable."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest
from gpufleet.cli.main import main
from gpufleet.core.config import paths
from gpufleet.core.history.store import Store
from gpufleet.ui.offscreen.evidence import HEIGHT, WIDTH
from PySide6.QtGui import QImage

from tests.support import synth

HOST = "a100-train"
PLOTS = {"clocks.png", "temperatures.png", "power.png", "memory.png", "pcie.png", "nvlink.png"}


def test_bundle_around_a_crash(qapp: object, tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - 3 * 3600)
    samples = synth.make_samples(t0, 3600, gpus=2)
    crash = samples[1800].t  # the synthetic thermal episode starts here on GPU 0
    with Store(paths.history_file(demo=True)) as st:
        st.write(HOST, synth.make_hello(HOST, 2))
        for s in samples:
            st.write(HOST, s)
        st.write(HOST, synth.make_procs(crash - 600, 10**6, gpus=2))
        st.write(HOST, synth.make_event(crash + 30, 10**6 + 1, gpu=0, code=79))
        st.write_check(HOST, {"gpus": [{"index": 0, "pcie_gen_max": 4}]}, t=t0 - 60)
        st.write_alert(
            {
                "id": "t1",
                "rule_id": "thermal-slowdown",
                "severity": "critical",
                "host": HOST,
                "gpu": 0,
                "state": "firing",
                "started_t": crash + 5,
                "ended_t": None,
                "evidence": {"temp_gpu_c": 96},
            }
        )
        st.write_kill({"host": HOST, "t": crash + 60, "pid": 4000, "result": "exited"})
    out = tmp_path / "evidence.zip"
    around = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(crash))
    centre = float(int(crash))  # the ISO time above has whole seconds
    rc = main(
        ["export", HOST, "--demo", "--around", around, "--window", "30m", "--bundle", str(out)]
    )
    assert rc == 0
    z = zipfile.ZipFile(out)
    names = set(z.namelist())
    expected = {
        "metrics.csv",
        "inventory.json",
        "health_check.json",
        "alerts.json",
        "events.json",
        "kills.json",
        "processes.json",
        "summary.txt",
    } | {f"plots/{p}" for p in PLOTS}
    assert expected <= names, expected - names
    assert z.testzip() is None
    for p in PLOTS:
        data = z.read(f"plots/{p}")
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        img = QImage()
        assert img.loadFromData(data, "PNG"), p
        assert (img.width(), img.height()) == (WIDTH, HEIGHT)
        # Not a blank canvas: a plot has many distinct colours (curves, text, bands).
        colours = {img.pixel(x, y) for x in range(0, WIDTH, 7) for y in range(0, HEIGHT, 7)}
        assert len(colours) > 10, p
    csv_lines = z.read("metrics.csv").decode().splitlines()
    assert len(csv_lines) == 1 + 2 * sum(1 for s in samples if abs(s.t - centre) <= 1800)
    assert json.loads(z.read("inventory.json"))["run_id"] == "run-1"
    assert json.loads(z.read("health_check.json"))["facts"]["gpus"][0]["pcie_gen_max"] == 4
    assert json.loads(z.read("alerts.json"))[0]["rule_id"] == "thermal-slowdown"
    assert json.loads(z.read("events.json"))[0]["code"] == 79
    assert json.loads(z.read("kills.json"))[0]["pid"] == 4000
    assert json.loads(z.read("processes.json"))[0]["procs"][0]["pid"] == 4000
    summary = z.read("summary.txt").decode()
    assert HOST in summary and "Xid errors: 1" in summary
    assert "GPU 0:" in summary and "clocks held down" in summary
    # GPU 0's thermal episode (3 minutes of HW thermal slowdown) shows in the summary.
    gpu0 = summary.split("GPU 0:")[1].split("GPU 1:")[0]
    held = gpu0.split("clocks held down")[1].split()[0]
    assert float(held) == pytest.approx(3.0, abs=0.2)
