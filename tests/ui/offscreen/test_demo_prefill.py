"""The demo shows something at once: half an hour of every demo host is simulated into the
live buffers and the rules before the fleet starts, the plots are full at the first look 5 s
after start, and the live samplers go on with the scenarios from there (h100-a's GPU 5 is
still the hot one: the story did not start over)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from gpufleet.core.config import paths
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.ui.app import App, make_qapp, setup_theme
from gpufleet.ui.offscreen.simfeed import DEMO_PREFILL_S
from pytestqt.qtbot import QtBot


@pytest.fixture
def app(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    monkeypatch.setenv("GPUFLEET_THEME", "dark")
    # What prefill_then sets for the live samplers; set here so the test leaves it behind.
    monkeypatch.setenv("GPUFLEET_SIM_START_S", f"{DEMO_PREFILL_S:g}")
    qapp = make_qapp()
    theme = setup_theme(qapp)
    paths.ensure_private_dir(paths.demo_data_dir())
    a = App(demo_hosts(), True, theme)
    qtbot.addWidget(a.window)
    a.window.resize(1366, 768)
    yield a
    a.stop()


def coverage(app: App, host: str, metric: str) -> float:
    w = app.window
    t0, t1 = w.time_range()
    (s,) = app.live.series_many(host, [0], metric, t0, t1, 2000)
    if len(s.t) < 2:
        return 0.0
    return float(s.t[-1] - s.t[0]) / (t1 - t0)


def test_the_demo_opens_with_full_plots_and_goes_on_live(qtbot: QtBot, app: App) -> None:
    started = time.monotonic()
    app.start()  # the demo path: history first, then the fleet
    hosts = list(app.window.hosts)
    qtbot.waitUntil(
        lambda: all(coverage(app, h, "sm_clock_mhz") > 0.95 for h in hosts), timeout=60_000
    )
    took = time.monotonic() - started
    # The first look, 5 s after start (or when the history is in, on a slow machine).
    qtbot.wait(max(0, int((5.0 - (time.monotonic() - started)) * 1000)))
    w = app.window
    assert w.range_s == DEMO_PREFILL_S  # the demo opens on the half hour it has
    w.select_host("h100-a")
    w.select_tab("clocks")
    w.redraw()
    for h in app.window.hosts:
        assert coverage(app, h, "sm_clock_mhz") > 0.95, h
    assert app.window.clocks.bands.any_band  # GPU 5's thermal band is drawn already
    print(f"history in after {took:.2f} s")
    # Live samples follow, from a sampler that starts half an hour into its scenario.
    end = app.live.latest("h100-a")
    assert end is not None
    prefill_end = end.t
    qtbot.waitUntil(
        lambda: (s := app.live.latest("h100-a")) is not None and s.t > prefill_end + 5,
        timeout=60_000,
    )
    s = app.live.latest("h100-a")
    assert s is not None
    # GPU 5's airflow was blocked 10 s into the scenario: started over, it would be as cool
    # as the others for the first seconds; continued, it is far hotter from the start.
    temps = {g: s.value(g, "temp_gpu_c") for g in s.gpu_indices()}
    others = max(float(v) for g, v in temps.items() if g != 5)
    assert float(temps[5]) > others + 15, temps
