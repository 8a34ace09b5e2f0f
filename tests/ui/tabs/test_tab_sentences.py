"""The tabs' sentences say what the plots show: the Interconnect tab never calls a PCIe link
"full" that reports nothing (a lost GPU is named: the demo's a100-ecc GPU 2 read "Gen— x— of
Gen4 x16" above "PCIe links run at their full generation and width"), and the Thermal tab
says memory at its own limit before the core's peak."""

from __future__ import annotations

from gpufleet.ui.tabs.sentences import pcie_sentence

MAX = {0: 4.0, 1: 4.0, 2: 4.0}
WIDE = {0: 16.0, 1: 16.0, 2: 16.0}


def test_a_gpu_that_reports_no_link_is_named_not_called_full() -> None:
    gen = {0: 4.0, 1: 4.0, 2: None}
    width = {0: 16.0, 1: 16.0, 2: None}
    text = pcie_sentence([0, 1, 2], gen, width, MAX, WIDE)
    assert text.startswith("GPU 2 reports no PCIe link state"), text
    assert "the other links run at their full generation and width" in text


def test_all_links_full_and_none_reported() -> None:
    full = pcie_sentence([0, 1, 2], dict(MAX), dict(WIDE), MAX, WIDE)
    assert full.startswith("PCIe links run at their full generation and width")
    none = {0: None, 1: None, 2: None}
    assert "cannot be judged" in pcie_sentence([0, 1, 2], none, none, MAX, WIDE)


def test_a_narrow_link_still_comes_first() -> None:
    text = pcie_sentence([0, 1, 2], dict(MAX), {0: 8.0, 1: 16.0, 2: None}, MAX, WIDE)
    assert text.startswith("GPU 0 runs at x8 of x16"), text


def test_memory_at_its_limit_is_said_before_the_core_peak() -> None:
    import numpy as np
    from gpufleet.ui.tabs.sentences import thermal_sentence

    core = {5: np.array([80.0, 87.0])}
    mem = {5: np.array([93.0, 95.0])}
    text = thermal_sentence([5], core, {5: 87.0}, {}, {}, {}, mem, {5: 95.0})
    assert text.startswith("GPU 5's memory reached 95 °C, at its limit of 95 °C"), text
    assert "GPU 5 peaked at 87 °C" in text
    cool = thermal_sentence([5], core, {5: 87.0}, {}, {}, {}, {5: np.array([70.0])}, {5: 95.0})
    assert "memory reached" not in cool
