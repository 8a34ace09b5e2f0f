"""Streams for the one judgment, written from the protocol (not the sim), each case of issue
25 in two shapes: PCIe replays then x8 (with and without the work stopping after), a power
limit lowered mid-run (450 to 300 W, 400 to 250 W), a leak to OOM (fast and slow), a hung job
(in P8 and in P0), a forgotten notebook (A100, 4090), sensors hidden (a 4090, an A100 vGPU),
a disguised process and a late outsider; and a healthy run. One sample every 10 s.

Each builder returns ``(host, messages)``; ``ALL`` names them for the property test."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpufleet.core.wire.messages import Message

from tests.support.rules_support import GIB, Stream

DT = 10.0
Case = tuple[str, list[Message]]
TRAIN = {"pid": 100, "name": "python", "cmd": "python train.py", "user": "me"}


def _run(s: Stream, seconds: float, t0: float = 0.0, **values: Any) -> list[Message]:
    out: list[Message] = []
    t = t0
    while t < t0 + seconds:
        out.append(s.sample(t, **values))
        t += DT
    return out


def _with_procs(
    s: Stream, msgs: list[Message], procs: Callable[[float], list[dict[str, Any]]]
) -> list[Message]:
    """A procs snapshot after every third sample (as a sampler sends them, every 30 s)."""
    out: list[Message] = []
    for k, m in enumerate(msgs):
        out.append(m)
        if k % 3 == 0:
            t = float(getattr(m, "mono", 0.0))
            out.append(s.procs(t, procs(t)))
    return out


def healthy() -> Case:
    s = Stream(interval=DT)
    msgs = _run(s, 3600)
    job = [{**TRAIN, "mem_bytes": 70 * GIB}]
    return "healthy", [s.hello, *_with_procs(s, msgs, lambda t: job)]


def pcie_replays_then_x8(stop: bool) -> Case:
    s = Stream(interval=DT)
    msgs = _run(s, 1200)
    for k in range(60):  # ten minutes of replays rising, 30 per sample
        msgs.append(s.sample(1200 + k * DT, pcie_replays=30 * (k + 1)))
    msgs += _run(s, 900, 1800, pcie_replays=1800, pcie_width=8)
    if stop:
        msgs += _run(s, 600, 2700, pcie_replays=1800, pcie_width=8, util_gpu_pct=0,
                     mem_used_bytes=1 * GIB, pstate=8, power_w=60.0)  # fmt: skip
    return f"pcie-x8{'-stop' if stop else ''}", [s.hello, *msgs]


def power_lowered(before: float, after: float) -> Case:
    s = Stream(interval=DT, power_default_w=before, power_enforced_w=before)
    msgs = _run(s, 1800, power_limit_w=before, power_w=before * 0.9)
    msgs += _run(s, 1800, 1800, power_limit_w=after, power_w=after * 0.98, clock_reasons=0x4,
                 sm_clock_mhz=1150)  # fmt: skip
    return f"power-{before:.0f}-{after:.0f}", [s.hello, *msgs]


def leak(minutes: float) -> Case:
    """40 GiB rising to 79.4 GiB (of 79.41 usable) over ``minutes``, then the process dies."""
    s = Stream(interval=DT)
    n = int(minutes * 60 / DT)
    msgs: list[Message] = _run(s, 600, mem_used_bytes=40 * GIB)
    for k in range(n):
        mem = (40 + 39.4 * (k + 1) / n) * GIB
        msgs.append(s.sample(600 + k * DT, mem_used_bytes=mem))
    end = 600 + n * DT
    msgs += _run(s, 600, end, util_gpu_pct=0, mem_used_bytes=0.5 * GIB, pstate=8, power_w=60.0)

    def procs(t: float) -> list[dict[str, Any]]:
        if t >= end:
            return []
        frac = min(1.0, max(0.0, (t - 600) / (end - 600)))
        return [{**TRAIN, "mem_bytes": int((40 + 39.4 * frac) * GIB)}]

    return f"leak-{minutes:.0f}min", [s.hello, *_with_procs(s, msgs, procs)]


def hung(p8: bool) -> Case:
    """An hour of work, then an hour of none with 52 GiB held (P8 at 210 MHz, or P0)."""
    s = Stream(interval=DT)
    msgs = _run(s, 3600, mem_used_bytes=52 * GIB)
    quiet: dict[str, Any] = {"util_gpu_pct": 1, "mem_used_bytes": 52 * GIB}
    quiet.update(pcie_tx_bps=1e5, pcie_rx_bps=1e5, nvlink_tx_bps=0, nvlink_rx_bps=0)
    if p8:
        quiet.update(pstate=8, sm_clock_mhz=210, power_w=60.0, clock_reasons=0x1)
    else:
        quiet.update(pstate=0, sm_clock_mhz=1410, power_w=90.0, clock_reasons=0x1)
    msgs += _run(s, 3600, 3600, **quiet)
    procs = [{**TRAIN, "mem_bytes": 52 * GIB}]
    return f"hung-{'p8' if p8 else 'p0'}", [s.hello, *_with_procs(s, msgs, lambda t: procs)]


def notebook(card: str) -> Case:
    """Two hours of an idle GPU whose notebook kernel holds 31 GiB (A100 80 GB, 4090 24 GB)."""
    if card == "4090":
        s = Stream(interval=DT, mem_total_bytes=24 * GIB, sm_clock_max_mhz=2520,
                   power_default_w=450.0, power_enforced_w=450.0, nvlink_links=0)  # fmt: skip
        mem = 20 * GIB
    else:
        s = Stream(interval=DT)
        mem = 31 * GIB
    msgs = _run(s, 7200, util_gpu_pct=0, mem_used_bytes=mem, pstate=8, sm_clock_mhz=210,
                power_limit_w=450.0 if card == "4090" else 400.0,
                power_w=30.0, pcie_tx_bps=0, pcie_rx_bps=0, clock_reasons=0x1)  # fmt: skip
    kernel = {"pid": 321, "name": "python", "user": "me", "mem_bytes": mem - GIB,
              "cmd": "python -m ipykernel_launcher -f kernel-1.json", "sm_pct": 0}  # fmt: skip
    return f"notebook-{card}", [s.hello, *_with_procs(s, msgs, lambda t: [kernel])]


HIDDEN = dict.fromkeys(
    (
        "temp_gpu_c",
        "temp_mem_c",
        "power_w",
        "power_limit_w",
        "clock_reasons",
        "viol_power_pct",
        "viol_thermal_pct",
        "energy_j",
    )
)


def hidden_sensors(card: str) -> Case:
    """A busy GPU at 70 % of its max clock on a platform that reports no temperature, power
    or reasons (a 4090; an A100 vGPU that also hides ECC)."""
    if card == "4090":
        s = Stream(interval=DT, sm_clock_max_mhz=2520, nvlink_links=0, mem_total_bytes=24 * GIB)
        vals: dict[str, Any] = {**HIDDEN, "sm_clock_mhz": 1760, "mem_used_bytes": 20 * GIB,
                                "nvlink_up": None}  # fmt: skip
    else:
        s = Stream(interval=DT)
        vals = {**HIDDEN, "sm_clock_mhz": 990, "ecc_sbe_vol": None, "ecc_dbe_vol": None}
    msgs = _run(s, 1800, **vals)
    job = {**TRAIN, "mem_bytes": int(vals.get("mem_used_bytes", 70 * GIB))}
    return f"hidden-{card}", [s.hello, *_with_procs(s, msgs, lambda t: [job])]


def intruder(kind: str) -> Case:
    """A two-hour job; at 2 h a process appears: ``[kworker/u16:3]`` (3 GiB, 40 % SM), or
    ``python`` of another user, or a miner."""
    s = Stream(interval=DT)
    msgs = _run(s, 9000)
    other = {
        "kworker": {"pid": 4242, "name": "[kworker/u16:3]", "cmd": "[kworker/u16:3]",
                    "user": "root"},
        "outsider": {"pid": 4243, "name": "python", "cmd": "python serve.py", "user": "bob"},
        "miner": {"pid": 4244, "name": "xmrig", "cmd": "./xmrig -o pool:3333", "user": "me"},
    }[kind]  # fmt: skip

    def procs(t: float) -> list[dict[str, Any]]:
        job = {**TRAIN, "mem_bytes": 70 * GIB if t < 7200 else 67 * GIB}
        if t < 7200:
            return [job]
        return [job, {**other, "start_ticks": 9, "mem_bytes": 3 * GIB, "sm_pct": 40}]

    return f"intruder-{kind}", [s.hello, *_with_procs(s, msgs, procs)]


ALL: dict[str, Callable[[], Case]] = {
    "healthy": healthy,
    "pcie-x8": lambda: pcie_replays_then_x8(False),
    "pcie-x8-stop": lambda: pcie_replays_then_x8(True),
    "power-450-300": lambda: power_lowered(450.0, 300.0),
    "power-400-250": lambda: power_lowered(400.0, 250.0),
    "leak-fast": lambda: leak(20),
    "leak-slow": lambda: leak(120),
    "hung-p8": lambda: hung(True),
    "hung-p0": lambda: hung(False),
    "notebook-a100": lambda: notebook("a100"),
    "notebook-4090": lambda: notebook("4090"),
    "hidden-4090": lambda: hidden_sensors("4090"),
    "hidden-a100-vgpu": lambda: hidden_sensors("a100"),
    "intruder-kworker": lambda: intruder("kworker"),
    "intruder-outsider": lambda: intruder("outsider"),
    "intruder-miner": lambda: intruder("miner"),
}
