"""The fleet list tells what the sampler costs each host's CPU and which reads it makes less
often to stay within its budget (from hello's ``cpu_budget``), and says nothing where the
sampler does not plan (the simulator, nvidia-smi)."""

from __future__ import annotations

from typing import Any

from gpufleet.core.text.sampler_cost import sampler_cost_text
from gpufleet.ui.viewmodel.summary import HostSummary
from gpufleet.ui.widgets.theme import OK, make_theme
from gpufleet.ui.window.fleet_panel import FleetPanel
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

PLAN: dict[str, Any] = {
    "budget_pct": 1.0,
    "planned_pct": 0.72,
    "measured_pct": 0.69,
    "tiers_s": {"fields": 15.0, "links": 300.0, "medium": 30.0, "putil": 30.0, "slow": 600.0},
    "needed_s": {"fields": 1.0, "links": 5.0, "medium": 5.0, "putil": 2.0, "slow": 60.0},
}


def test_the_sampler_cost_names_the_measure_the_budget_and_the_slower_reads() -> None:
    text = sampler_cost_text({"cpu_budget": PLAN})
    assert text.startswith("The sampler uses 0.69 % of one CPU core here (its budget: 1 %).")
    assert "per-link NVLink traffic every 300 s" in text
    assert "ECC, row remapping and NVLink error totals every 600 s" in text
    # Before its first measure: the planned figure; a plan with nothing stretched lists none.
    calm = {**PLAN, "measured_pct": None, "tiers_s": PLAN["needed_s"]}
    assert sampler_cost_text({"cpu_budget": calm}) == (
        "The sampler uses 0.72 % of one CPU core here (its budget: 1 %)."
    )
    # A provisional plan (a hello made before the first ticks): no figure yet.
    early = {**PLAN, "measured_pct": None, "planned_pct": 3.54, "settled": False}
    assert sampler_cost_text({"cpu_budget": early}) == (
        "The sampler is still timing its reads here against its budget (1 % of one CPU core)."
    )
    assert sampler_cost_text({"backend": "sim"}) == ""
    assert sampler_cost_text(None) == ""
    assert sampler_cost_text({"cpu_budget": {"budget_pct": "lots"}}) == ""


def test_the_fleet_list_shows_it_on_the_host(qtbot: QtBot) -> None:
    panel = FleetPanel(make_theme(False))
    qtbot.addWidget(panel)
    s = HostSummary(
        host="h100-a",
        state=OK,
        reason="",
        session_state="streaming",
        model="H100",
        gpus=(),
        util=None,
        hottest=None,
        price=None,
        currency="USD",
        last_t=None,
        sampler_cost=sampler_cost_text({"cpu_budget": PLAN}),
    )
    panel.set_hosts([s], "1 host")
    tip = panel.proxy.data(panel.proxy.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert "h100-a" in tip and "0.69 % of one CPU core" in tip


def _stretched_hello(card: str) -> dict[str, Any]:
    """The hello of a real NVML backend over the fake, once its plan has stretched (every
    call charged the H200's recorded per-field costs on the fake's virtual clock)."""
    from tests.support.nvml_fake import card_profile, charged_backend

    with charged_backend(card_profile(card), "h200-per-field") as (fake, b):
        b.budget_check_s = 40.0
        for t in range(1, 61):
            fake._fake.set_time(float(t))
            b.tick(float(t))
        return dict(b.hello())


def test_the_slower_counters_name_a_memory_temperature_only_where_the_card_reports_one() -> None:
    # NVML gives a GeForce card's GDDR6X no temperature: its tooltip must not promise one.
    geforce = sampler_cost_text(_stretched_hello("4090"))
    assert "energy and throttle time every 30 s" in geforce, geforce
    assert "HBM" not in geforce
    hopper = sampler_cost_text(_stretched_hello("hopper"))
    assert "energy, throttle time and HBM temperature every" in hopper, hopper
