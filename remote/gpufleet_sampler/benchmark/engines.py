"""The PyTorch engine, and the choice of engine: PyTorch, else the CUDA driver through ctypes.

Matmul follows mamf-finder's method (a few large shapes, warm-up first, CUDA events around a
timed loop, 2·M·N·K per product); HBM is a device-to-device copy of a buffer at least eight
times the L2 cache (a smaller one is served from L2: a 4090's 96 MB reads at 2.5-3.9 TB/s),
counted as read + write; host copies use pinned memory; peer copies go over NVLink or PCIe,
whichever the driver routes. torch is imported here only, inside the benchmark's worker.

Python 3.8, stdlib only at import.
"""

import functools
import time
from typing import Any, Dict, List, Tuple

from gpufleet_sampler.benchmark import Unmeasured

MIB = 1 << 20
# mamf-finder's best shapes lie between 1k and 16k: two large ones, both multiples of 256.
SHAPES = ((8192, 8192, 8192), (4096, 16384, 8192))
WARMUP = 3
BATCH_S = 0.2
HOST_COPY_BYTES = 256 * MIB
PEER_COPY_BYTES = 256 * MIB
HBM_MIN_L2_MULTIPLE = 8
HBM_MAX_BYTES = 2048 * MIB
L2_UNKNOWN_BYTES = 128 * MIB  # when the device does not say: more than any card has today


def choose(kind: str, spec: Dict[str, Any]) -> Tuple[Any, List[str]]:
    """The engine (or None) and the reasons the ones before it were not used."""
    notes = []  # type: List[str]
    if kind in ("auto", "torch"):
        try:
            return TorchEngine(spec), notes
        except Unmeasured as e:
            notes.append(str(e))
            if kind == "torch":
                return None, notes
    if kind in ("auto", "cuda"):
        from gpufleet_sampler.benchmark import cudadrv

        try:
            return cudadrv.CudaEngine(spec), notes
        except Unmeasured as e:
            notes.append(str(e))
    return None, notes


class TorchEngine(object):
    name = "torch"

    def __init__(self, spec: Dict[str, Any]) -> None:
        try:
            import torch
        except ImportError:
            raise Unmeasured("no PyTorch on this instance") from None
        except Exception as e:  # a broken install (wrong CUDA build) says so
            raise Unmeasured("PyTorch failed to import: {}".format(e)) from None
        if not torch.cuda.is_available():
            raise Unmeasured("PyTorch sees no CUDA device (a CPU-only build?)")
        self.torch = torch
        self.version = str(getattr(torch, "__version__", "?"))
        self._fraction = float(spec["mem_fraction"])
        self._max = int(spec["mem_max_bytes"])

    def prepare(self, gpus: List[int], host: Any) -> None:
        self._gpus = gpus

    def close(self) -> None:
        self.torch.cuda.empty_cache()

    def memory(self, g: int) -> Dict[str, int]:
        """The most this run held on GPU ``g``, and its bound."""
        return {"mem_peak_bytes": int(self.torch.cuda.max_memory_allocated(g)),
                "mem_bound_bytes": self._max}  # fmt: skip

    def bound(self, g: int) -> int:
        """The bytes this run may allocate on GPU ``g``: a share of what is free, capped."""
        free, _total = self.torch.cuda.mem_get_info(g)
        return int(min(free * self._fraction, self._max))

    def _time_loop(self, g: int, seconds: float, step: Any) -> Tuple[float, int]:
        """(seconds of GPU time, iterations) of ``step`` repeated for about ``seconds``."""
        torch = self.torch
        with torch.cuda.device(g):  # events record on the current device's stream
            return self._time_loop_here(g, seconds, step)

    def _time_loop_here(self, g: int, seconds: float, step: Any) -> Tuple[float, int]:
        torch = self.torch
        for _ in range(WARMUP):
            step()
        torch.cuda.synchronize(g)
        # Batches of about BATCH_S between synchronisations: each one drains the queue and
        # leaves the GPU idle for a launch, so they must be rare against the work timed.
        t0 = time.monotonic()
        step()
        torch.cuda.synchronize(g)
        batch = max(1, int(BATCH_S / max(time.monotonic() - t0, 1e-6)))
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        n = 0
        wall_end = time.monotonic() + seconds
        start.record()
        while True:
            for _ in range(batch):
                step()
            n += batch
            torch.cuda.synchronize(g)
            if time.monotonic() >= wall_end:
                break
        end.record()
        torch.cuda.synchronize(g)
        return start.elapsed_time(end) / 1000.0, n

    def matmul(self, g: int, dtype: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        torch = self.torch
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}[dtype]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        size = 2 if dtype != "tf32" else 4
        best = 0.0
        best_shape = None
        bound = self.bound(g)
        for m, n, k in SHAPES:
            need = (m * k + k * n + m * n) * size
            if need > bound:
                continue
            secs, iters = self._matmul_shape(g, dt, (m, n, k), seconds / len(SHAPES))
            tflops = 2.0 * m * n * k * iters / secs / 1e12
            if tflops > best:
                best, best_shape = tflops, "{}x{}x{}".format(m, n, k)
        if best_shape is None:
            raise Unmeasured(
                "not enough free GPU memory within the bound ({} MiB)".format(bound // MIB)
            )
        return best, {"shape": best_shape, "engine": "torch " + self.version}

    def _matmul_shape(
        self, g: int, dt: Any, shape: Tuple[int, int, int], seconds: float
    ) -> Tuple[float, int]:
        """One shape's timed loop; its three matrices are freed when it returns."""
        torch = self.torch
        m, n, k = shape
        dev = torch.device("cuda", g)
        a = torch.randn(m, k, dtype=dt, device=dev)
        b = torch.randn(k, n, dtype=dt, device=dev)
        c = torch.empty(m, n, dtype=dt, device=dev)
        return self._time_loop(g, seconds, functools.partial(torch.matmul, a, b, out=c))

    def hbm(self, g: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        torch = self.torch
        props = torch.cuda.get_device_properties(g)
        l2 = int(getattr(props, "L2_cache_size", 0) or L2_UNKNOWN_BYTES)
        want = max(HBM_MIN_L2_MULTIPLE * l2, 512 * MIB)
        size = min(self.bound(g) // 2, HBM_MAX_BYTES)
        if size < want:
            raise Unmeasured(
                "a buffer 8x the L2 cache ({} MiB) does not fit the memory bound".format(
                    want // MIB
                )
            )
        dev = torch.device("cuda", g)
        src = torch.empty(size, dtype=torch.uint8, device=dev)
        dst = torch.empty(size, dtype=torch.uint8, device=dev)
        secs, iters = self._time_loop(g, seconds, functools.partial(dst.copy_, src))
        return 2.0 * size * iters / secs / 1e9, {"buffer_mib": size // MIB, "l2_mib": l2 // MIB}

    def copy_host(self, g: int, way: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        torch = self.torch
        size = min(HOST_COPY_BYTES, self.bound(g))
        host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(size, dtype=torch.uint8, device=torch.device("cuda", g))
        dst, src = (dev, host) if way == "h2d" else (host, dev)
        step = functools.partial(dst.copy_, src, non_blocking=True)
        secs, iters = self._time_loop(g, seconds, step)
        return size * iters / secs / 1e9, {"bytes": size, "pinned": True}

    def peer(self, g: int, peer: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        torch = self.torch
        if not torch.cuda.can_device_access_peer(g, peer):
            raise Unmeasured("peer access from GPU {} to GPU {} is not supported".format(g, peer))
        size = min(PEER_COPY_BYTES, self.bound(g), self.bound(peer))
        src = torch.empty(size, dtype=torch.uint8, device=torch.device("cuda", g))
        dst = torch.empty(size, dtype=torch.uint8, device=torch.device("cuda", peer))
        step = functools.partial(dst.copy_, src, non_blocking=True)
        secs, iters = self._time_loop(g, seconds, step)
        return size * iters / secs / 1e9, {"peer": peer, "bytes": size}
