"""'Export evidence…' from the window: the selected alert's button, the Clocks tab's link and
the host menu write the bundle in the background (plots rendered on the GUI thread at the
worker's request), with a busy bar and 'Open folder' when done; the window stays live."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.store import Store
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.ui.app import make_qapp, setup_theme
from gpufleet.ui.controllers.evidence_export import EvidenceExporter
from gpufleet.ui.window.main_window import MainWindow
from pytestqt.qtbot import QtBot

from tests.support import synth

HOST = "a100-train"


def test_export_from_the_alert_the_clocks_tab_and_the_menu(qtbot: QtBot, tmp_path: Path) -> None:
    t0 = synth.floor_minute(time.time() - 1800)
    samples = synth.make_samples(t0, 1500, gpus=2)
    crash = samples[900].t
    live = LiveBuffers(window_s=3600)
    live.feed(HOST, synth.make_hello(HOST, 2))
    with Store(paths.history_file(demo=True)) as st:
        st.write(HOST, synth.make_hello(HOST, 2))
        for s in samples:
            st.write(HOST, s)
            live.feed(HOST, s)
    alert = Alert(
        id="a1",
        rule_id="thermal_throttle",
        severity="warning",
        host=HOST,
        gpu=0,
        state="firing",
        started_t=crash + 30,
        ended_t=None,
        evidence={"since_t": crash, "temp_gpu_c": 91.0},
        condition="thermal_throttle",
    )
    theme = setup_theme(make_qapp())
    w = MainWindow(live, [HostConfig(name=HOST)], theme, demo=True, remember=False)
    qtbot.addWidget(w)
    w._timer.stop()
    w.resize(1366, 768)
    w.show()
    w.on_alerts([alert])
    w.update_summaries()
    saved: list[str] = []

    def choose(name: str) -> str:
        saved.append(name)
        return str(tmp_path / name)

    ex = EvidenceExporter(w, demo=True)  # as the app wires it
    ex.choose_path = choose
    # The alert's own button: enabled once the alert is the current row.
    assert not w.export_alert_btn.isEnabled()
    rows = w.panel.alert_rows()
    assert rows and rows[0][0].id == "a1"
    w.panel.alerts.setCurrentRow(0)
    assert w.export_alert_btn.isEnabled()
    with qtbot.waitSignal(ex.finished, timeout=60_000) as sig:
        w.export_alert_btn.click()
        assert ex.progress.isVisibleTo(w)  # busy while the worker writes
    report = sig.args[0]
    assert not ex.progress.isVisibleTo(w) and ex.open_btn.isVisibleTo(w)
    assert saved[0].startswith(f"gpufleet-evidence-{HOST}-") and saved[0].endswith(".zip")
    z = zipfile.ZipFile(report.path)
    names = set(z.namelist())
    assert {"metrics.csv", "summary.txt", "alerts.json", "plots/clocks.png"} <= names, names
    assert report.plot_error is None
    # The alert's window: from 10 min before its condition first held.
    first = z.read("metrics.csv").decode().splitlines()[1]
    assert report.rows > 0 and first
    assert "saved" in w.outcome_label.text()

    # The Clocks tab's link and the host menu: the range on screen.
    w.select_host(HOST)
    w.select_tab("clocks")
    with qtbot.waitSignal(ex.finished, timeout=60_000) as sig2:
        w.clocks.export_link.linkActivated.emit("export")
    assert zipfile.ZipFile(sig2.args[0].path).namelist()
    with qtbot.waitSignal(ex.finished, timeout=60_000):
        w.act_export.trigger()
    # Cancelled in the dialog: nothing written, nothing busy.
    ex.choose_path = lambda _name: None
    w.export_selected_host()
    assert not ex.busy and not ex.progress.isVisibleTo(w)
    json.loads(z.read("alerts.json"))
    w.close()
