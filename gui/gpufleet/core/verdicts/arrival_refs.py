"""The reference figures the arrival benchmark is judged against: each model's datasheet,
and the share of it that a good card of that model reaches in published measurements.

Why two: no card reaches its datasheet (mamf-finder's best A100 SXM matmul is 86.9 % of
312 TFLOPS), so a verdict against the datasheet alone would call every card slow. Sources of
every figure are in docs/benchmark-references.md; a change here changes that page too.
"""

from __future__ import annotations

from dataclasses import dataclass

# PCIe x16, one direction, GB/s: 8 GT/s x 16 x 128/130 = 15.75 (gen 3), doubling per gen.
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


@dataclass(frozen=True)
class Datasheet:
    """Dense (no sparsity) tensor TFLOPS, memory GB/s, the card's PCIe gen, NVLink GB/s per
    direction (None: none or bridge only)."""

    model: str
    bf16: float
    fp16: float
    tf32: float
    mem_gbps: float
    pcie_gen: int
    nvlink_gbps: float | None
    matmul_good: float  # a good card's matmul share of the datasheet (mamf-finder)
    matmul_source: str


# Match order matters: the first key found in the NVML name wins (H100 PCIe before H100).
DATASHEETS: tuple[tuple[str, Datasheet], ...] = (
    ("H200", Datasheet("H200 SXM", 989.0, 989.0, 494.5, 4800.0, 5, 450.0, 0.836, "mamf-gh200")),
    ("H100 PCIE", Datasheet("H100 PCIe", 756.0, 756.0, 378.0, 2000.0, 5, None, 0.80, "assumed")),
    ("H100", Datasheet("H100 SXM", 989.0, 989.0, 494.5, 3350.0, 5, 450.0, 0.803, "mamf-h100")),
    ("A100-SXM4-80GB", Datasheet("A100 SXM 80GB", 312.0, 312.0, 156.0, 2039.0, 4, 300.0, 0.869,
                                 "mamf-a100"),),
    ("A100-SXM4-40GB", Datasheet("A100 SXM 40GB", 312.0, 312.0, 156.0, 1555.0, 4, 300.0, 0.869,
                                 "mamf-a100"),),
    ("A100 80GB PCIE", Datasheet("A100 PCIe 80GB", 312.0, 312.0, 156.0, 1935.0, 4, None, 0.811,
                                 "mamf-a100-pcie")),
    ("A100-PCIE", Datasheet("A100 PCIe 40GB", 312.0, 312.0, 156.0, 1555.0, 4, None, 0.811,
                            "mamf-a100-pcie")),
    ("L40S", Datasheet("L40S", 362.0, 362.0, 183.0, 864.0, 4, None, 0.80, "assumed")),
    ("RTX 4090", Datasheet("RTX 4090", 165.2, 165.2, 82.6, 1008.0, 4, None, 0.80, "assumed")),
    ("RTX 3090", Datasheet("RTX 3090", 71.0, 71.0, 35.6, 936.0, 4, None, 0.80, "assumed")),
)  # fmt: skip

# Shares of the datasheet a good card reaches, by kind of metric (sources in the docs).
HBM_GOOD = 0.90  # STREAM-like copies on HBM reach 85-98 % of the memory spec
PCIE_GOOD = 0.85  # nvbandwidth's pinned host copies: ~26-27 of 31.5 GB/s (gen 4), ~55 of 63 (gen 5)
NVLINK_GOOD = 0.88  # nvbandwidth's peer copies: ~88 % of NVLink 4's nominal
PEER_PCIE_GOOD = 0.80  # peer copies that cross PCIe (no NVLink): a little under host copies

# How far under a good card a figure may fall and still be as expected: cards of one model
# differ by 5 % and more on one node (stas00/ml-engineering), copies vary with NUMA placement.
TOLERANCE = {"matmul": 0.10, "hbm": 0.10, "copy": 0.15, "p2p": 0.15}


def datasheet_for(name: str | None) -> Datasheet | None:
    """The datasheet of a GPU by its NVML name, or None for a model not in the table."""
    key = (name or "").upper()
    for needle, sheet in DATASHEETS:
        if needle.upper() in key:
            return sheet
    return None


def datasheet_figures(sheet: Datasheet) -> dict[str, float]:
    """The datasheet as figures keyed like the measured ones."""
    out = {
        "matmul_bf16_tflops": sheet.bf16,
        "matmul_fp16_tflops": sheet.fp16,
        "matmul_tf32_tflops": sheet.tf32,
        "hbm_gbps": sheet.mem_gbps,
        "h2d_gbps": PCIE_X16_GBPS[sheet.pcie_gen],
        "d2h_gbps": PCIE_X16_GBPS[sheet.pcie_gen],
        "p2p_gbps": sheet.nvlink_gbps or PCIE_X16_GBPS[sheet.pcie_gen],
    }
    return out


def good_card_figures(sheet: Datasheet) -> dict[str, float]:
    """What a good card of that model measures (datasheet x the published share)."""
    ds = datasheet_figures(sheet)
    share = {
        "matmul_bf16_tflops": sheet.matmul_good,
        "matmul_fp16_tflops": sheet.matmul_good,
        "matmul_tf32_tflops": sheet.matmul_good,
        "hbm_gbps": HBM_GOOD,
        "h2d_gbps": PCIE_GOOD,
        "d2h_gbps": PCIE_GOOD,
        "p2p_gbps": NVLINK_GOOD if sheet.nvlink_gbps else PEER_PCIE_GOOD,
    }
    return {k: round(v * share[k], 1) for k, v in ds.items()}


def tolerance_of(metric: str) -> float:
    if metric.startswith("matmul"):
        return TOLERANCE["matmul"]
    if metric == "hbm_gbps":
        return TOLERANCE["hbm"]
    if metric == "p2p_gbps":
        return TOLERANCE["p2p"]
    return TOLERANCE["copy"]
