"""The engine without PyTorch: the CUDA driver library (libcuda, present wherever the driver
is) through ctypes, for the copy bandwidths: pinned host<->device, device<->device (HBM),
peer. Matmul needs cuBLAS kernels, which the driver library does not have: it is reported
as not measured here, with that reason, never guessed.

``GPUFLEET_BENCH_LIBCUDA`` names another library file (an unusual install; the tests'
stand-in). Python 3.8, stdlib only.
"""

import ctypes
import ctypes.util
import functools
import os
import time
from typing import Any, Dict, List, Tuple

from gpufleet_sampler.benchmark import Unmeasured

MIB = 1 << 20
HOST_COPY_BYTES = 256 * MIB
HBM_BYTES = 1024 * MIB
PEER_BYTES = 256 * MIB
LIB_NAMES = ("libcuda.so.1", "libcuda.so")


def _load() -> Any:
    names = (
        [os.environ["GPUFLEET_BENCH_LIBCUDA"]] if os.environ.get("GPUFLEET_BENCH_LIBCUDA") else []
    )
    found = ctypes.util.find_library("cuda")
    names += list(LIB_NAMES) + ([found] if found else [])
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise Unmeasured("no PyTorch and no CUDA driver library (libcuda) found")


class CudaEngine(object):
    name = "cuda"

    def __init__(self, spec: Dict[str, Any]) -> None:
        self.lib = _load()
        self._fraction = float(spec["mem_fraction"])
        self._max = int(spec["mem_max_bytes"])
        self._call("cuInit", 0)
        self._ctx = {}  # type: Dict[int, ctypes.c_void_p]

    def _call(self, fn: str, *args: Any) -> None:
        rc = getattr(self.lib, fn)(*args)
        if rc != 0:
            raise Unmeasured("{} failed with CUDA error {}".format(fn, rc))

    def prepare(self, gpus: List[int], host: Any) -> None:
        for g in gpus:
            dev = ctypes.c_int()
            self._call("cuDeviceGet", ctypes.byref(dev), g)
            ctx = ctypes.c_void_p()
            self._call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
            self._ctx[g] = ctx

    def close(self) -> None:
        for g in list(self._ctx):
            dev = ctypes.c_int()
            if self.lib.cuDeviceGet(ctypes.byref(dev), g) == 0:
                self.lib.cuDevicePrimaryCtxRelease(dev)
        self._ctx.clear()

    def _use(self, g: int) -> None:
        self._call("cuCtxSetCurrent", self._ctx[g])

    def bound(self, g: int) -> int:
        self._use(g)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self._call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        return int(min(free.value * self._fraction, self._max))

    def _alloc(self, g: int, size: int) -> ctypes.c_uint64:
        self._use(g)
        ptr = ctypes.c_uint64()
        self._call("cuMemAlloc_v2", ctypes.byref(ptr), ctypes.c_size_t(size))
        return ptr

    def _repeat(self, seconds: float, step: Any) -> Tuple[float, int]:
        step()  # warm-up: first-touch mapping of the pages
        self._call("cuCtxSynchronize")
        n = 0
        t0 = time.perf_counter()
        end = t0 + seconds
        while True:
            step()
            n += 1
            if time.perf_counter() >= end:
                break
        self._call("cuCtxSynchronize")
        return time.perf_counter() - t0, n

    def matmul(self, g: int, dtype: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        raise Unmeasured("no PyTorch: matmul needs cuBLAS kernels, which the driver library "
                         "alone does not have")  # fmt: skip

    def hbm(self, g: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        size = min(HBM_BYTES, self.bound(g) // 2)
        if size < 512 * MIB:
            raise Unmeasured("a buffer 8x the L2 cache does not fit the memory bound")
        a, b = self._alloc(g, size), self._alloc(g, size)
        try:
            secs, n = self._repeat(
                seconds,
                functools.partial(self._call, "cuMemcpyDtoD_v2", b, a, ctypes.c_size_t(size)),
            )
        finally:
            self.lib.cuMemFree_v2(a)
            self.lib.cuMemFree_v2(b)
        return 2.0 * size * n / secs / 1e9, {"buffer_mib": size // MIB, "engine": "libcuda"}

    def copy_host(self, g: int, way: str, seconds: float) -> Tuple[float, Dict[str, Any]]:
        size = min(HOST_COPY_BYTES, self.bound(g))
        dev = self._alloc(g, size)
        host = ctypes.c_void_p()
        self._call("cuMemAllocHost_v2", ctypes.byref(host), ctypes.c_size_t(size))
        n_bytes = ctypes.c_size_t(size)
        try:
            if way == "h2d":
                step = functools.partial(self._call, "cuMemcpyHtoD_v2", dev, host, n_bytes)
            else:
                step = functools.partial(self._call, "cuMemcpyDtoH_v2", host, dev, n_bytes)
            secs, n = self._repeat(seconds, step)
        finally:
            self.lib.cuMemFreeHost(host)
            self.lib.cuMemFree_v2(dev)
        return size * n / secs / 1e9, {"bytes": size, "pinned": True, "engine": "libcuda"}

    def peer(self, g: int, peer: int, seconds: float) -> Tuple[float, Dict[str, Any]]:
        can = ctypes.c_int()
        d0, d1 = ctypes.c_int(), ctypes.c_int()
        self._call("cuDeviceGet", ctypes.byref(d0), g)
        self._call("cuDeviceGet", ctypes.byref(d1), peer)
        self._call("cuDeviceCanAccessPeer", ctypes.byref(can), d0, d1)
        if not can.value:
            raise Unmeasured("peer access from GPU {} to GPU {} is not supported".format(g, peer))
        size = min(PEER_BYTES, self.bound(g), self.bound(peer))
        src, dst = self._alloc(g, size), self._alloc(peer, size)
        self._use(g)
        rc = self.lib.cuCtxEnablePeerAccess(self._ctx[peer], 0)
        if rc not in (0, 704):  # 704: already enabled
            raise Unmeasured("enabling peer access failed with CUDA error {}".format(rc))
        args = (dst, self._ctx[peer], src, self._ctx[g], ctypes.c_size_t(size))
        try:
            secs, n = self._repeat(seconds, functools.partial(self._call, "cuMemcpyPeer", *args))
        finally:
            self.lib.cuMemFree_v2(src)
            self.lib.cuMemFree_v2(dst)
        return size * n / secs / 1e9, {"peer": peer, "bytes": size, "engine": "libcuda"}
