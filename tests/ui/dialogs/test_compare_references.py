"""The Compare view draws each card's reference beside its live curves: the max SM clock on
the SM clock plot and the slowdown temperature on the temperature plot, from the windows'
hellos, each labelled with its value and unit, the label inside the plot (a max clock is the
top of the data: its label was first drawn above the plot, cut off).

The windows are two recorded runs written from the protocol (``tests/support/compare_streams``,
a thermal slowdown on GPU 3 in B), read the way ``gpufleet compare`` reads them; the view is
the real dialog on Qt offscreen at 1366×768.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from gpufleet.cli.commands.compare import read_windows
from gpufleet.core.verdicts.compare import compare
from gpufleet.ui.app import make_qapp
from gpufleet.ui.dialogs.compare_view import PLOTS, CompareView
from pytestqt.qtbot import QtBot

from tests.support import compare_streams as cs


def _references(plot: pg.PlotWidget) -> list[pg.InfiniteLine]:
    return [i for i in plot.getPlotItem().items if isinstance(i, pg.InfiniteLine)]


def test_max_clock_and_slowdown_are_drawn_with_their_labels_inside(
    qtbot: QtBot, tmp_path: Path
) -> None:
    make_qapp()
    a_path = cs.write(tmp_path / "a.jsonl", cs.Run(seed=1))
    b_path = cs.write(tmp_path / "b.jsonl", cs.Run(seed=2, effects=[cs.thermal((3,))]))
    a, b = read_windows(str(a_path), str(b_path), False)
    view = CompareView(a, b, compare(a, b))
    qtbot.addWidget(view)
    view.resize(1366, 768)
    view.show()
    qtbot.waitExposed(view)
    view.grab()  # painted once, as the screenshot is: the labels are placed as they draw
    qtbot.wait(10)
    assert view.current_gpu() == 3
    titles = [t for t, *_ in PLOTS]
    want = {
        "SM clock": (1980.0, "max 1 980 MHz"),
        "GPU temperature": (87.0, "slowdown 87 °C"),
    }
    for i, plot in enumerate(view.plots):
        lines = _references(plot)
        if titles[i] not in want:
            assert lines == [], titles[i]
            continue
        value, text = want[titles[i]]
        assert [ln.value() for ln in lines] == [value], titles[i]
        label = lines[0].label
        assert label.toPlainText() == text
        vb = plot.getPlotItem().getViewBox()
        inside = vb.mapRectToScene(vb.boundingRect())
        # The text itself: the label's rectangle less its document's empty margin.
        margin = label.textItem.document().documentMargin()
        text_rect = label.mapRectToScene(label.boundingRect()).adjusted(
            margin, margin, -margin, -margin
        )
        assert inside.contains(text_rect), (titles[i], text_rect, inside)
