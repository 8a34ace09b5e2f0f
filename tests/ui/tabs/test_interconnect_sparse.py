"""The Interconnect tab on a host whose sampler reads the PCIe byte counters less often than it
samples (issue 28: an A100-shaped card without GPM, every NVML call charged the H200's recorded
cost, so 8 x 4 ms of field reads a second would not fit the CPU budget). The stream is the real
one: the nvml backend and the sampler loop over the fake pynvml (virtual CPU clock), encoded,
decoded by the app's decoder into the live buffers, drawn in a real offscreen window. The plot
says how often a value comes, and draws each as the level of the span it is the mean of:
nothing made up between two reads, and a value never stretched over a gap in the data."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import StreamDecoder
from gpufleet.ui.offscreen.screenshots import build_window
from gpufleet.ui.tabs.base import period_steps
from gpufleet.ui.tabs.interconnect import InterconnectTab
from gpufleet_sampler import protocol
from gpufleet_sampler.loop import Sampler
from pytestqt.qtbot import QtBot

from tests.support.nvml_fake import card_profile, charged_backend

TICKS = 60


def _sampled_lines(start: float) -> tuple[list[bytes], dict[str, Any]]:
    """TICKS seconds of a 2-GPU A100-shaped host's stream (wall times from ``start``) and the
    plan its hello carried last."""
    prof = card_profile("a100", 2)
    tri = [k * (k + 1) // 2 for k in range(TICKS + 5)]
    prof["defaults"]["field:197"] = {"seq": [10**7 * v for v in tri], "cycle": False}
    lines: list[bytes] = []
    with charged_backend(prof, "h200") as (fake, b):
        s = Sampler(b, 1.0, procs_interval=2.0)
        for t in range(1, TICKS + 1):
            fake._fake.set_time(float(t))
            for m in s.step(float(t), start + t):
                lines.append(protocol.encode(m).encode())
        hello = s.hello()
    # The hello last written (the plan as it stands), first in the stream as a client sees it.
    return [protocol.encode(hello).encode(), *lines], hello[protocol.CPU_BUDGET_KEY]


def test_a_sparse_throughput_is_said_on_the_plot_and_drawn_over_its_spans(qtbot: QtBot) -> None:
    host = next(h for h in demo_hosts() if h.name == "a100-ecc")
    now = time.time()
    start = now - TICKS - 1
    lines, plan = _sampled_lines(start)
    period = plan["throughput_s"]
    assert period is not None and period > 1.0
    dec = StreamDecoder()
    live = LiveBuffers(window_s=3600.0)
    for m in dec.feed_many(lines):
        live.feed(host.name, m)
    assert dec.bad_lines == 0
    w = build_window([host], live, None, (1400, 900), now)
    qtbot.addWidget(w)
    try:
        w.select_host(host.name)
        w.select_tab("interconnect")
        tab = w.current_tab()
        assert isinstance(tab, InterconnectTab)
        w.redraw()
        note = tab.pcie._note_text
        assert f"PCIe: 1 value per {period:g} s on this host" in note
        assert f"the mean over those {period:g} s" in note
        t, v = tab.pcie.curves[("", 0)].getData()
        # Steps: pairs of points at one level, from one read to the next, every value one of
        # those the sampler sent (in GB/s), none in between.
        sent = live.series(host.name, 0, "pcie_tx_bps")
        values = set((sent.v[np.isfinite(sent.v)] / 1e9).round(9))
        assert len(t) >= 4 and np.isfinite(v).all()
        assert set(v.round(9)) <= values
        assert (v[0::2] == v[1::2]).all()
        assert np.allclose(np.diff(t)[0::2], period)
    finally:
        w.close()


def test_a_gap_in_the_data_stays_a_gap() -> None:
    t = np.array([0.0, 5.0, 10.0, 40.0, 45.0])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    x, y = period_steps(t, v, 5.0)
    assert list(x) == [0.0, 5.0, 5.0, 10.0, 10.0, 40.0, 40.0, 45.0]
    assert list(y[:4]) == [2.0, 2.0, 3.0, 3.0] and list(y[6:]) == [5.0, 5.0]
    assert np.isnan(y[4:6]).all()  # 30 s without a value: not the mean of anything drawn
    # A series with every tick's value and nothing missing passes through unchanged in level.
    nan = np.array([np.nan, 1.0, np.nan, np.nan])
    assert [len(a) for a in period_steps(np.arange(4.0), nan, 1.0)] == [1, 1]
