"""The fleet list says on each host what its instance reports and hides (the platform's
"transparency"): one line per set of GPUs alike, read from the live stream."""

from __future__ import annotations

import time
from dataclasses import replace

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import Sample
from gpufleet.ui.viewmodel.summary import summarize_host
from gpufleet.ui.widgets.theme import make_theme
from gpufleet.ui.window.fleet_panel import FleetPanel
from gpufleet_sampler import protocol
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.support import synth

# What a virtualization layer answering "not supported" leaves out of every sample.
HIDDEN = ("temp_gpu_c", "temp_mem_c", "power_w", "clock_reasons")


def _hiding(s: Sample, gpus: tuple[int, ...]) -> Sample:
    cols = [protocol.COLUMN_NAMES.index(c) + 1 for c in HIDDEN]
    rows = tuple(
        tuple(None if (r[0] in gpus and i in cols) else v for i, v in enumerate(r)) for r in s.rows
    )
    return replace(s, rows=rows)


def _live(hidden_on: tuple[int, ...]) -> LiveBuffers:
    live = LiveBuffers()
    t0 = time.time() - 30
    live.feed("rent-1", synth.make_hello("rent-1", gpus=4))
    for s in synth.make_samples(t0, 20, gpus=4):
        live.feed("rent-1", _hiding(s, hidden_on))
    live.feed("rent-1", synth.make_procs(t0 + 10, 100, gpus=4))
    return live


def _tooltip(qtbot: QtBot, live: LiveBuffers) -> str:
    s = summarize_host(HostConfig(name="rent-1"), live, "streaming", None)
    panel = FleetPanel(make_theme(False))
    qtbot.addWidget(panel)
    panel.set_hosts([s], "1 host")
    tip = panel.proxy.data(panel.proxy.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert isinstance(tip, str) and s.sensors in tip
    return tip


def test_the_host_tooltip_says_what_the_instance_hides(qtbot: QtBot) -> None:
    tip = _tooltip(qtbot, _live(hidden_on=(0, 1, 2, 3)))
    assert "GPUs 0-3: Reports power limit" in tip
    assert "hides GPU temperature, memory temperature, power draw, clock event reasons" in tip


def test_gpus_that_differ_get_a_line_each_and_a_full_report_says_so(qtbot: QtBot) -> None:
    tip = _tooltip(qtbot, _live(hidden_on=(2,)))
    assert "GPUs 0, 1, 3: Reports every sensor (GPU temperature" in tip
    assert "GPU 2: Reports power limit" in tip and "hides GPU temperature" in tip
