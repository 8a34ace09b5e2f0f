"""A GPU card colours its temperature for heat only: a GPU critical for something else (a
down NVLink link, a miner) showed its 34 °C in red, which reads as "overheating". Near its
slowdown point the temperature takes the card's state colour, warning at least.

The card is the real widget on Qt offscreen; the summaries are as the view model builds them
for an A100 (slowdown 89 °C).
"""

from __future__ import annotations

import re

import pytest
from gpufleet.ui.viewmodel.summary import GpuSummary
from gpufleet.ui.widgets.theme import CRIT, OK, WARN, make_theme
from gpufleet.ui.window.fleet_panel import GpuCard
from pytestqt.qtbot import QtBot


def _summary(temp: float, state: str, note: str) -> GpuSummary:
    return GpuSummary(
        gpu=1, name="NVIDIA A100-SXM4-80GB", util=0.0, mem_used=0.0, mem_total=80e9,
        sm=210.0, sm_max=1410.0, temp=temp, temp_slowdown=89.0, power=62.0,
        power_cap=400.0, pstate=0.0, reasons=(), state=state, note=note,
    )  # fmt: skip


def _temp_colour(card: GpuCard, temp: float) -> str | None:
    """The colour the card's text gives the temperature, None when it is plain."""
    text = card.label.text()
    assert f"{temp:.0f} °C" in text
    m = re.search(rf'<span style="color:([^"]+)">{temp:.0f} °C</span>', text)
    return m.group(1) if m else None


@pytest.mark.parametrize(
    ("temp", "state", "note", "want"),
    [
        (34.0, CRIT, "NVLink link down on GPU 1", None),
        (67.0, CRIT, "Mining program on GPU 1", None),
        (64.0, WARN, "Power capped below default on GPU 1", None),
        (86.0, WARN, "GPU 1 near its slowdown temperature", WARN),
        (89.0, CRIT, "Memory of GPU 1 at its temperature limit", CRIT),
        (86.0, OK, "", WARN),
    ],
)
def test_only_heat_colours_the_temperature(
    qtbot: QtBot, temp: float, state: str, note: str, want: str | None
) -> None:
    theme = make_theme(True)
    card = GpuCard(theme)
    qtbot.addWidget(card)
    card.show_gpu(_summary(temp, state, note))
    assert _temp_colour(card, temp) == (theme.state_hex(want) if want else None)
