"""History beyond the live window: the 6 h and 24 h ranges draw what the SQLite store holds
(read off the GUI thread by gpufleet.ui.background.history), with a stored gap drawn as a
gap, and the 5 min range follows live again.

A real store file (written by the store's own writer) holds 6 h of samples of the demo
h100-a that end before the live window starts, with a half-hour hole; the real app (demo
fleet, sampler daemon, bridge) streams the live part.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pytest
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.history.store import Store
from gpufleet.ui.app import App
from gpufleet.ui.widgets.plots import LiveCurve
from gpufleet.ui.window.main_window import RANGES
from pytestqt.qtbot import QtBot

from tests.support import synth
from tests.support.ui_helpers import demo, wait_streaming

HOST = "h100-a"
GPUS = 8
INTERVAL = 2.0  # stored samples every 2 s: 6 h in a few seconds of writing


class Stored:
    def __init__(self, now: float) -> None:
        self.first = synth.floor_minute(now - 6 * 3600)
        self.last = synth.floor_minute(now - 65 * 60)  # before the live window (1 h)
        self.gap = (self.first + 2 * 3600, self.first + 2.5 * 3600)  # nothing stored here


@pytest.fixture
def stored() -> Stored:
    s = Stored(time.time())
    n = int((s.last - s.first) / INTERVAL)
    samples = synth.make_samples(s.first, n, gpus=GPUS, interval=INTERVAL, distinct=900)
    path = paths.history_file(demo=True)
    paths.ensure_private_dir(path.parent)
    with Store(path) as st:
        st.write(HOST, synth.make_hello(HOST, GPUS))
        for smp in samples:
            if not (s.gap[0] <= smp.t < s.gap[1]):
                st.write(HOST, smp)
        st.flush()
        assert st.dropped == 0
        got = st.time_range(HOST)
        assert got is not None and got[0] < s.first + 5 and got[1] > s.last - 5
    return s


def _range_button(seconds: float) -> int:
    return next(i for i, (_, s) in enumerate(RANGES) if s == seconds)


def _curve(app: App) -> LiveCurve | None:
    """GPU 0's temperature curve on the Thermal & power tab; None until the tab drew it."""
    tab = app.window.tab_list[2]
    return tab.temp.curves.get(("", 0))  # type: ignore[attr-defined,no-any-return]


def _xy(c: LiveCurve | None) -> tuple[np.ndarray, np.ndarray]:
    if c is None:
        return np.empty(0), np.empty(0)
    x, y = c.xData, c.yData
    return (np.asarray(x), np.asarray(y)) if x is not None else (np.empty(0), np.empty(0))


def _check_history(app: App, s: Stored) -> None:
    x, y = _xy(_curve(app))
    fin = np.isfinite(y)
    assert x[fin].min() < s.first + 10 * 60, "the curve does not reach back to the store"
    assert x[fin].min() < time.time() - 5 * 3600
    # No fake values in the hole: nothing finite inside it, no zeros anywhere (the GPU
    # temperature is never 0), and a NaN breaks the line between its two sides.
    inside = (x > s.gap[0] + 60) & (x < s.gap[1] - 60)
    assert not fin[inside].any(), x[inside & fin]
    assert not (y[fin] == 0).any()
    before = np.flatnonzero(fin & (x < s.gap[0] + 60))[-1]
    after = np.flatnonzero(fin & (x > s.gap[1] - 60))[0]
    assert np.isnan(y[before + 1 : after]).any(), "the line is drawn across the stored gap"
    # ...and no line across the stretch between the stored history and the live part.
    tail = np.flatnonzero(fin & (x <= s.last))[-1]
    live = np.flatnonzero(fin & (x > s.last + 60))
    assert live.size, "the live part is missing"
    assert np.isnan(y[tail + 1 : live[0]]).any()


def test_six_and_24_hour_ranges_read_the_store_and_5_min_follows_live(
    qtbot: QtBot, stored: Stored, start_app: Callable[[list[HostConfig]], App]
) -> None:
    app = start_app(demo(HOST))
    w = app.window
    history = w.history
    assert history is not None
    wait_streaming(qtbot, app)
    w.select_host(HOST)
    w.select_tab("thermal")

    w.range_group.button(_range_button(6 * 3600.0)).click()
    assert w.range_s == 6 * 3600.0
    qtbot.waitUntil(
        lambda: _xy(_curve(app))[0].size > 0 and _xy(_curve(app))[0].min() < time.time() - 3600,
        timeout=20_000,
    )
    _check_history(app, stored)
    (x0, x1), _ = w.tab_list[2].plots[0].vb.viewRange()  # type: ignore[attr-defined]
    assert x1 - x0 == pytest.approx(6 * 3600, rel=0.01)
    # A value for a crosshair on the older part: the drawn point nearest that moment; none
    # inside the hole.
    x, y = _xy(_curve(app))
    i = int(np.flatnonzero(np.isfinite(y) & (x < stored.gap[0]))[5])
    assert history.value_at(HOST, 0, "temp_gpu_c", float(x[i]) + 1.0) == y[i]
    assert history.value_at(HOST, 0, "temp_gpu_c", sum(stored.gap) / 2) is None
    # The crosshair's readout on that older point says the stored value, not "—".
    readout = w.tab_list[2].readout(float(x[i]) + 1.0)  # type: ignore[attr-defined]
    assert f"{y[i]:.0f} °C" in readout

    # 24 h: a query of its own (the store's rollups); wait until it is answered and drawn.
    w.range_group.button(_range_button(24 * 3600.0)).click()
    qtbot.waitUntil(lambda: not history.pending, timeout=20_000)
    w.redraw()
    _check_history(app, stored)
    (x0, x1), _ = w.tab_list[2].plots[0].vb.viewRange()  # type: ignore[attr-defined]
    assert x1 - x0 == pytest.approx(24 * 3600, rel=0.01)

    # Back to 5 min: live only, and it follows the newest samples.
    w.range_group.button(_range_button(300.0)).click()
    assert w.follow_live
    x, _ = _xy(_curve(app))
    assert x.min() > time.time() - 400
    newest = float(x.max())
    qtbot.waitUntil(lambda: _xy(_curve(app))[0].max() > newest, timeout=15_000)
    (x0, x1), _ = w.tab_list[2].plots[0].vb.viewRange()  # type: ignore[attr-defined]
    assert x1 - x0 == pytest.approx(300, rel=0.01) and x1 >= newest
