"""Simulated GPU models: each one's datasheet values (clocks, power limits, temperatures,
memory, links) as the simulator's physics uses them.

Python 3.8, stdlib only.
"""

from typing import Dict, Optional

from gpufleet_sampler import protocol

MIB = 1 << 20


GIB = 1 << 30


_GPM_COLS = protocol.GPM_COLUMNS


_NVLINK_COLS = ("nvlink_tx_bps", "nvlink_rx_bps", "nvlink_up")


class GpuModel(object):
    """Static specifications of one board, and how it reports (what NVML lacks on it)."""

    def __init__(
        self,
        name: str,
        arch: str,
        sm_max: int,
        sm_busy: int,
        mem_clock_max: int,
        mem_clock_idle: int,
        sm_base: int,
        power_default: float,
        power_min: float,
        power_max: float,
        power_idle: float,
        power_full: float,
        r_th: float,
        temp_slowdown: int,
        temp_shutdown: int,
        temp_mem_max: Optional[int],
        pcie_gen: int,
        nvlink_links: int,
        mem_total: int,
        mem_reserved: int,
        geforce: bool,
        gpm: bool,
        idle_pstate: int,
        cuda_cc: str,
    ) -> None:
        self.name = name
        self.arch = arch
        self.sm_max = sm_max
        self.sm_busy = sm_busy
        self.mem_clock_max = mem_clock_max
        self.mem_clock_idle = mem_clock_idle
        self.sm_base = sm_base
        self.power_default = power_default
        self.power_min = power_min
        self.power_max = power_max
        self.power_idle = power_idle
        self.power_full = power_full  # draw at 100 % utilization, intensity 1, full clock
        self.r_th = r_th  # °C per W above ambient
        self.temp_slowdown = temp_slowdown
        self.temp_shutdown = temp_shutdown
        self.temp_mem_max = temp_mem_max
        self.pcie_gen = pcie_gen
        self.nvlink_links = nvlink_links
        self.nvlink_link_bps = 25 * 10**9 if nvlink_links else None
        self.mem_total = mem_total
        self.mem_reserved = mem_reserved
        self.geforce = geforce
        self.gpm = gpm
        self.idle_pstate = idle_pstate
        self.cuda_cc = cuda_cc

    def unsupported(self) -> Dict[str, str]:
        """Column -> reason, as NVML's feature probing would find it on this board."""
        out = {}  # type: Dict[str, str]
        if not self.geforce:
            out["fan_pct"] = "NotSupported: passively cooled board, the chassis drives the fans"
        if self.arch in ("ampere", "hopper", "ada"):
            out["retired_pending"] = (
                "NotSupported: Ampere and newer replace page retirement with row remapping"
            )
        if not self.gpm:
            reason = "NotSupported: GPM metrics need Hopper or newer"
            for c in _GPM_COLS:
                out[c] = reason
        if not self.nvlink_links:
            for c in _NVLINK_COLS:
                out[c] = "NotSupported: this board has no NVLink"
        if self.temp_mem_max is None:
            out["temp_mem_c"] = "NotSupported: GDDR6X memory temperature is not exposed by NVML"
        if self.geforce:
            for c in ("ecc_sbe_vol", "ecc_dbe_vol"):
                out[c] = "NotSupported: ECC is off / not supported on this GeForce board"
            for c in ("remap_pending", "remap_failed"):
                out[c] = "NotSupported: row remapping needs a datacenter board"
        return out


A100_80 = GpuModel(
    "NVIDIA A100-SXM4-80GB", "ampere", 1410, 1410, 1593, 1593, 1275,
    400.0, 100.0, 400.0, 62.0, 430.0, 0.10, 89, 92, 95, 4, 12,
    81920 * MIB, 620 * MIB, False, False, 0, "8.0",
)  # fmt: skip


A100_40 = GpuModel(
    "NVIDIA A100-SXM4-40GB", "ampere", 1410, 1410, 1215, 1215, 1275,
    400.0, 100.0, 400.0, 55.0, 420.0, 0.10, 89, 92, 95, 4, 12,
    40960 * MIB, 530 * MIB, False, False, 0, "8.0",
)  # fmt: skip


H100 = GpuModel(
    "NVIDIA H100 80GB HBM3", "hopper", 1980, 1980, 2619, 2619, 1590,
    700.0, 200.0, 700.0, 72.0, 720.0, 0.055, 87, 92, 95, 5, 18,
    81559 * MIB, 540 * MIB, False, True, 0, "9.0",
)  # fmt: skip


RTX4090 = GpuModel(
    "NVIDIA GeForce RTX 4090", "ada", 3120, 2745, 10501, 405, 2235,
    450.0, 150.0, 600.0, 22.0, 470.0, 0.12, 89, 92, None, 4, 0,
    24564 * MIB, 350 * MIB, True, False, 8, "8.9",
)  # fmt: skip
