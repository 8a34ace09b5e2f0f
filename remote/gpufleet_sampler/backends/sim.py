"""Simulated GPUs driven by named scenarios, for the demo and for tests.

Each scenario is a fleet of one GPU model running jobs on a timeline, plus at most one fault
(a blocked airflow, an ECC incident). The dynamics are simple physics, enough to look and
behave like the real thing:

- power follows utilization and job intensity, scales with the clock (≈ f²), and is held at
  the enforced limit by lowering the clock (the ``power_cap`` reason bit);
- temperature follows power with first-order thermal inertia (time constant ``TAU_S``);
  past ``slowdown - 3`` °C the clock drops (``sw_thermal``), at slowdown ``hw_thermal`` too;
- energy integrates power; PCIe and NVLink rates follow the job's traffic pattern (data
  loading, periodic all-reduce bursts, checkpoints) averaged over the sample interval.

Scenario time is seconds since the first tick (the loop's monotonic time), so ``--no-wait``
replays an hour in seconds, and every value is a function of the seed and the simulated time
only (no wall-clock randomness): the same seed and the same ticks give the same values.
``time_scale`` (or ``GPUFLEET_SIM_TIME_SCALE``) multiplies every scenario time, so tests can
see a crash or a fault within seconds of simulated time. ``start_s`` (or
``GPUFLEET_SIM_START_S``) starts the scenario that many seconds in: the demo app pre-fills
its plots with the first half hour simulated in-process, and the live sampler then goes on
from there instead of starting the story again.

The processes it reports are real local child processes, started on the first ``procs()``
call, so that the process table, start ticks and a kill are real: a job whose process is
killed by someone else drops its load and memory from the next tick on. The children poll
their parent and exit when orphaned, and ``close()`` kills them.

Python 3.8, stdlib only.
"""

import contextlib
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any, Dict, List, Optional, Set

from gpufleet_sampler import protocol, protocol_schema
from gpufleet_sampler.backends.base import Backend
from gpufleet_sampler.procs import procfs
from gpufleet_sampler.sim.gpus import MIB
from gpufleet_sampler.sim.scenarios import SCENARIOS, JobSpec

_N_COLS = len(protocol.COLUMNS)

AMBIENT_C = 28.0
TAU_S = 20.0  # thermal time constant of a GPU with its heatsink
SHUTDOWN_MARGIN_C = 2.0  # the hottest a card reads: this far under its shutdown
ALLREDUCE_PERIOD_S = 3.0  # one training step; the all-reduce is at its end
ALLREDUCE_ON_S = 0.8
CHECKPOINT_PERIOD_S = 600.0
CHECKPOINT_LEN_S = 15.0

DRIVER_VERSION = "550.90.07"
CUDA_VERSION = "12.4"


# Bus ids of the GPUs in a typical 8-GPU SXM chassis.
_BUS_IDS = (0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD)

_CHILD_SCRIPT = """\
import os, time
# Take the job's name ("xmrig", "python") as our comm, the name a process table shows, as the
# real program would have it; we are a Python interpreter under a label.
try:
    with open("/proc/self/comm", "w") as f:
        f.write(os.environ.get("GPUFLEET_SIM_NAME", "")[:15] or "python")
except OSError:
    pass
# Exit when the sampler that started us is gone (orphaned: our parent pid changes).
p = int(os.environ.get("GPUFLEET_SIM_PARENT") or "0") or os.getppid()
while os.getppid() == p:
    time.sleep(0.5)
"""


def _on_time(x: float, period: float, on: float) -> float:
    """Seconds spent inside windows [k*period, k*period + on) during [0, x]."""
    k = math.floor(x / period)
    return k * on + min(x - k * period, on)


def _on_frac(t0: float, t1: float, period: float, on: float) -> float:
    """Share of [t0, t1] inside the periodic windows: the mean of a square wave over the
    sample interval, as a counter delta would see it."""
    if t1 <= t0:
        return 0.0
    return (_on_time(t1, period, on) - _on_time(t0, period, on)) / (t1 - t0)


def _await_exec(pid: int) -> None:
    """Wait (briefly) until the child's command line is readable.

    Popen may return as soon as the child calls execve (vfork), before the kernel has set up
    the new image's arguments: /proc/PID/cmdline reads empty for a moment then."""
    for _ in range(200):
        if procfs.proc_argv(pid):
            return
        time.sleep(0.005)


class _Job(object):
    """Runtime state of a JobSpec: its process, and whether it ended or was killed."""

    __slots__ = ("end_s", "ended", "info", "killed", "proc", "share", "spec", "start_s")

    def __init__(self, spec: JobSpec, scale: float) -> None:
        self.spec = spec
        self.start_s = spec.start_s * scale
        self.end_s = None if spec.end_s is None else spec.end_s * scale
        self.proc = None  # type: Optional[subprocess.Popen[bytes]]
        # Read from /proc once: our own child's identity and command line never change.
        self.info = None  # type: Optional[procfs.ProcInfo]
        self.killed = False  # killed by someone else: its load is gone for good
        self.ended = False  # the scenario ended it (a crash)
        self.share = {}  # type: Dict[int, float]  # gpu -> sm % at the last tick


class SimBackend(Backend):
    """Backend over simulated GPUs; see the module docstring."""

    name = "sim"

    def __init__(
        self,
        scenario: str = "healthy-8xa100",
        seed: int = 0,
        interval: float = 1.0,
        time_scale: Optional[float] = None,
        start_s: Optional[float] = None,
    ) -> None:
        if scenario not in SCENARIOS:
            raise ValueError(
                "unknown sim scenario {!r} (known: {})".format(scenario, ", ".join(SCENARIOS))
            )
        if time_scale is None:
            env = os.environ.get("GPUFLEET_SIM_TIME_SCALE")
            try:
                time_scale = float(env) if env else 1.0
            except ValueError:
                raise ValueError(
                    "GPUFLEET_SIM_TIME_SCALE must be a number, got {!r}".format(env)
                ) from None
        if not time_scale > 0:
            raise ValueError("the sim time scale must be > 0")
        if start_s is None:
            env = os.environ.get("GPUFLEET_SIM_START_S")
            try:
                start_s = float(env) if env else 0.0
            except ValueError:
                raise ValueError(
                    "GPUFLEET_SIM_START_S must be a number, got {!r}".format(env)
                ) from None
        if not start_s >= 0:
            raise ValueError("the sim start time must be >= 0")
        self.start_s = float(start_s)
        self.scenario = scenario
        self.seed = seed
        self.interval = float(interval)
        self.time_scale = time_scale
        self._sc = SCENARIOS[scenario]
        self._m = self._sc.model
        # A string seed is hashed with SHA-512 by random: stable across runs and versions.
        self._rng = random.Random("{}:{}".format(scenario, seed))
        n = self._sc.n_gpus
        m = self._m
        self._limit = self._sc.power_enforced_w or m.power_default
        self._jobs = [_Job(s, time_scale) for s in self._sc.jobs]
        self._mono0 = None  # type: Optional[float]
        self._last_t = 0.0
        self._first = True
        self._temp = [
            AMBIENT_C + m.r_th * m.power_idle + 2.0 * self._rng.random() for _ in range(n)
        ]
        # NVML's energy counter runs since driver load: start somewhere in the past days.
        self._energy = [self._rng.uniform(2e7, 4e8) for _ in range(n)]
        self._r_th = [m.r_th * (0.97 + 0.06 * self._rng.random()) for _ in range(n)]
        self._sbe = [0] * n
        self._dbe = [0] * n
        self._remap_corr = [0] * n
        self._remap_unc = [0] * n
        self._remap_pending = [0] * n
        self._lost = [False] * n
        self._util = [0.0] * n
        self._init_links(scenario, seed)
        self._events = []  # type: List[Dict[str, Any]]
        self._fired: Set[Any] = set()
        self._live_procs = False
        self._tmpdir = None  # type: Optional[str]
        self._uuids = []  # type: List[str]
        urng = random.Random("uuid:{}:{}".format(scenario, seed))
        for _ in range(n):
            self._uuids.append("GPU-" + str(uuid.UUID(int=urng.getrandbits(128), version=4)))
        if scenario == "ecc-xid" and self._sc.ecc_fault is not None:
            # A board with a history: corrected errors and remapped rows from earlier weeks,
            # and an uncorrectable error from the previous tenant whose row remapping is still
            # pending (nobody reset the GPU): what the start-of-rental check exists to catch.
            g = self._sc.ecc_fault[0]
            self._remap_corr[g] = 2
            self._remap_unc[g] = 1
            self._remap_pending[g] = 1

    # ---- static facts -------------------------------------------------------------------

    def _gpu_facts(self, i: int) -> Dict[str, Any]:
        m = self._m
        facts = self._gpu_facts_base(i)
        if not m.nvlink_links:
            facts[protocol.LINKS_UNSUPPORTED_KEY] = "NotSupported: this board has no NVLink"
        return protocol_schema.hello_gpu(facts)

    def _gpu_facts_base(self, i: int) -> Dict[str, Any]:
        m = self._m
        return {
            "index": i,
            "uuid": self._uuids[i],
            "name": m.name,
            "pci_bus_id": "00000000:{:02X}:00.0".format(_BUS_IDS[i % len(_BUS_IDS)]),
            "nominal": {
                "sm_clock_max_mhz": m.sm_max,
                "mem_clock_max_mhz": m.mem_clock_max,
                "sm_clock_base_mhz": m.sm_base,
                "power_default_w": m.power_default,
                "power_enforced_w": self._limit,
                "power_min_w": m.power_min,
                "power_max_w": m.power_max,
                "temp_slowdown_c": m.temp_slowdown,
                "temp_shutdown_c": m.temp_shutdown,
                "temp_mem_max_c": m.temp_mem_max,
                "pcie_max_gen": m.pcie_gen,
                "pcie_max_width": 16,
                "nvlink_links": m.nvlink_links,
                "nvlink_link_bps": m.nvlink_link_bps,
                "mem_total_bytes": m.mem_total,
                "mem_reserved_bytes": m.mem_reserved,
            },
            "unsupported": m.unsupported(),
            "arch": m.arch,
            "compute_capability": m.cuda_cc,
            "brand": "geforce" if m.geforce else "nvidia",
            "ecc_mode": None if m.geforce else True,
            "lost": 0,
            "serial": None if m.geforce else "13242{:08d}".format(1000 + i),
            "vbios": "92.00.45.00.0{}".format(3 if m.arch == "ampere" else 5),
            "persistence_mode": not m.geforce,
            "mig_mode": None if m.geforce else False,
            "virtualization_mode": "passthrough" if m.geforce else "none",
            "compute_mode": "default",
        }

    def _host(self) -> Dict[str, Any]:
        return {
            "driver_version": DRIVER_VERSION,
            "cuda_version": CUDA_VERSION,
            "nvml_version": "12." + DRIVER_VERSION,
            "simulated": True,
            "scenario_description": self._sc.description,
        }

    def hello(self) -> Dict[str, Any]:
        return {
            "host": self._host(),
            "gpus": [self._gpu_facts(i) for i in range(self._sc.n_gpus)],
        }

    # ---- jobs and their real processes -------------------------------------------------

    def _update_jobs(self, t: float) -> None:
        """Apply the timeline (start, crash) and notice processes killed from outside."""
        for job in self._jobs:
            if job.killed or job.ended:
                continue
            if job.end_s is not None and t >= job.end_s:
                job.ended = True
                self._stop_proc(job, signal.SIGKILL)
                continue
            proc = job.proc
            if proc is not None:
                if proc.poll() is not None:
                    job.killed = True
                    job.proc = None
                    job.info = None
            elif self._live_procs and t >= job.start_s:
                self._start_proc(job)

    def _alive(self, job: _Job, t: float) -> bool:
        return not job.killed and not job.ended and t >= job.start_s

    def _start_proc(self, job: _Job) -> None:
        spec = job.spec
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="gpufleet-sim-")
        env = dict(os.environ)
        env["GPUFLEET_SIM_PARENT"] = str(os.getpid())
        env["GPUFLEET_SIM_NAME"] = os.path.basename(spec.argv[0])
        # argv[0] is only a label: the real program is this interpreter.
        kwargs = {
            "executable": sys.executable,
            "cwd": self._tmpdir,
            "env": env,
            "stdout": subprocess.DEVNULL,
            "stderr": subprocess.DEVNULL,
            "close_fds": True,
            # Not in our process group: a Ctrl-C meant for the sampler must not look like
            # someone killing the job.
            "start_new_session": True,
        }  # type: Dict[str, Any]
        try:
            if spec.script is not None:
                path = os.path.join(self._tmpdir, spec.script)
                if not os.path.exists(path):
                    with open(path, "w") as f:
                        f.write(_CHILD_SCRIPT)
                job.proc = subprocess.Popen(spec.argv, stdin=subprocess.DEVNULL, **kwargs)
            else:
                job.proc = subprocess.Popen(spec.argv[:1], stdin=subprocess.PIPE, **kwargs)
                stdin = job.proc.stdin
                if stdin is not None:
                    stdin.write(_CHILD_SCRIPT.encode())
                    stdin.close()
            _await_exec(job.proc.pid)
        except OSError as e:
            # No process then, but the simulation goes on (its load stays simulated).
            job.proc = None
            why = "sim: cannot start the process for {}: {}".format(spec.key, e)
            self._emit(protocol.EVENT_NOTE, None, None, why)

    def _stop_proc(self, job: _Job, sig: int) -> None:
        proc = job.proc
        job.proc = None
        job.info = None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def procs(self, mono: float) -> List[Dict[str, Any]]:
        if not self._live_procs:
            self._live_procs = True
            self._update_jobs(self._time(mono))
        out = []  # type: List[Dict[str, Any]]
        for job in self._jobs:
            proc = job.proc
            if proc is None or job.killed or job.ended:
                continue
            info = job.info
            if info is None:
                info = procfs.proc_info(proc.pid)
                if info is None:
                    continue
                # Keep it once the child has taken its job's name (it renames itself just
                # after it starts; until then the cache re-reads it when the name changes).
                named = info.name == os.path.basename(job.spec.argv[0])[:15]
                if named and info.cmd and not info.cmd.startswith("["):
                    job.info = info
            for g in job.spec.gpus:
                if self._lost[g]:
                    continue
                out.append(
                    {
                        "gpu": g,
                        "pid": proc.pid,
                        "start_ticks": info.start_ticks,
                        "user": info.user,
                        "name": info.name,
                        "cmd": info.cmd,
                        "mem_bytes": job.spec.mem_bytes,
                        "sm_pct": round(job.share.get(g, 0.0)),
                        "type": "compute",
                    }
                )
        return out

    def close(self) -> None:
        for job in self._jobs:
            if job.proc is not None:
                with contextlib.suppress(OSError):
                    job.proc.send_signal(signal.SIGTERM)
        for job in self._jobs:
            self._stop_proc(job, signal.SIGTERM)
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    # ---- per-link NVLink (the ``links`` message) ----------------------------------------

    def _init_links(self, scenario: str, seed: int) -> None:
        """Per-link state. A random stream of its own, so that adding links left every other
        simulated value (drawn from ``self._rng``) exactly as it was."""
        m = self._m
        n = self._sc.n_gpus
        self.links_interval = protocol.LINKS_INTERVAL_S
        lrng = random.Random("links:{}:{}".format(scenario, seed))
        # NCCL spreads an all-reduce evenly over the links; a few % of imbalance per link
        # makes the grid look measured, not drawn.
        self._link_w = [
            [(1.0 + 0.06 * (lrng.random() - 0.5), 1.0 + 0.06 * (lrng.random() - 0.5))
             for _ in range(m.nvlink_links)]
            for _ in range(n)
        ]  # fmt: skip
        self._link_up = [[1] * m.nvlink_links for _ in range(n)]
        ld = self._sc.link_down
        if ld is not None and m.nvlink_links:
            self._link_up[ld[0]][ld[1]] = 0
        self._nvl_bytes = [0.0] * n  # NVLink bytes per GPU since the last links message
        # An all-reduce moves at the pace of its slowest GPU: with a link down on one of the
        # training GPUs every GPU's burst runs at (up links / links) of the rate and lasts
        # that much longer (the same bytes per step), so the whole job slows down.
        slowest = m.nvlink_links
        for job in self._sc.jobs:
            if job.kind == "train":
                for g in job.gpus:
                    slowest = min(slowest, sum(self._link_up[g]))
        self._allreduce_f = float(slowest) / m.nvlink_links if m.nvlink_links else 1.0
        self._links_t = None  # type: Optional[float]
        self._links_due = False

    def _links_up(self, g: int) -> int:
        return sum(self._link_up[g])

    def links(self, mono: float) -> List[List[Any]]:
        """Per-link rows when the medium tier is due (the first tick, then every
        ``links_interval`` s of scenario time): the GPU's NVLink bytes since the last message
        spread over its up links, as the per-link counters would show them."""
        m = self._m
        if not m.nvlink_links or not self._links_due:
            return []
        self._links_due = False
        t = self._last_t
        span = t - self._links_t if self._links_t is not None else 0.0
        if span <= 0.0:
            span = self.interval  # the first message: the first tick's own interval
        self._links_t = t
        speed = [m.nvlink_link_bps] * m.nvlink_links
        rows = []  # type: List[List[Any]]
        for g in range(self._sc.n_gpus):
            total = self._nvl_bytes[g] / span
            self._nvl_bytes[g] = 0.0
            if self._lost[g]:
                continue  # NVML answers nothing for a lost GPU: no row, not zeros
            up = self._link_up[g]
            w = self._link_w[g]
            wtx = sum(w[k][0] for k in range(len(up)) if up[k]) or 1.0
            wrx = sum(w[k][1] for k in range(len(up)) if up[k]) or 1.0
            tx = [int(total * w[k][0] / wtx) if up[k] else 0 for k in range(len(up))]
            rx = [int(total * w[k][1] / wrx) if up[k] else 0 for k in range(len(up))]
            rows.append([g, tx, rx, list(up), speed])
        return rows

    # ---- the physics, one tick ----------------------------------------------------------

    def _time(self, mono: float) -> float:
        if self._mono0 is None:
            self._mono0 = mono
        # Rounded so that the same ticks give bit-identical times whatever the start
        # (mono0 + k*interval - mono0 is not exactly k*interval in floating point).
        return round(mono - self._mono0 + self.start_s, 6)

    def _fault_events(self, t: float) -> None:
        ef = self._sc.ecc_fault
        if ef is None:
            return
        g, t_dbe, t_xid = ef
        s = self.time_scale
        # Corrected errors trickle in first: the early warning nobody looks at.
        for k, tk in enumerate((0.3 * t_dbe, 0.6 * t_dbe)):
            if t >= tk * s and ("sbe", k) not in self._fired:
                self._fired.add(("sbe", k))
                self._sbe[g] += 1
                self._emit(protocol.EVENT_ECC, g, None,
                           "corrected ECC error count rose to {}".format(self._sbe[g]))  # fmt: skip
        if t >= t_dbe * s and "dbe" not in self._fired:
            self._fired.add("dbe")
            self._dbe[g] += 1
            self._remap_unc[g] += 1
            self._remap_pending[g] = 1
            self._emit(protocol.EVENT_XID, g, 48, "Xid 48: double-bit ECC error")
            self._emit(protocol.EVENT_ECC, g, None,
                       "uncorrected ECC error count rose to {}".format(self._dbe[g]))  # fmt: skip
            self._emit(protocol.EVENT_REMAP, g, None,
                       "row remapping pending: the GPU needs a reset to apply it")  # fmt: skip
        if t >= t_xid * s and "xid79" not in self._fired:
            self._fired.add("xid79")
            self._lost[g] = True
            self._emit(protocol.EVENT_XID, g, 79, "Xid 79: GPU has fallen off the bus")
            self._emit(protocol.EVENT_GPU_LOST, g, None, "GPU is lost (NVML_ERROR_GPU_IS_LOST)")

    def _emit(self, typ: str, gpu: Optional[int], code: Optional[int], message: str) -> None:
        self._events.append(protocol_schema.event(typ, gpu, code, message))

    def tick(self, mono: float) -> List[List[Any]]:
        t = self._time(mono)
        dt = t - self._last_t if t > self._last_t else self.interval
        t0 = t - dt
        first = self._first
        self._first = False
        self._last_t = t
        self._update_jobs(t)
        self._fault_events(t)
        sc = self._sc
        m = self._m
        n = sc.n_gpus
        rnd = self._rng.random
        scale = self.time_scale

        # Per GPU: summed utilization demand, power intensity, memory, traffic kind.
        util_d = [0.0] * n
        inten = [0.0] * n
        mem = [0] * n
        train = [False] * n
        infer = [False] * n
        for job in self._jobs:
            job.share = {}
            if not self._alive(job, t):
                continue
            sp = job.spec
            for g in sp.gpus:
                util_d[g] += sp.util
                inten[g] += sp.util * sp.intensity
                mem[g] += sp.mem_bytes
                job.share[g] = sp.util
                if sp.kind == "train":
                    train[g] = True
                elif sp.kind == "infer":
                    infer[g] = True

        ar_f = self._allreduce_f
        comm = _on_frac(t0, t, ALLREDUCE_PERIOD_S, min(ALLREDUCE_PERIOD_S, ALLREDUCE_ON_S / ar_f))
        # Not below a few checkpoints' length: a tiny test time scale would otherwise make
        # the windows overlap (a share above 1, negative utilization).
        ckpt_period = max(CHECKPOINT_PERIOD_S * scale, 4.0 * CHECKPOINT_LEN_S)
        ckpt = 0.0
        if t >= ckpt_period:
            ckpt = _on_frac(t0 - ckpt_period, t - ckpt_period, ckpt_period, CHECKPOINT_LEN_S)
        tf = sc.thermal_fault
        decay = 1.0 - math.exp(-dt / TAU_S)
        slow = m.temp_slowdown
        thr_start = slow - 3.0
        nvl_bps = (m.nvlink_links * m.nvlink_link_bps) if m.nvlink_link_bps else 0

        rows = []  # type: List[List[Any]]
        for g in range(n):
            if self._lost[g]:
                row = [None] * (_N_COLS + 1)  # type: List[Any]
                row[0] = g
                row[_N_COLS] = 1
                rows.append(row)
                continue
            temp = self._temp[g]
            demand = util_d[g]
            busy = demand > 0.0
            jit = rnd() - 0.5
            if busy:
                util = min(100.0, demand) - 1.5 * abs(jit) * 2
                if train[g]:
                    # A checkpoint stalls compute while the weights go out over PCIe.
                    util = util * (1.0 - 0.9 * ckpt)
                act = min(1.0, inten[g] / 100.0) * (1.0 - 0.9 * ckpt) * (1.0 - 0.1 * comm)
            else:
                util = 0.0
                act = 0.0

            # Clock: thermal throttling from the current temperature, then the power cap.
            reasons = 0 if busy else 0x1
            f = 1.0
            viol_t = 0.0
            if temp > thr_start:
                f = max(0.55, 1.0 - 0.06 * (temp - thr_start))
                reasons |= 0x20
                viol_t = min(100.0, 50.0 * (temp - thr_start))
                if temp >= slow:
                    reasons |= 0x40 | 0x8
            p_dyn = (m.power_full - m.power_idle) * act
            power = m.power_idle + p_dyn * f * f
            viol_p = 0.0
            limit = self._limit
            if power > limit - 2.0:
                # Hold power at the cap by lowering the clock (dynamic power ~ f^2).
                f = f * math.sqrt(max(0.05, (limit - 2.0 - m.power_idle) / (power - m.power_idle)))
                power = limit - 2.0 - 3.0 * rnd()
                reasons |= 0x4
                viol_p = 100.0 - 4.0 * rnd()
            else:
                power += 6.0 * jit if busy else 1.5 * jit

            # Temperature follows power with first-order inertia.
            r_th = self._r_th[g]
            if tf is not None and g == tf[0] and t >= tf[1] * scale:
                r_th = tf[2]
            target = AMBIENT_C + r_th * power
            # The first tick starts warm: the job has been running for a while already.
            temp += (target - temp) * (1.0 if first else decay)
            # A real card never reads its shutdown temperature: its hardware slowdown halves
            # the clock first (and at shutdown it is off the bus). Without this ceiling the
            # first tick of a run started mid-scenario, settled on unthrottled power, read
            # 110 degC on a card that shuts down at 92.
            temp = min(temp, m.temp_shutdown - SHUTDOWN_MARGIN_C)
            self._temp[g] = temp
            self._energy[g] += power * dt
            self._util[g] = util

            if busy:
                sm = round(m.sm_busy * f / 15.0) * 15
                memclk = m.mem_clock_max
                pstate = 0
            else:
                sm = 210
                memclk = m.mem_clock_idle
                pstate = m.idle_pstate
            # Share of the SM among the jobs on this GPU, for the process list.
            if busy:
                k = util / demand
                for job in self._jobs:
                    if g in job.share:
                        job.share[g] = job.share[g] * k

            # Traffic: data loading in, checkpoints out, all-reduce over NVLink.
            if train[g]:
                rx = 1.2e9 * (1.0 - comm) * (1.0 - ckpt) + 2e8 * jit
                tx = 1.5e8 + 9.0e9 * ckpt
                nvl = nvl_bps * (0.82 * comm * ar_f + 0.02) * (1.0 - ckpt)
            elif infer[g]:
                rx = 4.0e8 + 1e8 * jit
                tx = 1.5e8 + 5e7 * jit
                nvl = 0.0
            else:
                rx = 2.0e3 if not busy else 5.0e6
                tx = 1.0e3 if not busy else 2.0e6
                nvl = 0.0
            low_link = m.geforce and not busy
            hbm = m.temp_mem_max is not None
            temp_mem: Optional[int] = None
            if hbm:
                # The HBM throttles itself at its maximum: it never reads above it.
                temp_mem = min(round(temp + 4.0 + 0.012 * power), int(m.temp_mem_max or 0))
            if m.gpm:
                sm_a = util * 0.82 * (0.4 + 0.6 * act)
                sm_active = round(sm_a, 1)  # type: Optional[float]
                sm_occ = round(sm_a * 0.55, 1)  # type: Optional[float]
                tensor = round(util * 0.5 * (1.0 - comm) * f, 1)  # type: Optional[float]
                dram = round(util * 0.38 * (0.6 + 0.4 * f), 1)  # type: Optional[float]
                # A bf16 training step: matrix products on the tensor cores, the element-wise
                # rest on the FP32 and FP16 pipes, no FP64.
                fp64 = 0.0  # type: Optional[float]
                fp32 = round(util * 0.16 * (0.5 + 0.5 * act), 1)  # type: Optional[float]
                fp16 = round(util * 0.07 * f, 1)  # type: Optional[float]
            else:
                sm_active = sm_occ = tensor = dram = fp64 = fp32 = fp16 = None
            if m.nvlink_links:
                nvl_up = self._links_up(g)  # type: Optional[int]
                # A GPU with a link down cannot go above what its remaining links carry.
                nvl = min(nvl, float(nvl_up or 0) * float(m.nvlink_link_bps or 0))
                nvl_i = round(nvl)  # type: Optional[int]
                self._nvl_bytes[g] += nvl * dt
            else:
                nvl_i = nvl_up = None
            mem_used = mem[g] + (int(mem[g] * 0.004 * (1.0 + math.sin(t / 7.0))) if busy else 0)
            if not busy:
                mem_used = 2 * MIB  # what the driver keeps with no context: near zero
            if m.geforce:
                ecc_s = ecc_d = rp = rf = None  # type: Optional[int]
            else:
                ecc_s = self._sbe[g]
                ecc_d = self._dbe[g]
                rp = self._remap_pending[g]
                rf = 0
            rows.append(
                [
                    g,
                    round(util),
                    round(util * (0.42 if train[g] else 0.6) * (0.6 + 0.4 * f)),
                    sm,
                    memclk,
                    sm,
                    round(temp),
                    temp_mem,
                    round(power, 1),
                    limit,
                    int(self._energy[g]),
                    pstate,
                    reasons,
                    round(viol_p, 1),
                    round(viol_t, 1),
                    min(100, max(30, int(30 + 2 * (temp - 45)))) if m.geforce else None,
                    mem_used,
                    max(0, int(tx)),
                    max(0, int(rx)),
                    1 if low_link else m.pcie_gen,
                    16,
                    0,
                    nvl_i,
                    nvl_i,
                    nvl_up,
                    sm_active,
                    sm_occ,
                    tensor,
                    dram,
                    fp64,
                    fp32,
                    fp16,
                    ecc_s,
                    ecc_d,
                    rp,
                    rf,
                    None,
                    0,
                ]
            )
        lt = self._links_t
        # The medium tier: per-link values on the first tick, then every links_interval s.
        self._links_due = lt is None or t - lt >= self.links_interval - 1e-6
        return rows

    def events(self, mono: float) -> List[Dict[str, Any]]:
        if not self._events:
            return []
        out = self._events
        self._events = []
        return out

    # ---- one-shot commands --------------------------------------------------------------

    def info(self) -> Dict[str, Any]:
        out = self.hello()
        out["backend"] = self.name
        out["scenario"] = self.scenario
        out["gpu_count"] = self._sc.n_gpus
        return out

    def check(self) -> Dict[str, Any]:
        mono = time.monotonic()
        rows = self.tick(mono)  # first: the per-process SM shares come from a tick
        procs = self.procs(mono)
        pos = protocol.ROW_POS
        m = self._m
        gpus = []
        for i, row in enumerate(rows):
            facts = self._gpu_facts(i)
            nom = facts["nominal"]

            def col(name: str, row: List[Any] = row) -> Any:
                return row[pos[name]]

            mine = [p for p in procs if p["gpu"] == i]
            lost = self._lost[i]
            gpus.append(
                {
                    "index": i,
                    "uuid": facts["uuid"],
                    "name": facts["name"],
                    "pci_bus_id": facts["pci_bus_id"],
                    "lost": 1 if lost else 0,
                    "persistence_mode": facts["persistence_mode"],
                    "pstate": col("pstate"),
                    "clock_reasons": col("clock_reasons"),
                    "util_gpu_pct": col("util_gpu_pct"),
                    "power_w": col("power_w"),
                    "power_enforced_w": col("power_limit_w"),
                    "power_default_w": nom["power_default_w"],
                    "power_max_w": nom["power_max_w"],
                    "temp_gpu_c": col("temp_gpu_c"),
                    "temp_mem_c": col("temp_mem_c"),
                    "temp_slowdown_c": nom["temp_slowdown_c"],
                    "temp_shutdown_c": nom["temp_shutdown_c"],
                    "temp_mem_max_c": nom["temp_mem_max_c"],
                    "sm_clock_mhz": col("sm_clock_mhz"),
                    "sm_clock_max_mhz": nom["sm_clock_max_mhz"],
                    "pcie_gen": col("pcie_gen"),
                    "pcie_max_gen": nom["pcie_max_gen"],
                    "pcie_width": col("pcie_width"),
                    "pcie_max_width": nom["pcie_max_width"],
                    "pcie_replays": col("pcie_replays"),
                    "nvlink_links": nom["nvlink_links"],
                    "nvlink_up": col("nvlink_up"),
                    "nvlink_errors": 0 if m.nvlink_links else None,
                    "ecc_mode": None if m.geforce else True,
                    "ecc_sbe_vol": col("ecc_sbe_vol"),
                    "ecc_dbe_vol": col("ecc_dbe_vol"),
                    "ecc_sbe_agg": None if m.geforce else self._sbe[i] + 3 * self._remap_corr[i],
                    "ecc_dbe_agg": None if m.geforce else self._dbe[i] + self._remap_unc[i],
                    "remapped_rows_correctable": None if m.geforce else self._remap_corr[i],
                    "remapped_rows_uncorrectable": None if m.geforce else self._remap_unc[i],
                    "remap_pending": col("remap_pending"),
                    "remap_failed": col("remap_failed"),
                    "retired_pending": col("retired_pending"),
                    "xid_seen": "unknown",
                    "processes": len(mine),
                    "process_list": mine,
                    # The simulated processes are all here (no container in between).
                    "processes_not_here": 0,
                    "mem_not_here_bytes": 0,
                    "minor": None,
                    "device": None,
                    "mem_total_bytes": nom["mem_total_bytes"],
                    "mem_reserved_bytes": nom["mem_reserved_bytes"],
                    "mem_used_bytes": col("mem_used_bytes"),
                    "virtualization_mode": facts["virtualization_mode"],
                    "mig_mode": facts["mig_mode"],
                    "mig_slices": 0,
                    "compute_mode": facts["compute_mode"],
                    "unsupported": facts["unsupported"],
                }
            )
        gpus = [protocol_schema.check_gpu(g) for g in gpus]
        host = self._host()
        return {
            "backend": self.name,
            "host": host,
            "driver_version": host["driver_version"],
            "cuda_version": host["cuda_version"],
            "gpu_count": len(gpus),
            "gpus": gpus,
            "events": self.events(mono),
        }
