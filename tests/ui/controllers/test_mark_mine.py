""" "Mark as mine" from the alert of a process that is not the job's: the process's name joins
the host's allowed_processes in config.toml, the rule engine learns it at once and the alert
resolves on the next process list; the button is there for that alert only, and a host the
file does not hold says so and changes nothing."""

from __future__ import annotations

import time
from dataclasses import replace

from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.configfile import AppConfig, config_file_path, load_config, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.model.alert import Alert
from gpufleet.core.wire.messages import Proc, Procs
from gpufleet.ui.app import make_qapp, setup_theme
from gpufleet.ui.controllers.mark_mine import MarkMine
from gpufleet.ui.window.main_window import MainWindow
from pytestqt.qtbot import QtBot

from tests.support import synth

HOST = "rent-1"
KWORKER = "[kworker/u16:3]"


def _procs(t: float, seq: int, intruder: bool) -> Procs:
    job = synth.make_procs(t, seq, gpus=1).procs
    other = Proc(gpu=0, pid=4242, start_ticks=9, user="root", name=KWORKER, cmd=KWORKER,
                 mem_bytes=3 << 30, sm_pct=40.0, type="C")  # fmt: skip
    return Procs(seq=seq, t=t, procs=(*job, other) if intruder else job)


def _engine_with_the_alert(cfg: HostConfig) -> tuple[RuleEngine, Alert, float]:
    engine = RuleEngine(load_rules(include_user=False), [cfg])
    t0 = time.time() - 60
    engine.feed(HOST, synth.make_hello(HOST, 1))
    fired: list[Alert] = []
    for i, s in enumerate(synth.make_samples(t0, 20, gpus=1)):
        fired += engine.feed(HOST, s)
        if i % 2 == 0:
            fired += engine.feed(HOST, _procs(s.t + 0.5, 1000 + i, intruder=i >= 4))
    (alert,) = [a for a in fired if a.rule_id == "proc_suspect"]
    assert alert.state == "firing"
    return engine, alert, t0 + 20


def _window(qtbot: QtBot, cfg: HostConfig, alerts: list[Alert]) -> MainWindow:
    live = LiveBuffers(window_s=600)
    live.feed(HOST, synth.make_hello(HOST, 1))
    w = MainWindow(live, [cfg], setup_theme(make_qapp()), remember=False)
    qtbot.addWidget(w)
    w._timer.stop()
    w.on_alerts(alerts)
    w.update_summaries()
    return w


def _select(w: MainWindow, alert_id: str) -> None:
    (row,) = [i for i, (a, _line) in enumerate(w.panel.alert_rows()) if a.id == alert_id]
    w.panel.alerts.setCurrentRow(row)


def test_mark_as_mine_allows_the_name_and_the_alert_resolves(qtbot: QtBot) -> None:
    cfg = HostConfig(name=HOST, host="10.0.0.5", user="root", allowed_processes=("python3",))
    save_config(AppConfig(hosts=[cfg]))
    engine, alert, t = _engine_with_the_alert(cfg)
    other = replace(alert, id="t1", rule_id="thermal_throttle", condition="thermal_throttle",
                    evidence={})  # fmt: skip
    w = _window(qtbot, cfg, [alert, other])
    mark = MarkMine(w, engine.set_host)  # as the app wires it, without the hub's thread
    _select(w, "t1")
    assert not mark.button.isVisibleTo(w)  # only on the alert of a process not the job's
    _select(w, alert.id)
    assert mark.button.isVisibleTo(w) and mark.button.isEnabled()
    mark.button.click()
    saved = load_config(config_file_path()).host(HOST)
    assert saved is not None and saved.allowed_processes == ("python3", KWORKER)
    assert saved.host == "10.0.0.5" and saved.user == "root"  # the rest of the host kept
    assert f"'{KWORKER}' is marked as yours on {HOST}" in w.outcome_label.text()
    assert not mark.button.isEnabled()
    # The next process list, the intruder still there: the alert resolves.
    resolved = engine.feed(HOST, _procs(t + 1, 5000, intruder=True))
    assert [(a.id, a.state) for a in resolved if a.rule_id == "proc_suspect"] == [
        (alert.id, "resolved")
    ]


def test_a_host_the_config_file_does_not_hold_says_so_and_changes_nothing(qtbot: QtBot) -> None:
    save_config(AppConfig(hosts=[HostConfig(name="elsewhere")]))
    before = config_file_path().read_bytes()
    cfg = HostConfig(name=HOST)
    engine, alert, _t = _engine_with_the_alert(cfg)
    w = _window(qtbot, cfg, [alert])
    mark = MarkMine(w, engine.set_host)
    _select(w, alert.id)
    mark.button.click()
    assert f"{HOST} is not a host of config.toml" in w.outcome_label.text()
    assert config_file_path().read_bytes() == before
