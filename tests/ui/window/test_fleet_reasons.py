"""The small things of the fleet list and the alert sentences: a host's reason names its
worst problem (a GPU fallen off the bus before an NVLink link down, both critical); a reason
that opens with the host's name (zh_CN's "h100-a 的 GPU 5 …") is not cut to that name in the
narrow column; a firing alert's sentence says how long it has held as the list counts it
("for 30 min", not the rule's "for 30 s"); the Thermal tab draws the memory's own limit where
memory temperature is reported; a missing ~/.ssh/config is said as missing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.fleet.demo import demo_host
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence
from gpufleet.ui.app import App, make_qapp
from gpufleet.ui.dialogs.hosts import ImportDialog
from gpufleet.ui.tabs.thermal import ThermalTab
from gpufleet.ui.viewmodel.summary import summarize_host
from gpufleet.ui.window.fleet_panel import alert_line
from pytestqt.qtbot import QtBot

NOW = 1_780_000_000.0


def _alert(rule: str, severity: str, gpu: int | None, age_s: float, **ev: object) -> Alert:
    return Alert(
        id=f"{rule}-{gpu}",
        rule_id=rule,
        severity=severity,  # type: ignore[arg-type]
        host="a100-ecc",
        gpu=gpu,
        state="firing",
        started_t=NOW - age_s,
        ended_t=None,
        evidence=dict(ev),
        condition=rule,
    )


def test_the_reason_is_the_worst_problem_and_keeps_more_than_the_host() -> None:
    cfg = HostConfig(name="a100-ecc")
    link = _alert("nvlink_down", "critical", 1, 1800)
    lost = _alert("gpu_lost", "critical", 2, 540)
    titles = {link.id: "NVLink link down on GPU 1 of a100-ecc", lost.id: "GPU 2 of a100-ecc lost"}
    s = summarize_host(cfg, LiveBuffers(), "streaming", None, [link, lost], titles, NOW)
    assert s.reason == "GPU 2 lost", s.reason
    # zh_CN titles open with the host: the row names it already.
    zh = {link.id: "a100-ecc 的 GPU 1 NVLink 链路断开", lost.id: "a100-ecc 的 GPU 2 已丢失"}
    s = summarize_host(cfg, LiveBuffers(), "streaming", None, [link, lost], zh, NOW)
    assert s.reason == "GPU 2 已丢失", s.reason
    idle = _alert("idle_billed", "warning", None, 600)
    s = summarize_host(
        cfg, LiveBuffers(), "streaming", None, [idle], {idle.id: "a100-ecc idle while billed"}, NOW
    )
    assert s.reason == "Idle while billed" and s.host_reason == "Idle while billed"


def test_the_sentence_counts_the_time_the_list_shows() -> None:
    a = _alert(
        "thermal_throttle",
        "warning",
        5,
        1800,
        window_s=30.0,
        since_t=NOW - 1830,
        values={"sm_clock_mhz": 1620, "sm_clock_max_mhz": 1980, "temp_gpu_c": 87},
    )
    line = alert_line(a, "Thermal throttling on GPU 5", NOW)
    assert line.endswith("· 30 min"), line
    text = alert_sentence(a, NOW)
    assert "for 30 min" in text and "for 30 s" not in text, text
    assert "for 30 s" in alert_sentence(a)  # without a now (a replay's report): as it fired


def test_thermal_tab_draws_the_memory_limit_where_memory_is_reported(
    qtbot: QtBot, start_app: Callable[[list[HostConfig]], App]
) -> None:
    hbm, gddr = demo_host("demo:h100-a"), demo_host("demo:4090-x2")
    assert hbm is not None and gddr is not None
    app = start_app([hbm, gddr])
    w = app.window
    qtbot.waitUntil(lambda: all(w.live.latest(h) is not None for h in ("h100-a", "4090-x2")),
                    timeout=60_000)  # fmt: skip
    thermal = w.tab_list[2]
    assert isinstance(thermal, ThermalTab)
    w.select_tab("thermal")
    w.select_host("h100-a")
    w.redraw()
    limit = thermal.temp.nominals["mem_max"]
    assert limit.text.isVisible() and "memory limit" in limit.text.toPlainText()
    assert "°C" in limit.text.toPlainText()
    w.select_host("4090-x2")  # GDDR6X: no memory sensor, no limit line
    w.redraw()
    assert not thermal.temp.nominals["mem_max"].text.isVisible()


def test_a_missing_ssh_config_is_said_as_missing(qtbot: QtBot, tmp_path: Path) -> None:
    make_qapp()
    path = tmp_path / "no-such-config"
    dlg = ImportDialog(None, set(), ssh_config=path)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: "does not exist" in dlg.status.text(), timeout=10_000)
    assert str(path) in dlg.status.text() and "no Host entries" not in dlg.status.text()
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n", encoding="utf-8")
    dlg2 = ImportDialog(None, set(), ssh_config=empty)
    qtbot.addWidget(dlg2)
    qtbot.waitUntil(lambda: "has no Host entries" in dlg2.status.text(), timeout=10_000)
