"""The demo's benchmark: what the simulator's cards would measure, from the same physics the
sim backend uses (power ~ clock², clock lowered to hold the power limit, thermal throttling
above slowdown minus 3 °C), at the scenario's steady state with the benchmark's full load.

The user's own simulated jobs pause for the benchmark; a job of kind ``miner`` is someone
else's and makes its GPU busy (refused). Each step sleeps for its slice, as a real one runs.

Python 3.8, stdlib only.
"""

import math
import random
import time
from typing import Any, Dict, List, Tuple

from gpufleet_sampler.backends.sim import AMBIENT_C
from gpufleet_sampler.benchmark import Unmeasured
from gpufleet_sampler.benchmark.telemetry import Telemetry
from gpufleet_sampler.sim.scenarios import SCENARIOS

# What a good card of each simulated model measures at full clock (the laptop's reference
# table says where such figures come from): bf16, fp16, tf32 TFLOPS; HBM GB/s; pinned host
# copy GB/s (h2d, d2h); peer GB/s (None: no peer access, as on GeForce boards).
GOOD = {
    "NVIDIA A100-SXM4-80GB": (271.0, 271.0, 135.5, 1835.0, 26.8, 26.8, 264.0),
    "NVIDIA A100-SXM4-40GB": (271.0, 271.0, 135.5, 1400.0, 26.8, 26.8, 264.0),
    "NVIDIA H100 80GB HBM3": (794.0, 794.0, 397.0, 3015.0, 53.5, 53.5, 396.0),
    "NVIDIA GeForce RTX 4090": (132.0, 132.0, 66.0, 907.0, 26.8, 26.8, None),
}  # type: Dict[str, Tuple[Any, ...]]
METRIC_POS = {
    "matmul_bf16_tflops": 0, "matmul_fp16_tflops": 1, "matmul_tf32_tflops": 2, "hbm_gbps": 3,
}  # fmt: skip


class SimHost(object):
    def __init__(self, scenario: str, seed: int) -> None:
        if scenario not in SCENARIOS:
            raise ValueError("unknown sim scenario {!r}".format(scenario))
        self.sc = SCENARIOS[scenario]
        self.m = self.sc.model
        self._rng = random.Random("bench:{}:{}".format(scenario, seed))
        # Card-to-card spread on one node is a few per cent (stas00/ml-engineering).
        self._spread = [1.0 - 0.03 * self._rng.random() for _ in range(self.sc.n_gpus)]
        self._state = [self._steady(g) for g in range(self.sc.n_gpus)]

    def _steady(self, g: int) -> Dict[str, Any]:
        """Clock fraction, power and temperature under full load: the clock where the
        thermal throttle of the temperature that clock's power gives is that clock."""
        m, sc = self.m, self.sc
        limit = sc.power_enforced_w or m.power_default
        tf = sc.thermal_fault
        r_th = tf[2] if tf is not None and tf[0] == g else m.r_th
        thr_start = m.temp_slowdown - 3.0

        def power_at(f: float) -> Tuple[float, float]:
            """(power, clock) at thermal clock fraction f, the power cap applied."""
            p = m.power_idle + (m.power_full - m.power_idle) * f * f
            if p > limit - 2.0:
                return limit - 2.0, f * math.sqrt((limit - 2.0 - m.power_idle) / (p - m.power_idle))
            return p, f

        def thermal(f: float) -> float:
            temp = AMBIENT_C + r_th * power_at(f)[0]
            return 1.0 if temp <= thr_start else max(0.55, 1.0 - 0.06 * (temp - thr_start))

        lo, hi = 0.55, 1.0
        if thermal(hi) >= hi:
            lo = hi
        for _ in range(40):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if thermal(mid) >= mid else (lo, mid)
        f_t = lo
        power, f = power_at(f_t)
        temp = AMBIENT_C + r_th * power
        reasons = 0x4 if f < f_t - 1e-9 else 0
        if temp > thr_start:
            reasons |= 0x20 | (0x40 | 0x8 if temp >= m.temp_slowdown else 0)
        up = m.nvlink_links - (1 if sc.link_down is not None and sc.link_down[0] == g else 0)
        return {"f": f, "reasons": reasons, "temp": temp, "power": power, "limit": limit,
                "nvlink_up": up}  # fmt: skip

    def inventory(self) -> List[Dict[str, Any]]:
        free = self.m.mem_total - self.m.mem_reserved
        return [
            {"index": g, "name": self.m.name, "uuid": "GPU-sim-{}-{}".format(self.sc.name, g),
             "mem_total_bytes": self.m.mem_total, "mem_free_bytes": free}
            for g in range(self.sc.n_gpus)
        ]  # fmt: skip

    def other_processes(self, g: int) -> List[Dict[str, Any]]:
        return [
            {"pid": None, "name": job.argv[0].lstrip("./"), "mem_bytes": job.mem_bytes}
            for job in self.sc.jobs
            if job.kind == "miner" and g in job.gpus
        ]

    def _read(self, g: int) -> Dict[str, Any]:
        s, m = self._state[g], self.m
        return {
            "sm_clock_mhz": round(m.sm_busy * s["f"] / 15.0) * 15,
            "mem_clock_mhz": m.mem_clock_max,
            "power_w": round(s["power"] - 2.0 * self._rng.random(), 1),
            "temp_gpu_c": round(s["temp"]),
            "reasons": s["reasons"],
            "pcie_gen": m.pcie_gen,
            "pcie_width": 16,
            "util_gpu_pct": 100,
        }

    def telemetry(self, gpus: List[int]) -> Telemetry:
        m = self.m
        static = {
            g: {"sm_clock_max_mhz": m.sm_max, "mem_clock_max_mhz": m.mem_clock_max,
                "power_limit_w": self._state[g]["limit"], "power_default_w": m.power_default,
                "pcie_max_gen": m.pcie_gen, "pcie_max_width": 16, "nvlink_links": m.nvlink_links,
                "nvlink_up": self._state[g]["nvlink_up"]}
            for g in gpus
        }  # fmt: skip
        return Telemetry(gpus, self._read, static)

    def engine(self) -> "SimEngine":
        return SimEngine(self)


class SimEngine(object):
    name = "sim"

    def __init__(self, host: SimHost) -> None:
        self.h = host
        self.good = GOOD.get(host.m.name, ())

    def prepare(self, gpus: List[int], host: Any) -> None:
        if not self.good:
            raise Unmeasured("the simulator has no benchmark figures for {}".format(self.h.m.name))

    def close(self) -> None:
        pass

    def _value(self, g: int, pos: int, clocked: bool, seconds: float) -> float:
        time.sleep(seconds)
        base = float(self.good[pos]) * self.h._spread[g]
        if clocked:
            # Compute scales with the SM clock the card holds (f of its boost clock).
            base *= self.h._state[g]["f"]
        return base

    def matmul(self, g: int, dtype: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        pos = METRIC_POS["matmul_{}_tflops".format(dtype)]
        return self._value(g, pos, True, seconds), {"shape": "8192x8192x8192", "engine": "sim"}

    def hbm(self, g: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        return self._value(g, 3, False, seconds), {"buffer_mib": 2048, "engine": "sim"}

    def copy_host(self, g: int, way: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        pos = 4 if way == "h2d" else 5
        return self._value(g, pos, False, seconds), {"bytes": 256 << 20, "pinned": True}

    def peer(self, g: int, peer: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        if self.good[6] is None:
            raise Unmeasured("peer access from GPU {} to GPU {} is not supported".format(g, peer))
        value = self._value(g, 6, False, seconds)
        s = self.h._state
        links = self.h.m.nvlink_links or 1
        # A link down on either end: its traffic squeezes onto the others.
        worst = min(s[g]["nvlink_up"], s[peer]["nvlink_up"])
        return value * worst / links, {"peer": peer, "bytes": 256 << 20}
