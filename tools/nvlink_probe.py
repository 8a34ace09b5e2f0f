"""Print, as JSON, what NVML answers about NVLink link by link on this host.

A device-check helper: it tells which per-link calls a driver answers (link count, state,
version, remote PCI id, per-link TX/RX counters through field values with a link scope) so the
nvml backend's per-link path can be checked against a real answer. Stdlib + pynvml only.
"""

import json
import sys
from typing import Any, Dict, List

import pynvml as N

FI_NVLINK_LINK_COUNT = 91
FI_NVLINK_TX_KIB = 138
FI_NVLINK_RX_KIB = 139
FI_NVLINK_SPEED_MBPS = 164
FI_NVLINK_STATE = 165  # not in every header; probed


def _try(fn: Any, *a: Any) -> Any:
    try:
        r = fn(*a)
    except N.NVMLError as e:
        return {"error": type(e).__name__, "code": getattr(e, "value", None)}
    except Exception as e:  # a probe reports anything
        return {"error": repr(e)}
    if hasattr(r, "busId"):
        b = r.busId
        return b.decode() if isinstance(b, bytes) else str(b)
    return r


def _fields(h: Any, ids: List[Any]) -> List[Dict[str, Any]]:
    try:
        vals = N.nvmlDeviceGetFieldValues(h, ids)
    except N.NVMLError as e:
        return [{"error": type(e).__name__}]
    out = []
    for k, want in enumerate(ids):  # no zip(strict=): Python 3.8
        v = vals[k]
        ret = int(v.nvmlReturn)
        val: Any = None
        if ret == 0:
            member = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal"}
            val = getattr(v.value, member.get(int(v.valueType), "ullVal"))
        out.append({"field": want, "ret": ret, "type": int(v.valueType), "value": val})
    return out


def main() -> int:
    N.nvmlInit()
    report: Dict[str, Any] = {"driver": _try(N.nvmlSystemGetDriverVersion), "gpus": []}
    for i in range(N.nvmlDeviceGetCount()):
        h = N.nvmlDeviceGetHandleByIndex(i)
        g: Dict[str, Any] = {"index": i, "name": _try(N.nvmlDeviceGetName, h)}
        g["link_count_field"] = _fields(h, [FI_NVLINK_LINK_COUNT])
        links = []
        for link in range(18):
            links.append(
                {
                    "link": link,
                    "state": _try(N.nvmlDeviceGetNvLinkState, h, link),
                    "version": _try(N.nvmlDeviceGetNvLinkVersion, h, link),
                    "remote_pci": _try(N.nvmlDeviceGetNvLinkRemotePciInfo, h, link),
                    "fields": _fields(
                        h,
                        [
                            (FI_NVLINK_TX_KIB, link),
                            (FI_NVLINK_RX_KIB, link),
                            (FI_NVLINK_SPEED_MBPS, link),
                            (FI_NVLINK_STATE, link),
                        ],
                    ),
                }
            )
        g["links"] = links
        g["totals"] = _fields(h, [(FI_NVLINK_TX_KIB, 0xFFFFFFFF), (FI_NVLINK_RX_KIB, 0xFFFFFFFF)])
        report["gpus"].append(g)
    N.nvmlShutdown()
    json.dump(report, sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
