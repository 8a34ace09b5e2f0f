"""NVML's asynchronous events (Xid, double-bit ECC, page retirement) on a thread of their own.

``nvmlEventSetWait`` blocks in the driver, so it cannot share the sampling thread: one daemon
thread loops on it with a short timeout (``NVMLError_Timeout`` means "nothing happened") and
appends plain dicts to a deque that the sampling thread drains in ``events()``. A deque's
append/popleft are atomic, so no lock is needed between the two threads.

Python 3.8, stdlib + pynvml only.
"""

import contextlib
import ctypes
import threading
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from gpufleet_sampler import protocol, protocol_schema

# Well-known Xid codes, with what they usually mean for someone renting the GPU
# (NVIDIA's "Xid Errors" table, abridged). Unknown codes still produce an event.
XID_TEXT: Dict[int, str] = {
    13: "graphics engine exception (usually an application error)",
    31: "GPU memory page fault (usually an application bug)",
    32: "invalid or corrupted push buffer stream",
    38: "driver firmware error",
    43: "GPU stopped processing (the faulting application was stopped)",
    45: "preemptive cleanup after previous errors (a process was killed)",
    48: "double-bit ECC error",
    61: "internal micro-controller breakpoint",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recorded",
    64: "ECC page retirement or row remapping failed",
    68: "video processor exception",
    69: "graphics engine class error",
    74: "NVLink error",
    79: "GPU has fallen off the bus: the GPU needs a reset or the host a reboot",
    92: "high single-bit ECC error rate",
    94: "contained ECC error (the affected application was stopped)",
    95: "uncontained ECC error: the GPU needs a reset",
    119: "GSP RPC timeout",
    120: "GSP error",
    121: "C2C link error",
    140: "unrecovered ECC error",
}


def xid_message(gpu: int, code: int) -> str:
    """One sentence for an Xid event."""
    text = XID_TEXT.get(code)
    if text:
        return "Xid {} on GPU {}: {}".format(code, gpu, text)
    return "Xid {} on GPU {}".format(code, gpu)


def handle_address(handle: Any) -> Optional[int]:
    """The address a device handle points to: the identity of a GPU across handle objects
    (``c_nvmlEventData_t.device`` is a fresh pointer object equal in value to the handle)."""
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


class EventThread(object):
    """Registers the supported Xid/ECC event types of each GPU and waits for them."""

    def __init__(
        self,
        nvml: Any,
        handles: List[Tuple[int, Any]],
        sink: Deque[Dict[str, Any]],
        on_lost: Callable[[int], None],
        wait_ms: int = 500,
    ) -> None:
        self._n = nvml
        self._sink = sink
        self._on_lost = on_lost
        self._wait_ms = wait_ms
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._set: Any = None
        self._by_addr: Dict[int, int] = {}
        # index -> registered mask, or the reason registration failed
        self.registered: Dict[int, int] = {}
        self.reasons: Dict[int, str] = {}
        wanted = 0
        for name in (
            "nvmlEventTypeXidCriticalError",
            "nvmlEventTypeDoubleBitEccError",
            "nvmlEventTypeDramRetirementEvent",
            "nvmlEventTypeDramRetirementFailure",
        ):
            wanted |= int(getattr(nvml, name, 0))
        self._wanted = wanted
        self._handles = handles

    def start(self) -> None:
        """Create the event set and register every GPU; start the thread if any took."""
        n = self._n
        try:
            self._set = n.nvmlEventSetCreate()
        except (n.NVMLError, AttributeError) as e:
            for index, _ in self._handles:
                self.reasons[index] = "nvmlEventSetCreate: {}".format(_short(n, e))
            return
        for index, h in self._handles:
            try:
                supported = int(n.nvmlDeviceGetSupportedEventTypes(h))
                mask = supported & self._wanted
                if not mask:
                    self.reasons[index] = "NotSupported: nvmlDeviceGetSupportedEventTypes"
                    continue
                n.nvmlDeviceRegisterEvents(h, mask, self._set)
            except (n.NVMLError, AttributeError) as e:
                self.reasons[index] = "{}: nvmlDeviceRegisterEvents".format(_short(n, e))
                continue
            self.registered[index] = mask
            addr = handle_address(h)
            if addr is not None:
                self._by_addr[addr] = index
        if not self.registered:
            self._free()
            return
        self._thread = threading.Thread(target=self._run, name="nvml-events", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = self._n
        timeout_cls = n.NVMLError_Timeout
        lost_cls = n.NVMLError_GpuIsLost
        while not self._stop.is_set():
            try:
                data = n.nvmlEventSetWait(self._set, self._wait_ms)
            except timeout_cls:
                continue
            except lost_cls:
                # The wait does not say which GPU; the sampling thread finds out on its next
                # call. Back off so a lost GPU does not turn this loop into a busy one.
                self._stop.wait(1.0)
                continue
            except n.NVMLError:
                self._stop.wait(1.0)
                continue
            self._emit(data)

    def _emit(self, data: Any) -> None:
        n = self._n
        addr = handle_address(data.device)
        gpu = self._by_addr.get(addr) if addr is not None else None
        etype = int(data.eventType)
        code = int(data.eventData)
        idx = -1 if gpu is None else gpu
        if etype & int(getattr(n, "nvmlEventTypeXidCriticalError", 0)):
            ev = protocol_schema.event(protocol.EVENT_XID, gpu, code, xid_message(idx, code))
            if code == 79:
                self._on_lost(idx)
        elif etype & int(getattr(n, "nvmlEventTypeDoubleBitEccError", 0)):
            ev = protocol_schema.event(
                protocol.EVENT_ECC,
                gpu,
                code,
                "double-bit (uncorrectable) ECC error on GPU {}".format(idx),
            )
        elif etype & int(getattr(n, "nvmlEventTypeDramRetirementFailure", 0)):
            ev = protocol_schema.event(
                protocol.EVENT_RETIRED,
                gpu,
                code,
                "page retirement / row remapping failed on GPU {}".format(idx),
            )
        else:
            ev = protocol_schema.event(
                protocol.EVENT_RETIRED,
                gpu,
                code,
                "memory page retirement event on GPU {}".format(idx),
            )
        self._sink.append(ev)

    def stop(self) -> None:
        self._stop.set()
        t = self._thread
        if t is not None:
            t.join(timeout=max(2.0, 4 * self._wait_ms / 1000.0))
            self._thread = None
        self._free()

    def _free(self) -> None:
        if self._set is not None:
            with contextlib.suppress(Exception):
                self._n.nvmlEventSetFree(self._set)
            self._set = None


def _short(n: Any, e: BaseException) -> str:
    """``NotSupported`` for ``NVMLError_NotSupported``; the code for an unmapped one."""
    name = type(e).__name__
    if name.startswith("NVMLError_"):
        return name[len("NVMLError_") :]
    if name == "NVMLLibraryMismatchError":
        return "FunctionNotFound"
    if name == "AttributeError":
        return "FunctionNotFound"
    value = getattr(e, "value", None)
    return "NVMLError {}".format(value) if value is not None else name
