"""The measurement plan, run in the worker process the supervisor started.

Order: inventory and a refusal of every GPU another process uses (unless forced); then per
GPU, all GPUs at once (one thread each), dense matmul in BF16, FP16 and TF32 and an HBM
copy; then, one GPU at a time (they share the host's memory and PCIe switches), pinned
host-to-device and device-to-host copies; then peer copies around a ring of the GPUs.
Each step gets a fixed slice of ``--seconds``, so the run's length is known before it starts.
Telemetry is sampled throughout and summarised per GPU at the end.

Python 3.8, stdlib only at import; the engine imports torch (or loads libcuda) when chosen.
"""

import functools
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Tuple

from gpufleet_sampler.bench_protocol import (
    BENCH_VERSION,
    KIND_END,
    KIND_PROGRESS,
    KIND_REFUSED,
    KIND_RESULT,
    KIND_SKIP,
    KIND_START,
    KIND_TELEMETRY,
    METRICS,
)
from gpufleet_sampler.benchmark import Unmeasured

# Shares of --seconds: the parallel per-GPU phase, the serial copies, the peer ring.
PARALLEL_SHARE = 0.6
COPY_SHARE = 0.25
PEER_SHARE = 0.15
PARALLEL_STEPS = ("matmul_bf16_tflops", "matmul_fp16_tflops", "matmul_tf32_tflops", "hbm_gbps")


class Emitter(object):
    """One JSON object per line on stdout, flushed at once (the laptop shows progress)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __call__(self, obj: Dict[str, Any]) -> None:
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False)
        with self._lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


def _open_host(spec: Dict[str, Any]) -> Any:
    if spec.get("backend") == "sim":
        from gpufleet_sampler.benchmark import simcards

        return simcards.SimHost(
            spec.get("scenario") or "healthy-8xa100", int(spec.get("seed") or 0)
        )
    from gpufleet_sampler.benchmark import telemetry

    return telemetry.NvmlHost()


def _open_engine(spec: Dict[str, Any], host: Any) -> Tuple[Any, List[str]]:
    """The engine that measures, and why the better ones were not available."""
    if hasattr(host, "engine"):
        return host.engine(), []
    from gpufleet_sampler.benchmark import engines

    return engines.choose(spec.get("engine") or "auto", spec)


def _split_refused(host: Any, wanted: List[int], force: bool, emit: Emitter) -> List[int]:
    run = []
    for g in wanted:
        others = host.other_processes(g)
        if others and not force:
            names = ", ".join(
                (p.get("name") or "?") + (" (pid {})".format(p["pid"]) if p.get("pid") else "")
                for p in others[:4]
            )
            emit({"kind": KIND_REFUSED, "gpu": g, "reason": "busy", "procs": others[:8],
                  "message": "in use by another process: {}".format(names)})  # fmt: skip
            continue
        run.append(g)
    return run


def _timed(
    emit: Emitter, g: int, metric: str, fn: Callable[[], Tuple[float, Dict[str, Any]]]
) -> None:
    emit({"kind": KIND_PROGRESS, "gpu": g, "step": metric, "state": "running"})
    try:
        value, detail = fn()
    except Unmeasured as e:
        emit({"kind": KIND_SKIP, "gpu": g, "metric": metric, "reason": str(e)})
        return
    except Exception as e:  # a driver error on one step must not lose the others
        emit({"kind": KIND_SKIP, "gpu": g, "metric": metric,
              "reason": "failed: {}: {}".format(type(e).__name__, e)[:300]})  # fmt: skip
        return
    emit({"kind": KIND_RESULT, "gpu": g, "metric": metric, "value": round(value, 2),
          "detail": detail})  # fmt: skip


def _parallel_phase(engine: Any, gpus: List[int], slice_s: float, emit: Emitter) -> None:
    def one(g: int) -> None:
        steps = {
            "matmul_bf16_tflops": lambda: engine.matmul(g, "bf16", slice_s),
            "matmul_fp16_tflops": lambda: engine.matmul(g, "fp16", slice_s),
            "matmul_tf32_tflops": lambda: engine.matmul(g, "tf32", slice_s),
            "hbm_gbps": lambda: engine.hbm(g, slice_s),
        }
        for metric in PARALLEL_STEPS:
            _timed(emit, g, metric, steps[metric])

    threads = [threading.Thread(target=one, args=(g,), daemon=True) for g in gpus]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _serial_phase(
    engine: Any, gpus: List[int], copy_s: float, peer_s: float, emit: Emitter
) -> None:
    if gpus:
        per = copy_s / (2 * len(gpus))
        for g in gpus:
            _timed(emit, g, "h2d_gbps", functools.partial(engine.copy_host, g, "h2d", per))
            _timed(emit, g, "d2h_gbps", functools.partial(engine.copy_host, g, "d2h", per))
    if len(gpus) < 2:
        for g in gpus:
            emit({"kind": KIND_SKIP, "gpu": g, "metric": "p2p_gbps",
                  "reason": "one GPU measured: no peer to copy to"})  # fmt: skip
        return
    per = peer_s / len(gpus)
    for i, g in enumerate(gpus):
        peer = gpus[(i + 1) % len(gpus)]
        _timed(emit, g, "p2p_gbps", functools.partial(engine.peer, g, peer, per))


def main(spec_json: str) -> int:
    spec = json.loads(spec_json)
    emit = Emitter()
    t0 = time.monotonic()
    try:
        host = _open_host(spec)
    except Exception as e:
        emit({"kind": KIND_END, "status": "error", "message": "cannot read the GPUs: {}".format(e)})
        return 1
    inventory = host.inventory()
    every = [d["index"] for d in inventory]
    wanted = spec.get("gpus") or every
    missing = [g for g in wanted if g not in every]
    if missing:
        emit({"kind": KIND_END, "status": "error",
              "message": "no GPU {} here (GPUs: {})".format(missing, every)})  # fmt: skip
        return 2
    gpus = _split_refused(host, wanted, bool(spec.get("force")), emit)
    engine, why_not = _open_engine(spec, host) if gpus else (None, [])
    seconds = float(spec["seconds"])
    listed = [d for d in inventory if d["index"] in wanted]
    emit({"kind": KIND_START, "v": BENCH_VERSION, "engine": getattr(engine, "name", "none"),
          "engine_notes": why_not, "seconds": seconds, "gpus": listed,
          "measured_gpus": gpus, "pid": os.getpid(), "mem_fraction": spec["mem_fraction"],
          "mem_max_bytes": spec["mem_max_bytes"], "metrics": list(METRICS)})  # fmt: skip
    tele = host.telemetry(gpus)
    tele.start()
    try:
        if engine is not None:
            engine.prepare(gpus, host)
            _parallel_phase(engine, gpus, seconds * PARALLEL_SHARE / len(PARALLEL_STEPS), emit)
            _serial_phase(engine, gpus, seconds * COPY_SHARE, seconds * PEER_SHARE, emit)
        else:
            for g in gpus:
                for metric in METRICS:
                    emit({"kind": KIND_SKIP, "gpu": g, "metric": metric,
                          "reason": "; ".join(why_not) or "nothing here can measure"})  # fmt: skip
    finally:
        tele.stop()
        if engine is not None:
            engine.close()
    for g in gpus:
        summary = tele.summary(g)
        summary.update(kind=KIND_TELEMETRY, gpu=g)
        if engine is not None and hasattr(engine, "memory"):
            summary.update(engine.memory(g))
        emit(summary)
    emit({"kind": KIND_END, "status": "done", "elapsed_s": round(time.monotonic() - t0, 2)})
    return 0
