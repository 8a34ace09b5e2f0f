"""A stand-in for PyTorch's CUDA surface that the arrival benchmark uses, with the timings of
a real card: each GPU has a device clock that every operation advances by what it costs on
the card described (TFLOPS per dtype, memory, PCIe and peer GB/s); ``synchronize`` sleeps
until the wall clock reaches it and CUDA events read it, so a run takes the time a real one
does and measures the figures the profile gives. Allocations are counted against the card's
memory (``OutOfMemoryError`` past it) and their peak is kept, as the caching allocator does.

Enabled by ``GPUFLEET_FAKE_TORCH=<profile.json>`` with ``tests/fakes`` first on the path;
without it ``import torch`` fails as on an instance without PyTorch. Profile:
``{"gpus": [{"name", "total_memory", "l2", "bf16", "fp16", "tf32", "hbm", "h2d", "d2h",
"p2p", "peer"}]}`` (TFLOPS, GB/s, bytes; ``peer``: peer access supported).
"""

import json
import os
import threading
import time
from typing import Any, Dict, List, Optional

_PATH = os.environ.get("GPUFLEET_FAKE_TORCH")
if not _PATH:
    raise ImportError("No module named 'torch'")

with open(_PATH, encoding="utf-8") as _f:
    _PROFILE = json.load(_f)

__version__ = "2.5.1+fake"


class dtype:
    def __init__(self, name: str, size: int) -> None:
        self.name, self.itemsize = name, size


bfloat16 = dtype("bf16", 2)
float16 = dtype("fp16", 2)
float32 = dtype("fp32", 4)
uint8 = dtype("uint8", 1)


class device:
    def __init__(self, kind: str, index: Optional[int] = None) -> None:
        self.type, self.index = kind, index


class _Card:
    def __init__(self, spec: Dict[str, Any]) -> None:
        self.spec = spec
        self.t = 0.0  # device time, on the wall clock's scale (time.monotonic)
        self.used = 0
        self.peak = 0
        self.lock = threading.Lock()

    def run(self, seconds: float) -> None:
        with self.lock:
            self.t = max(self.t, time.monotonic()) + seconds


_CARDS = [_Card(g) for g in _PROFILE["gpus"]]
_local = threading.local()


class OutOfMemoryError(RuntimeError):
    pass


class Tensor:
    def __init__(self, n: int, dt: dtype, dev: Optional[device], pinned: bool = False) -> None:
        self.nbytes = n * dt.itemsize
        self.dtype = dt
        self.card = _CARDS[dev.index or 0] if dev is not None and dev.type == "cuda" else None
        self.pinned = pinned
        if self.card is not None:
            with self.card.lock:
                if self.card.used + self.nbytes > int(self.card.spec["total_memory"]):
                    raise OutOfMemoryError("CUDA out of memory")
                self.card.used += self.nbytes
                self.card.peak = max(self.card.peak, self.card.used)

    def __del__(self) -> None:
        if self.card is not None:
            with self.card.lock:
                self.card.used -= self.nbytes

    def copy_(self, src: "Tensor", non_blocking: bool = False) -> "Tensor":
        if self.card is not None and src.card is self.card:
            self.card.run(2.0 * self.nbytes / (self.card.spec["hbm"] * 1e9))
        elif self.card is not None and src.card is None:
            rate = self.card.spec["h2d"] * (1.0 if src.pinned else 0.5)
            self.card.run(self.nbytes / (rate * 1e9))
        elif self.card is None and src.card is not None:
            rate = src.card.spec["d2h"] * (1.0 if self.pinned else 0.5)
            src.card.run(self.nbytes / (rate * 1e9))
        elif self.card is not None and src.card is not None:
            src.card.run(self.nbytes / (src.card.spec["p2p"] * 1e9))
        return self


def _count(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def empty(
    *shape: Any, dtype: dtype = float32, device: Optional[device] = None, pin_memory: bool = False
) -> Tensor:
    t = Tensor(_count(shape), dtype, device, pin_memory)
    t.shape = tuple(shape)
    return t


randn = empty


def matmul(a: Tensor, b: Tensor, out: Optional[Tensor] = None) -> Tensor:
    m, k = a.shape
    n = b.shape[1]
    spec = a.card.spec
    rate = {"bf16": spec["bf16"], "fp16": spec["fp16"]}.get(a.dtype.name)
    if rate is None:
        rate = spec["tf32"] if backends.cuda.matmul.allow_tf32 else spec["tf32"] / 8.0
    a.card.run(2.0 * m * n * k / (rate * 1e12))
    return out if out is not None else empty(m, n, dtype=a.dtype, device=device("cuda", 0))


class _Flag:
    allow_tf32 = False


class _CudaBackend:
    matmul = _Flag()


class backends:
    cuda = _CudaBackend()


class _Props:
    def __init__(self, spec: Dict[str, Any]) -> None:
        self.name = spec["name"]
        self.total_memory = int(spec["total_memory"])
        self.L2_cache_size = int(spec.get("l2", 40 << 20))


class _DeviceCtx:
    def __init__(self, index: int) -> None:
        self.index = index

    def __enter__(self) -> None:
        self.saved = getattr(_local, "device", 0)
        _local.device = self.index

    def __exit__(self, *exc: Any) -> None:
        _local.device = self.saved


class _Event:
    def __init__(self, enable_timing: bool = False) -> None:
        self.t = 0.0

    def record(self) -> None:
        card = _CARDS[getattr(_local, "device", 0)]
        with card.lock:
            self.t = max(card.t, time.monotonic())

    def elapsed_time(self, end: "_Event") -> float:
        return (end.t - self.t) * 1000.0


class cuda:
    OutOfMemoryError = OutOfMemoryError
    Event = _Event
    device = _DeviceCtx

    @staticmethod
    def is_available() -> bool:
        return bool(_CARDS)

    @staticmethod
    def device_count() -> int:
        return len(_CARDS)

    @staticmethod
    def get_device_properties(i: int) -> _Props:
        return _Props(_CARDS[i].spec)

    @staticmethod
    def mem_get_info(i: int) -> List[int]:
        c = _CARDS[i]
        total = int(c.spec["total_memory"])
        return [total - c.used - int(c.spec.get("others_bytes", 0)), total]

    @staticmethod
    def synchronize(i: Optional[int] = None) -> None:
        c = _CARDS[getattr(_local, "device", 0) if i is None else i]
        wait = c.t - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    @staticmethod
    def can_device_access_peer(a: int, b: int) -> bool:
        return bool(_CARDS[a].spec.get("peer", True) and _CARDS[b].spec.get("peer", True))

    @staticmethod
    def max_memory_allocated(i: int) -> int:
        return _CARDS[i].peak

    @staticmethod
    def empty_cache() -> None:
        pass
