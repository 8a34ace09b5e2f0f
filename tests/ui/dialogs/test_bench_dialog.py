"""The Benchmark action in the real app on the demo's power-capped 4090s: offered when the
host first streams with no result on record, run from the Hosts menu off the GUI thread,
the dialog's table with measured / good card / datasheet / advertised side by side, the
result kept in the history and shown on the host; and a cancel that leaves no benchmark
process on the "instance" (the local sim)."""

from __future__ import annotations

import os
from pathlib import Path

from gpufleet.core.history import bench_results
from gpufleet.ui.dialogs.bench import DIALOG_SIZE

from tests.support.ui_helpers import demo, wait_streaming

HOST = "4090-x2"


def bench_pids(data_dir: str) -> list[int]:
    """Benchmark processes started for this test (by its data dir in their environment)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        argv = cmd.split(b"\0")
        # The supervisor (``gpufleet_sampler bench``) and its worker (``benchmark import
        # worker``); the host's streaming daemon has "bench" only in its state dir's path.
        ours = "bench" in [a.decode(errors="replace") for a in argv] or b"import worker" in cmd
        if ours and data_dir.encode() in env:
            out.append(int(d.name))
    return out


def menu_action(app, text: str):
    return next(a for a in app.window.menu_hosts.actions() if a.text() == text)


def test_benchmark_from_the_hosts_menu_is_shown_side_by_side_and_kept(qtbot, start_app) -> None:
    app = start_app(demo(HOST))
    wait_streaming(qtbot, app)
    qtbot.waitUntil(lambda: not app.bench.offer_btn.isHidden(), timeout=30_000)
    assert HOST in app.bench.offer_btn.text()
    assert "Not benchmarked yet" in app.window.bench_lines[HOST]
    act = menu_action(app, "&Benchmark the selected host…")
    assert act in app.window.panel.table.actions()  # the fleet list's context menu too
    app.bench.seconds = 3.0
    app.window.select_host(HOST)
    act.trigger()
    dlg = app.bench.dialog
    assert dlg is not None and dlg.host == HOST
    assert dlg.width() <= 1366 and dlg.height() <= 768 and dlg.size().toTuple() == DIALOG_SIZE
    dlg.run_btn.click()
    assert dlg.running and dlg.cancel_btn.isEnabled()
    qtbot.waitUntil(lambda: dlg.bench_result is not None, timeout=90_000)
    assert not dlg.running and app.bench.offer_btn.isHidden()
    rows = dlg.rows()
    assert rows[0] == ["GPU 0 NVIDIA GeForce RTX 4090: below par"]
    bf16 = next(r for r in rows if r[0] == "BF16 matmul (TFLOPS)")
    measured, good, share, sheet, advertised = bf16[1:6]
    assert float(measured) < 0.85 * float(good) and float(sheet) > float(good)
    assert share.endswith(" %") and advertised == "-"
    assert "lowered power limit: 300 W of its 450 W default" in dlg.why.text()
    assert "publishes no figures" in dlg.why.text()
    runs = bench_results.runs_of_host(app.store.path, HOST)
    assert [r.verdict for r in runs] == ["below_par"]
    line = app.window.bench_lines[HOST]
    assert "below par" in line and "min ago" in line
    summary = next(s for s in app.window.summaries if s.host == HOST)
    assert summary.bench == line
    assert app.window.panel.cards_bench.text() == line
    dlg.close()


def test_cancel_ends_the_benchmark_on_the_instance(qtbot, start_app) -> None:
    app = start_app(demo(HOST))
    wait_streaming(qtbot, app)
    app.bench.seconds = 60.0
    dlg = app.bench.open(HOST)
    dlg.run_btn.click()
    data_dir = os.environ["GPUFLEET_DATA_DIR"]
    qtbot.waitUntil(lambda: dlg.status.text().startswith("GPU "), timeout=60_000)
    assert bench_pids(data_dir), "the benchmark should be running on the instance"
    dlg.cancel_btn.click()
    qtbot.waitUntil(lambda: not dlg.running, timeout=60_000)
    assert "Cancelled" in dlg.status.text() and dlg.bench_result is None
    qtbot.waitUntil(lambda: not bench_pids(data_dir), timeout=15_000)
    assert bench_results.runs_of_host(app.store.path, HOST) == []
    dlg.close()
