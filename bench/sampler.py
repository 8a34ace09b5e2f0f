"""Sampler benchmark: what the sampler costs on the instance, per GPU per tick.

Prints, for the sim backend (healthy-8xa100) and the nvml backend through the fake pynvml
(tests/fakes, 8x H100 profile, NVML answering instantly):

- the sampler's own Python work per GPU per tick (``loop.Sampler.step`` + ``protocol.encode``),
  averaged over simulated minutes so that every tier (process lists every 2 s, medium tier
  every 5 s, slow tier every 60 s) is included; for nvml also what the fake's answers alone
  cost, so the sampler's share can be read off;
- bytes per GPU-sample on the wire (sample lines only, newline included);
- RSS (VmRSS, VmHWM from /proc/PID/status) and CPU % of a real ``stream`` subprocess at 1 Hz
  with 8 GPUs, measured over its steady state.

The NVML bill (``--bill``, or ``--only bill``): the same nvml backend with every call of the
fake pynvml costing the CPU time the recorded H200 run gave it (``--cost h200``: a field-value
read costs 4 ms per call; ``h200-per-field``: per field), for 1, 8 and 64 GPUs over
simulated minutes (every tier included): CPU per GPU per tick, by call kind, whole-process CPU
% at 1 Hz and tick wall times; beside a bare pynvml loop reading the same columns every tick
and, where installed, nvitop's and gpustat's per-refresh work through the same fake; and a
real ``stream`` subprocess at 1 Hz under the profile. ``--only scaling``: tick wall time
for 1, 2, 4 and 8 GPUs read by one thread, with the long reads on the reader pool, and with
every GPU on it. ``--only cards``: a row per card class (``--card hopper|a100|l40s|4090``,
default all: Hopper with GPM; A100-, L40S- and RTX 4090-shaped cards without it, their field
sets) and cost model, 8 GPUs at 1 Hz: the sampler's CPU beside nvitop's and gpustat's on the
same fake, whether the plan is within its budget, what a peer's refresh of the same GPUs
costs by the plan's timing (what it aims below once it must give something up), and what it
gave up to get there.

Budgets: < 150 µs per GPU per tick (aim 40), < 400 bytes per GPU-sample,
RSS < 30 MiB; under the H200 profile < 1 % of a core at 8 GPUs, 1 Hz (the sampler's CPU
budget). Run: ``.venv/bin/python bench/sampler.py [--minutes 5] [--stream-seconds 12]
[--bill] [--only bill]``. Sections are the ``SECTIONS`` list: add one by appending to it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "remote"))
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path.insert(0, str(ROOT))

from gpufleet_sampler import protocol  # noqa: E402
from gpufleet_sampler.loop import Sampler  # noqa: E402

from tests.support.nvml_fake import CARD_CLASSES  # noqa: E402

GPUS = 8


def _drive(sampler: Sampler, ticks: int, set_time: Any = None) -> tuple[float, int, int]:
    """Step ``ticks`` simulated seconds; returns (seconds spent, sample bytes, messages)."""
    spent = 0.0
    sample_bytes = 0
    n = 0
    enc = protocol.encode
    pc = time.thread_time  # CPU time of this thread: other load on the machine does not count
    for t in range(1, ticks + 1):
        if set_time is not None:
            set_time(float(t))
        t0 = pc()
        msgs = sampler.step(float(t), 1.7e9 + t)
        lines = [enc(m) for m in msgs]
        spent += pc() - t0
        for m, line in zip(msgs, lines, strict=True):
            n += 1
            if m["kind"] == protocol.KIND_SAMPLE:
                sample_bytes += len(line.encode("utf-8")) + 1
    return spent, sample_bytes, n


def bench_sim(minutes: int, repeats: int) -> dict[str, float]:
    from gpufleet_sampler.backends.sim import SimBackend

    best = float("inf")
    per_sample = 0.0
    for _ in range(repeats):
        b = SimBackend(scenario="healthy-8xa100", seed=0, interval=1.0)
        try:
            s = Sampler(b, interval=1.0, procs_interval=2.0)
            s.hello()
            spent, nbytes, _ = _drive(s, 60 * minutes)
        finally:
            b.close()
        best = min(best, spent)
        per_sample = nbytes / (60 * minutes * GPUS)
    return {
        "us_per_gpu_tick": best / (60 * minutes * GPUS) * 1e6,
        "bytes_per_gpu_sample": per_sample,
    }


class _Replay:
    """Stands in for pynvml with NVML "answering instantly": a first pass through the fake
    records every call's result per tick; the measured pass returns the recorded result with
    one dict lookup (cheaper than a real ctypes call, ~1.5 µs, so the figure is the sampler's
    own Python work). ``nvmlGpmMetricsGet`` fills its request in place: the filled bytes are
    recorded and copied back."""

    def __init__(self, fake: Any) -> None:
        import ctypes
        import types

        self.fake = fake
        self.recording = True
        self.misses = 0
        self.hits = 0
        self.memo: dict[Any, Any] = {}
        mod = types.ModuleType("pynvml_replay")
        mod.__dict__.update(fake.__dict__)
        for name, fn in fake.__dict__.items():
            # The event thread's wait is left live: replayed, it would spin.
            if (
                name.startswith("nvml")
                and not name.startswith("nvmlEventSet")
                and callable(fn)
                and not isinstance(fn, type)
            ):
                setattr(mod, name, self._wrap(name, fn, ctypes))
        self.module = mod

    def _wrap(self, name: str, fn: Any, ctypes: Any) -> Any:
        memo = self.memo
        clock = self.fake._fake
        gpm = name == "nvmlGpmMetricsGet"

        def call(*args: Any) -> Any:
            # Handles, samples and lists are the same objects each tick: key them by id.
            n = len(args)
            if n == 1:
                key: Any = (name, clock.fixed_tick, id(args[0]))
            elif n == 2:
                a1 = args[1]
                key = (name, clock.fixed_tick, id(args[0]), a1 if a1.__class__ is int else id(a1))
            else:
                key = (name, clock.fixed_tick, *[a if a.__class__ is int else id(a) for a in args])
            if self.recording:
                try:
                    res = fn(*args)
                except Exception as e:  # recorded and re-raised on replay, like the driver
                    memo[key] = (False, e)
                    raise
                if gpm:
                    req = args[0]
                    memo[key] = (True, ctypes.string_at(ctypes.addressof(req), ctypes.sizeof(req)))
                else:
                    memo[key] = (True, res)
                return res
            hit = memo.get(key)
            if hit is None:  # an argument that changed between the passes: ask the fake
                self.misses += 1
                return fn(*args)
            self.hits += 1
            ok, res = hit
            if not ok:
                raise res
            if gpm:
                ctypes.memmove(ctypes.addressof(args[0]), res, len(res))
                return args[0]
            return res

        call.__name__ = name
        return call


def _lookup_cost(rp: _Replay, b: Any) -> float:
    """µs one replayed answer costs (the wrapper's key building and dict lookup)."""
    h = b._gpus[0].h
    fn = rp.module.nvmlDeviceGetPowerUsage
    rp.fake._fake.set_time(1.0)
    n = 20000
    t0 = time.thread_time()
    for _ in range(n):
        fn(h)
    return (time.thread_time() - t0) / n * 1e6


def bench_nvml(minutes: int, repeats: int) -> dict[str, float]:
    from gpufleet_sampler.backends import nvml as nvml_mod
    from gpufleet_sampler.backends import nvml_lib

    from tests.support.nvml_fake import fake_nvml, profile

    ticks = 60 * minutes
    live = replay = float("inf")
    per_sample = 0.0
    misses = lookups = 0
    lookup_us = 0.0
    for _ in range(repeats):
        with fake_nvml(profile("h100x8")) as fake:
            rp = _Replay(fake)
            nvml_lib.N = rp.module  # restored by fake_nvml on exit
            # One reader thread: this thread's CPU clock then holds all of the work.
            b = nvml_mod.NvmlBackend(interval=1.0, workers=1)
            try:
                s = Sampler(b, interval=1.0, procs_interval=2.0)
                s.hello()
                spent_live, nbytes, _ = _drive(s, ticks, fake._fake.set_time)
                # Replay the same simulated minutes with every tier due again.
                rp.recording = False
                for g in b._gpus:
                    g.next_fields = None
                    g.next_putil = 0.0
                    g.gpm_t = -1.0
                s._last_procs_mono = None
                rp.hits = rp.misses = 0
                spent_replay, _, _ = _drive(s, ticks, fake._fake.set_time)
                misses = rp.misses
                lookups = rp.hits
                lookup_us = _lookup_cost(rp, b)
            finally:
                b.close()
        live = min(live, spent_live)
        replay = min(replay, spent_replay)
        per_sample = nbytes / (ticks * GPUS)
    return {
        "us_live": live / (ticks * GPUS) * 1e6,
        "us_own": replay / (ticks * GPUS) * 1e6,
        "bytes_per_gpu_sample": per_sample,
        "replay_misses": misses,
        "lookup_us": lookups * lookup_us / (ticks * GPUS),
    }


def bench_gpm_mig(ticks: int, repeats: int) -> dict[str, float]:
    """The GPM read (``nvmlGpmSampleGet`` + ``nvmlGpmMetricsGet`` and unpacking the metrics)
    and a MIG slice's per-tick row, each on its own: µs per GPU (per slice) per tick, with
    NVML answering instantly (replayed) and through the live fake."""
    from gpufleet_sampler.backends import nvml as nvml_mod
    from gpufleet_sampler.backends import nvml_lib, nvml_mig

    from tests.support.mig_profile import mig_profile
    from tests.support.nvml_fake import fake_nvml, profile

    ticks += ticks % 2  # the two GPM requests alternate: replay them in the recorded order
    best: dict[str, float] = {"gpm_live": 1e9, "gpm_own": 1e9, "mig_live": 1e9, "mig_own": 1e9}
    for _ in range(repeats):
        for prof, kind in ((profile("h100x8"), "gpm"), (mig_profile(), "mig")):
            with fake_nvml(prof) as fake:
                rp = _Replay(fake)
                nvml_lib.N = rp.module
                b = nvml_mod.NvmlBackend(interval=1.0, events=False)
                try:
                    if kind == "gpm":
                        units = [g for g in b._gpus if g.gpm]

                        def read(u: Any, t: float, b: Any = b) -> None:
                            b._gpm(u, t)
                    else:
                        units = list(b._mig)

                        def read(u: Any, t: float, n: Any = rp.module) -> None:
                            nvml_mig.row(n, u)

                    assert units, kind
                    for phase in ("live", "own"):
                        rp.recording = phase == "live"
                        spent = 0.0
                        for t in range(1, ticks + 1):
                            fake._fake.set_time(float(t))
                            t0 = time.thread_time()
                            for u in units:
                                read(u, float(t))
                            spent += time.thread_time() - t0
                        key = f"{kind}_{phase}"
                        best[key] = min(best[key], spent / (ticks * len(units)) * 1e6)
                finally:
                    b.close()
    return best


def _proc_status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0]) * 1024
    return out


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # utime and stime are fields 14 and 15 of stat; after the ")" they are at 11 and 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_stream(backend: str, seconds: float, cost: str | None = None) -> dict[str, float]:
    """RSS and CPU % of a real ``stream`` subprocess at 1 Hz, 8 GPUs (NVML costing ``cost``:
    a latency profile of the fake)."""
    from tests.support.nvml_fake import PROFILES, fake_env

    cmd = [sys.executable, "-m", "gpufleet_sampler", "stream", "--interval", "1.0"]
    if backend == "nvml":
        env = fake_env(PROFILES / "h100x8.json", tick_s=1.0)
        if cost:
            env["GPUFLEET_FAKE_NVML_COST"] = cost
        cmd += ["--backend", "nvml"]
    else:
        env = dict(os.environ, PYTHONPATH=str(ROOT / "remote"))
        cmd += ["--backend", "sim", "--scenario", "healthy-8xa100"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # Skip start-up (imports, probing) so the figure is the steady state.
        warm = 2.5
        time.sleep(warm)
        c0, w0 = _cpu_seconds(p.pid), time.monotonic()
        time.sleep(max(1.0, seconds - warm))
        c1, w1 = _cpu_seconds(p.pid), time.monotonic()
        st = _proc_status(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=10)
    return {
        "cpu_pct": (c1 - c0) / (w1 - w0) * 100.0,
        "rss_mib": st["VmRSS"] / 1048576.0,
        "hwm_mib": st["VmHWM"] / 1048576.0,
    }


# ---- the process tier's /proc reading (device holders) ---------------------------------------


def _fake_proc(root: Path, processes: int, gpu_procs: int, fds: int, gpu_fds: int) -> None:
    """A /proc tree of ``processes`` processes with ``fds`` open files each (sockets, pipes,
    regular files); ``gpu_procs`` of them hold /dev/nvidia0..7, nvidiactl and nvidia-uvm among
    ``gpu_fds`` files and map a device file among 3,000 library mappings, as a PyTorch job
    does."""
    for pid in range(1, processes + 1):
        d = root / str(pid)
        (d / "fd").mkdir(parents=True)
        gpu = pid > processes - gpu_procs
        n = gpu_fds if gpu else fds
        targets = [f"socket:[{pid * 1000 + i}]" if i % 3 else f"/var/log/f{i}" for i in range(n)]
        if gpu:
            targets[-10:] = [f"/dev/nvidia{g}" for g in range(8)] + [
                "/dev/nvidiactl",
                "/dev/nvidia-uvm",
            ]
        for i, t in enumerate(targets):
            os.symlink(t, d / "fd" / str(i))
        if gpu:
            # A PyTorch job's memory map: thousands of library lines, its context's device.
            libs = [
                f"7f{i:08x}000-7f{i:08x}fff r-xp 00000000 08:01 {i} /usr/lib/lib{i}.so\n"
                for i in range(3000)
            ]
            dev = [
                f"7e{g:08x}000-7e{g:08x}fff rw-s 00000000 00:05 {g} /dev/nvidia{g}\n" for g in (0,)
            ]
            (d / "maps").write_text("".join(libs[:1500] + dev + libs[1500:]))
        ppid = 1 if pid > 1 else 0
        (d / "stat").write_text(f"{pid} (proc{pid}) S {ppid} {pid} {pid} 0 -1 0 " + "0 " * 12
                                + f"{1000 + pid} 0 0\n")  # fmt: skip


def bench_process_tier(repeats: int = 20) -> list[tuple[str, int, float, float, float]]:
    """Median ms of one holder scan: a full one (every fd of every process) and a steady one
    (only processes whose number of open files changed are read again), and of the matching
    after it. The process tier's extra /proc reading: every procs interval, never per tick."""
    import statistics
    import tempfile

    from gpufleet_sampler.procs import holders as gpu_holders
    from gpufleet_sampler.procs import procfs

    out: list[tuple[str, int, float, float, float]] = []
    cases = [("container", 200, 8, 16, 120), ("host", 2000, 8, 12, 120)]
    saved = procfs.PROC

    # CPU time of this thread (user and system): other load on the machine does not count.
    clock = time.thread_time

    def measure(label: str, gp: int | None) -> None:
        full_ms, steady_ms, match_ms = [], [], []
        for _ in range(repeats):
            sc = gpu_holders.Scanner("/dev", full_s=30.0)
            t0 = clock()
            found = sc.scan(0.0)
            t1 = clock()
            found = sc.scan(2.0)
            t2 = clock()
            entries = [
                gpu_holders.Entry(g, 100000 + p, 1 << 30, "C", None)
                for p in found.holders
                for g in range(8)
            ]
            gpu_holders.match(entries, found.holders, {g: g for g in range(8)}, True)
            t3 = clock()
            full_ms.append((t1 - t0) * 1e3)
            steady_ms.append((t2 - t1) * 1e3)
            match_ms.append((t3 - t2) * 1e3)
        assert gp is None or len(found.holders) == gp
        out.append(
            (
                label,
                found.processes,
                statistics.median(full_ms),
                statistics.median(steady_ms),
                statistics.median(match_ms),
            )
        )

    try:
        for label, n, gp, fds, gfds in cases:
            with tempfile.TemporaryDirectory() as tmp:
                _fake_proc(Path(tmp), n, gp, fds, gfds)
                procfs.PROC = tmp
                measure(label, gp)
    finally:
        procfs.PROC = saved
    measure("this machine's /proc", None)
    return out


def print_process_tier() -> None:
    print(
        "Process tier: scanning every process's fds for /dev/nvidia* "
        "(median of 20, ms of CPU time):"
    )
    print(f"  {'':22s} {'processes':>9s} {'full':>8s} {'steady':>8s} {'match':>7s}")
    for label, n, full_ms, steady_ms, match_ms in bench_process_tier():
        print(f"  {label:22s} {n:9d} {full_ms:8.2f} {steady_ms:8.2f} {match_ms:7.2f}")
    print(
        "  full: every fd read (first pass, then every 30 s); steady: only processes whose "
        "fd count changed.\n  Once per procs interval (2 s); the per-tick path reads no /proc."
    )


# -- the NVML bill under a latency profile ------------------------------------------------

BILL_GPUS = (1, 8, 64)


def _scaled_profile(n: int, card: str = "hopper") -> dict[str, Any]:
    """``n`` GPUs of a card class (tests/support/nvml_fake.py's card_profile; hopper is
    h100x8.json; the GPUs past 8 take the defaults)."""
    from tests.support.nvml_fake import card_profile

    return card_profile(card, n)


def _charges(fake: Any) -> dict[str, float]:
    return dict(fake._fake.charged_us)


def bench_bill(
    n: int,
    cost: str,
    minutes: int,
    workers: int | None = None,
    pool_every: bool | None = None,
    card: str = "hopper",
) -> dict[str, Any]:
    """The nvml backend + loop over ``minutes`` simulated minutes, NVML costing ``cost``
    (``workers``: reader threads, ``pool_every``: which GPUs go to them; the backend's
    defaults when None), on ``n`` GPUs of the card class ``card``."""
    from gpufleet_sampler.backends.nvml import NvmlBackend

    from tests.support.nvml_fake import fake_nvml

    ticks = 60 * minutes
    enc = protocol.encode
    with fake_nvml(_scaled_profile(n, card)) as fake:
        fake._fake.set_cost(cost)
        try:
            c0, w0 = time.process_time(), time.perf_counter()
            b = NvmlBackend(interval=1.0, events=False, workers=workers, pool_every=pool_every)
            s = Sampler(b, interval=1.0, procs_interval=2.0)
            s.hello()
            start_cpu, start_wall = time.process_time() - c0, time.perf_counter() - w0
            plan = b.cpu_plan()
            before = _charges(fake)
            calls0 = dict(fake._fake.charged_n)
            walls: list[float] = []
            cpu = 0.0
            try:
                for t in range(1, ticks + 1):
                    fake._fake.set_time(float(t))
                    c0, w0 = time.process_time(), time.perf_counter()
                    for m in s.step(float(t), 1.7e9 + t):
                        enc(m)
                    walls.append(time.perf_counter() - w0)
                    cpu += time.process_time() - c0
                plan = b.cpu_plan()
                # Whether the plan took PCIe/NVLink throughput from GPM (known once GPM was
                # timed on the first ticks: the start-up hello cannot say yet).
                gpm = bool(b.hello()["gpus"][0].get("gpm_throughput"))
                peer = b.peer_pct
            finally:
                b.close()
            after = _charges(fake)
            calls = {k: v - calls0.get(k, 0) for k, v in fake._fake.charged_n.items()}
        finally:
            fake._fake.set_cost(None)
    per_call = {
        k: (after[k] - before.get(k, 0.0)) / (ticks * n)
        for k in after
        if after[k] - before.get(k, 0.0) > 0
    }
    first = walls[0]
    walls.sort()
    return {
        "gpus": n,
        "wall_ms_first": first * 1e3,
        "wall_ms_mean": sum(walls) / len(walls) * 1e3,
        "us_per_gpu_tick": cpu / (ticks * n) * 1e6,
        "cpu_pct": cpu / ticks * 100.0,
        "per_call": per_call,
        "calls_per_gpu_tick": {k: v / (ticks * n) for k, v in calls.items() if v},
        "wall_ms_median": walls[len(walls) // 2] * 1e3,
        "wall_ms_p99": walls[int(len(walls) * 0.99)] * 1e3,
        "wall_ms_max": walls[-1] * 1e3,
        "start_cpu_s": start_cpu,
        "start_wall_s": start_wall,
        "plan": plan,
        "gpm": gpm,
        # What a peer's refresh of these GPUs costs by the plan's timing (% of a core): what
        # the plan aims below once the budget makes it give something up.
        "peer_pct": peer,
    }


# Field ids a script reading the sampler's columns every tick would ask for in one call.
_BARE_FIELDS = [83, 82, 197, 198, 94, 74, 271, 269, 270, 3, 4, (138, 0xFFFFFFFF), (139, 0xFFFFFFFF)]


def bench_bare(n: int, cost: str, ticks: int = 60) -> dict[str, Any]:
    """A bare pynvml loop: the same columns every tick with the obvious calls (nine cheap
    getters and one field read; GPM sample and metrics), the process lists and per-process
    utilization every 2 s, one GPU after another."""
    from tests.support.nvml_fake import fake_nvml

    with fake_nvml(_scaled_profile(n)) as fake:
        nv = fake
        nv.nvmlInit()
        hs = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(n)]
        bufs = [(nv.nvmlGpmSampleAlloc(), nv.nvmlGpmSampleAlloc()) for _ in hs]
        for h, (a, _) in zip(hs, bufs, strict=True):
            nv.nvmlGpmSampleGet(h, a)
        fake._fake.set_cost(cost)
        try:
            cpu = 0.0
            for t in range(1, ticks + 1):
                fake._fake.set_time(float(t))
                c0 = time.process_time()
                for h, (a, b2) in zip(hs, bufs, strict=True):
                    nv.nvmlDeviceGetUtilizationRates(h)
                    for clk in (nv.NVML_CLOCK_SM, nv.NVML_CLOCK_MEM, nv.NVML_CLOCK_GRAPHICS):
                        nv.nvmlDeviceGetClockInfo(h, clk)
                    nv.nvmlDeviceGetTemperatureV(h, nv.NVML_TEMPERATURE_GPU)
                    nv.nvmlDeviceGetPerformanceState(h)
                    nv.nvmlDeviceGetCurrentClocksEventReasons(h)
                    nv.nvmlDeviceGetPowerUsage(h)
                    nv.nvmlDeviceGetMemoryInfo(h, nv.nvmlMemory_v2)
                    nv.nvmlDeviceGetFieldValues(h, _BARE_FIELDS)
                    nv.nvmlGpmSampleGet(h, b2)
                    req = nv.c_nvmlGpmMetricsGet_t()
                    req.version = nv.NVML_GPM_METRICS_GET_VERSION
                    req.numMetrics = 4
                    req.sample1, req.sample2 = a, b2
                    for i, mid in enumerate((2, 3, 5, 10)):
                        req.metrics[i].metricId = mid
                    nv.nvmlGpmMetricsGet(req)
                    if t % 2 == 0:
                        nv.nvmlDeviceGetComputeRunningProcesses_v3(h)
                        nv.nvmlDeviceGetGraphicsRunningProcesses_v3(h)
                        with contextlib.suppress(nv.NVMLError):
                            nv.nvmlDeviceGetProcessUtilization(h, 0)
                cpu += time.process_time() - c0
        finally:
            fake._fake.set_cost(None)
    return {"us_per_gpu_tick": cpu / (ticks * n) * 1e6, "cpu_pct": cpu / ticks * 100.0}


def bench_tool(
    name: str, n: int, cost: str, ticks: int = 30, card: str = "hopper"
) -> dict[str, Any] | None:
    """One refresh of nvitop or gpustat per tick, through the same fake (None: not
    installed). nvitop: ``Device.as_snapshot()`` and its processes' snapshots per device,
    as its one-shot view does; gpustat: ``GPUStatCollection.new_query()``, as ``--watch``."""
    from tests.support.nvml_fake import fake_nvml

    if importlib.util.find_spec(name) is None:
        return None
    with fake_nvml(_scaled_profile(n, card)) as fake:
        # nvitop calls process lists and memory through ctypes, and asks which exist once.
        fake._fake.c_entry_points = True
        # Imported with the fake in place: nvitop copies pynvml's names at import.
        mod = importlib.import_module(name)
        # Both import pynvml lazily or keep a module reference: point them at the fake.
        if name == "nvitop":
            importlib.import_module("nvitop.api.libnvml")._pynvml = fake
        else:
            importlib.import_module("gpustat.core").N = fake
        devices: list[Any] = []
        if name == "nvitop":
            devices = mod.Device.all()

        def refresh() -> None:
            if name == "nvitop":
                for d in devices:
                    d.as_snapshot()
                    procs = d.processes()
                    mod.GpuProcess.take_snapshots(procs.values(), failsafe=True)
            else:
                mod.GPUStatCollection.new_query()

        # One refresh first, as a running tool has made: its caches are warm and the calls
        # the profile charges only once (start-up costs) are paid.
        fake._fake.set_cost(cost)
        with contextlib.redirect_stderr(io.StringIO()):
            refresh()
        before = _charges(fake)
        try:
            cpu = 0.0
            with contextlib.redirect_stderr(io.StringIO()):
                for t in range(1, ticks + 1):
                    fake._fake.set_time(float(t))
                    c0 = time.process_time()
                    refresh()
                    cpu += time.process_time() - c0
            after = _charges(fake)
        finally:
            fake._fake.set_cost(None)
            fake._fake.c_entry_points = False
    top = sorted(
        ((k, (v - before.get(k, 0.0)) / (ticks * n)) for k, v in after.items()),
        key=lambda kv: -kv[1],
    )[:3]
    return {
        "us_per_gpu_tick": cpu / (ticks * n) * 1e6,
        "cpu_pct": cpu / ticks * 100.0,
        "top": top,
    }


def _tool_in_subprocess(name: str, cost: str, card: str = "hopper") -> dict[str, Any] | None:
    """bench_tool in a fresh interpreter: nvitop patches functions into the pynvml module it
    imports, which must not leak into the next run's fake."""
    res = subprocess.run(
        [sys.executable, __file__, "--tool-json", name, "--cost", cost, "--card", card],
        capture_output=True,
        timeout=600,
        check=False,
    )
    if res.returncode != 0:
        raise RuntimeError(f"{name} benchmark failed: {res.stderr.decode()[-2000:]}")
    out: dict[str, Any] | None = json.loads(res.stdout.decode().strip().splitlines()[-1])
    return out


def _call_label(name: str) -> str:
    return name.replace("nvmlDeviceGet", "").replace("nvml", "")


def section_bill(args: argparse.Namespace) -> None:
    """The NVML bill under the latency profile (see the module docstring)."""
    for cost in args.cost:
        print()
        print(
            f"NVML bill under the '{cost}' profile (docs/device/h200-nvml-call-times.json), "
            f"{args.bill_minutes} simulated min at 1 Hz, every tier included:"
        )
        rows = [bench_bill(n, cost, args.bill_minutes) for n in BILL_GPUS]
        one = bench_bill(8, cost, max(1, args.bill_minutes // 5), workers=1)
        one["gpus"] = "8/1"
        print(
            "  GPUs  CPU/GPU/tick  process CPU at 1 Hz  tick wall mean / median / p99 / max"
            "  (first)   start"
        )
        for r in [*rows, one]:
            print(
                f"  {r['gpus']!s:>4}  {r['us_per_gpu_tick']:8.0f} µs"
                f"  {r['cpu_pct']:8.2f} % of a core"
                f"   {r['wall_ms_mean']:6.2f} / {r['wall_ms_median']:6.2f}"
                f" / {r['wall_ms_p99']:6.2f} / {r['wall_ms_max']:6.2f} ms"
                f" ({r['wall_ms_first']:.0f})"
                f"   {r['start_wall_s']:.2f} s"
            )
        print(f"  (8/1: 8 GPUs read by one thread; this machine has {os.cpu_count()} cores)")
        r8 = next(r for r in rows if r["gpus"] == 8)
        plan = r8["plan"]
        print(
            f"  plan (8 GPUs): budget {plan['budget_pct']} % of a core, planned "
            f"{plan['planned_pct']} % (measured {plan.get('measured_pct')} %), "
            f"{plan['workers']} reader threads for {plan.get('pooled')} "
            f"({plan.get('cpus')} usable cores); tiers (s) "
            + ", ".join(f"{k} {v:g}" for k, v in plan["tiers_s"].items())
        )
        print("  per call kind, µs per GPU per tick (8 GPUs; charged by the profile):")
        shown = sorted(r8["per_call"].items(), key=lambda kv: -kv[1])
        accounted = sum(v for _, v in shown)
        for k, v in shown[:10]:
            calls = r8["calls_per_gpu_tick"].get(k, 0.0)
            print(f"    {_call_label(k):36s} {v:8.1f} µs   {calls:6.3f} calls")
        print(
            f"    {'(everything else: the sampler, the fake)':36s}"
            f" {r8['us_per_gpu_tick'] - accounted:8.1f} µs"
        )
        bare = bench_bare(8, cost)
        print(
            f"  bare pynvml loop, 8 GPUs        {bare['us_per_gpu_tick']:8.0f} µs/GPU/tick"
            f"  {bare['cpu_pct']:6.2f} % of a core"
        )
        for tool in ("nvitop", "gpustat"):
            t = _tool_in_subprocess(tool, cost)
            if t is None:
                print(f"  {tool:8s} not installed (pip install {tool} into the venv to compare)")
                continue
            top = ", ".join(f"{_call_label(k)} {v:.0f}" for k, v in t["top"])
            print(
                f"  {tool:8s} per refresh, 8 GPUs {t['us_per_gpu_tick']:8.0f} µs/GPU/tick"
                f"  {t['cpu_pct']:6.2f} % of a core   (top µs: {top})"
            )
        if args.stream_seconds > 0:
            secs = max(args.stream_seconds, 20.0)
            r = bench_stream("nvml", secs, cost=cost)
            print(
                f"  a real `stream` subprocess, 8 GPUs at 1 Hz, {secs:.0f} s:"
                f" CPU {r['cpu_pct']:5.2f} % of a core (event thread included)"
            )


def section_python(args: argparse.Namespace) -> None:
    """The sampler's own Python work, bytes on the wire, a real stream's RSS and CPU."""
    print(
        f"Sampler benchmark: {GPUS} GPUs, 1 s ticks, {args.minutes} simulated min, best of "
        f"{args.repeats}; Python {sys.version.split()[0]}"
    )
    sim = bench_sim(args.minutes, args.repeats)
    nv = bench_nvml(args.minutes, args.repeats)
    print()
    print("Python work per GPU per tick (Sampler.step + encode, every tier included):")
    print(f"  sim  healthy-8xa100                         {sim['us_per_gpu_tick']:7.1f} µs")
    print(
        f"  nvml 8x H100, NVML answering instantly      {nv['us_own']:7.1f} µs"
        f"   (replayed answers; {nv['replay_misses']} live calls)"
    )
    print(
        f"       of which replaying the answers (dict lookups) {nv['lookup_us']:5.1f} µs"
        f" -> the sampler's own work ≈ {nv['us_own'] - nv['lookup_us']:.1f} µs"
    )
    print(
        f"  nvml 8x H100, through the live fake pynvml  {nv['us_live']:7.1f} µs"
        "   (the fake's own Python answers included)"
    )
    print("  budget: < 150 µs, aim 40 µs")
    print()
    gm = bench_gpm_mig(60 * args.minutes, args.repeats)
    print("GPM and MIG reads alone (included in the figures above where the GPU has them):")
    print(
        f"  GPM (SampleGet + MetricsGet + unpack), per GPU per tick   {gm['gpm_own']:6.1f} µs"
        f"   live fake {gm['gpm_live']:6.1f} µs"
    )
    print(
        f"  a MIG slice's row (memory info v2), per slice per tick    {gm['mig_own']:6.1f} µs"
        f"   live fake {gm['mig_live']:6.1f} µs"
    )
    print()
    print("Bytes per GPU-sample on the wire (sample lines, newline included):")
    print(
        f"  sim  {sim['bytes_per_gpu_sample']:6.1f} B    nvml {nv['bytes_per_gpu_sample']:6.1f} B"
        "    budget: < 400 B"
    )
    print()
    print(
        f"A real `stream` subprocess, 8 GPUs at 1 Hz, steady state over "
        f"{args.stream_seconds:.0f} s:"
    )
    for backend in ("sim", "nvml"):
        r = bench_stream(backend, args.stream_seconds)
        print(
            f"  {backend:4s}  CPU {r['cpu_pct']:5.2f} % of one core   RSS {r['rss_mib']:5.1f} MiB"
            f"   peak RSS {r['hwm_mib']:5.1f} MiB"
        )
    print("  budget: RSS < 30 MiB; CPU < 2 % of a core on a real GPU (driver time not here)")


def section_process_tier(args: argparse.Namespace) -> None:
    """The process tier's /proc scan (device holders)."""
    print_process_tier()


# The benchmark's sections, in the order they print: (name, function(args)).
SCALING_GPUS = (1, 2, 4, 8)
# (label, workers, pool_every): one thread; the backend's default (the GPUs with a long read
# due on a pool of one thread per GPU, at most the usable cores); every GPU on a pool of one
# thread per GPU.
SCALING_POLICIES = (
    ("one thread", 1, None),
    ("long reads on the pool", None, None),
    ("every GPU on the pool", 8, True),
)


def section_scaling(args: argparse.Namespace) -> None:
    """Tick wall time against the GPU count, per way of reading them, under the first
    ``--cost`` profile: does a tick take about one GPU's time, or the sum?"""
    cost = args.cost[0]
    minutes = max(1, args.bill_minutes // 3)
    cpus = len(os.sched_getaffinity(0))
    print()
    print(
        f"Tick wall time by GPU count under the '{cost}' profile, {minutes} simulated min "
        f"each, {cpus} usable cores, load average {os.getloadavg()[0]:.2f} at start:"
    )
    print(
        "  reading                   GPUs  wall median / mean / p99 ms   x one GPU   CPU/GPU/tick"
    )
    for label, workers, every in SCALING_POLICIES:
        base = None
        for n in SCALING_GPUS:
            r = bench_bill(n, cost, minutes, workers=workers, pool_every=every)
            base = base or r["wall_ms_median"]
            print(
                f"  {label:<24}  {n:>4}  {r['wall_ms_median']:6.2f} / {r['wall_ms_mean']:6.2f}"
                f" / {r['wall_ms_p99']:6.2f}        {r['wall_ms_median'] / base:5.1f}x"
                f"     {r['us_per_gpu_tick']:6.0f} µs"
            )


# What the plan stretched, by tier, in the words of the table (the rest is at its period).
_TIER_WORDS = {
    "fields": "counters",
    "medium": "medium tier",
    "slow": "error totals",
    "links": "per-link NVLink",
    "putil": "per-process util",
    "rates": "PCIe/NVLink throughput",
}


def _gave_up(plan: dict[str, Any]) -> str:
    """The tiers the plan read less often than needed, each with its period (s)."""
    out = [f"{_TIER_WORDS.get(k, k)} {n:g}->{v:g}" for k, (n, v) in plan["gave_up"].items()]
    return ", ".join(out) or "nothing"


def _tool_pct(name: str, cost: str, card: str) -> str:
    """A tool's % of a core for the cards table: "-" not installed, "fails" where it cannot
    run on this card's fake (gpustat on the 4090 profile: the pynvml it ships insists on
    the unversioned process list the profile lacks)."""
    try:
        t = _tool_in_subprocess(name, cost, card)
    except RuntimeError:
        return "   fails"
    return f"{t['cpu_pct']:8.2f}" if t else "       -"


def section_cards(args: argparse.Namespace) -> None:
    """One row per card class and cost model: 8 GPUs at 1 Hz, the sampler's CPU beside
    nvitop's and gpustat's on the same fake, and what the plan gave up (issue 28)."""
    print()
    print(
        f"Card classes, 8 GPUs at 1 Hz, {args.bill_minutes} simulated min each, CPU time of "
        f"this process; load average {os.getloadavg()[0]:.2f} at start:"
    )
    print(
        "  card    cost model        sampler % of a core  within  GPM  nvitop %  gpustat %"
        "  peer-equivalent %   what the plan gave up (tier: needed -> planned s)"
    )
    for card in args.card:
        for cost in args.cost:
            r = bench_bill(8, cost, args.bill_minutes, card=card)
            plan = r["plan"]
            shown = [_tool_pct(t, cost, card) for t in ("nvitop", "gpustat")]
            print(
                f"  {card:6s}  {cost:16s}  {r['cpu_pct']:19.2f}  {plan['within']!s:6s}"
                f"  {'yes' if r['gpm'] else 'no':3s}  {shown[0]}  {shown[1]} "
                f"  {r['peer_pct'] or 0.0:17.2f}   {_gave_up(plan)}"
            )


SECTIONS: list[tuple[str, Any]] = [
    ("python", section_python),
    ("bill", section_bill),
    ("cards", section_cards),
    ("scaling", section_scaling),
    ("process-tier", section_process_tier),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=int, default=5, help="simulated minutes per run")
    ap.add_argument("--repeats", type=int, default=3, help="best of N runs")
    ap.add_argument("--stream-seconds", type=float, default=12.0)
    ap.add_argument("--bill", action="store_true", help="add the NVML bill section")
    ap.add_argument(
        "--process-tier", action="store_true", help="only the process tier's /proc scan"
    )
    ap.add_argument(
        "--only", choices=[n for n, _ in SECTIONS], action="append", help="run only these"
    )
    ap.add_argument(
        "--cost",
        action="append",
        help="latency profile(s) for the bill: h200 (default), h200-per-field, or a file",
    )
    ap.add_argument("--bill-minutes", type=int, default=10, help="simulated minutes (bill)")
    ap.add_argument(
        "--card",
        action="append",
        choices=CARD_CLASSES,
        help="card class(es) for the cards section (default: every one)",
    )
    ap.add_argument("--tool-json", help=argparse.SUPPRESS)  # one tool's run, as JSON
    args = ap.parse_args()
    args.cost = args.cost or ["h200"]
    args.card = args.card or list(CARD_CLASSES)
    if args.tool_json:
        with contextlib.redirect_stderr(io.StringIO()):
            print(json.dumps(bench_tool(args.tool_json, 8, args.cost[0], card=args.card[0])))
        # nvitop's exit handler shuts NVML down again: the fake is gone by then.
        os._exit(0)
    wanted = set(args.only or ["python"] + (["bill"] if args.bill else []))
    if args.process_tier:
        wanted = {"process-tier"}
    for name, fn in SECTIONS:
        if name in wanted:
            fn(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
