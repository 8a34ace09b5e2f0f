"""An H100 split into three MIG slices, as the NVML sampler sends it (slices as GPUs of their
own, their ``mig`` facts in hello): the Overview lists three slice rows right under the card,
each with its own memory, counts slices rather than cards, the process table names the slice
each process runs on, and the header says MIG and pass-through (Qt offscreen)."""

from __future__ import annotations

import time
from typing import Any

from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.wire.messages import parse_object
from gpufleet.ui.offscreen.screenshots import build_window
from gpufleet_sampler import protocol
from PySide6.QtCore import QCoreApplication, Qt
from pytestqt.qtbot import QtBot

GIB = 1 << 30
MIB = 1 << 20
SLICES = (("3g.40gb", 60, 40448, 12 * GIB), ("2g.20gb", 32, 20096, 3 * GIB),
          ("1g.10gb", 16, 9856, 8871 * MIB))  # fmt: skip


def messages(now: float) -> list[Any]:
    gpus: list[dict[str, Any]] = [
        {
            "index": 0,
            "uuid": "GPU-0",
            "name": "NVIDIA H100 80GB HBM3",
            "nominal": {"mem_total_bytes": 80 * GIB, "sm_clock_max_mhz": 1980},
            "mig_mode": 1,
            "virtualization_mode": 1,  # NVML's number: pass-through
        }
    ]
    for k, (name, sms, mib, _used) in enumerate(SLICES):
        gpus.append(
            {
                "index": protocol.mig_index(0, k),
                "uuid": f"MIG-{k}",
                "name": f"NVIDIA H100 80GB HBM3 MIG {name}",
                "nominal": {"mem_total_bytes": mib * MIB},
                "mig": {
                    "parent": 0,
                    "slot": k,
                    "profile": name,
                    "sm_count": sms,
                    "sm_share": round(sms / 132, 4),
                },
            }
        )
    hello = parse_object(
        {
            "kind": "hello",
            "protocol": protocol.PROTOCOL_VERSION,
            "run_id": "mig",
            "backend": "nvml",
            "interval_s": 1.0,
            "columns": protocol.hello_columns(),
            "host": {"hostname": "mig", "driver_version": "550.90.07"},
            "gpus": gpus,
        }
    )
    out: list[Any] = [hello]
    pos = protocol.ROW_POS
    for t in range(30):
        card = [0] + [None] * len(protocol.COLUMN_NAMES)
        card[pos["mem_used_bytes"]] = sum(u for *_, u in SLICES)
        card[pos["temp_gpu_c"]], card[pos["power_w"]], card[pos["lost"]] = 55, 300.0, 0
        rows = [card]
        for k, (*_, used) in enumerate(SLICES):
            r = [protocol.mig_index(0, k)] + [None] * len(protocol.COLUMN_NAMES)
            r[pos["mem_used_bytes"]], r[pos["lost"]] = used, 0
            rows.append(r)
        obj = {"kind": "sample", "seq": t + 1, "t": now - 30 + t, "mono": t, "gpus": rows}
        out.append(parse_object(obj, hello))  # type: ignore[arg-type]
    procs = [
        {"gpu": protocol.mig_index(0, k), "pid": 500 + k, "start_ticks": 1, "user": "me",
         "name": "python", "cmd": f"python train_{k}.py", "mem_bytes": used, "sm_pct": None,
         "type": "C"}
        for k, (*_, used) in enumerate(SLICES)
    ]  # fmt: skip
    out.append(parse_object({"kind": "procs", "seq": 99, "t": now, "procs": procs}))
    return out


def test_three_slices_three_rows_under_their_card(qtbot: QtBot) -> None:
    now = time.time()
    live = LiveBuffers(window_s=3600)
    for m in messages(now):
        live.feed("mig-host", m)
    host = HostConfig(name="mig-host", transport="local")
    w = build_window([host], live, None, (1400, 900), now)
    qtbot.addWidget(w)
    w.select_tab("overview")
    w.update_summaries()
    w.redraw(force=True)
    QCoreApplication.processEvents()
    m, proxy = w.overview.model, w.overview.proxy
    headers = [m.headerData(i, Qt.Orientation.Horizontal) for i in range(m.columnCount())]
    gpu_col, model_col, mem_col = (headers.index(h) for h in ("GPU", "Model", "Memory"))
    shown = [
        tuple(str(proxy.data(proxy.index(r, c))) for c in (gpu_col, model_col, mem_col))
        for r in range(proxy.rowCount())
    ]
    assert [s[0] for s in shown] == ["0", "0·0", "0·1", "0·2"], shown
    assert shown[3][1].endswith("MIG 1g.10gb")
    # Each slice against its own memory.
    assert shown[3][2] == "8.7/10 GiB" and shown[1][2] == "12.0/40 GiB"
    assert shown[0][2] == "23.7/80 GiB"
    assert w.panel.model.cell(0, 1).text == "1× H100 (3 MIG slices)"
    text = w.overview.sentence.text()
    assert "3 GPUs" in text and "3 of them MIG slices" in text, text
    # The header names MIG and pass-through (NVML's number 1).
    w.select_host("mig-host")
    w.update_summaries()
    header = w.host_label.text()
    assert "MIG: 3 slices" in header and "pass-through" in header and "1× NVIDIA H100" in header
    # Processes: each on its slice.
    w.select_tab("memory")
    w.redraw(force=True)
    QCoreApplication.processEvents()
    pm = w.memory.model
    cols = [pm.headerData(i, Qt.Orientation.Horizontal) for i in range(pm.columnCount())]
    g = cols.index("GPU")
    assert sorted(pm.cell(r, g).text for r in range(pm.rowCount())) == ["0·0", "0·1", "0·2"]
    # A card of the slice says which GPU and profile it is.
    texts = [c.label.text() for c in w.panel.cards]
    (card,) = [t for t in texts if "GPU 0 · MIG 1g.10gb" in t]
    assert "90%" in card and "16 SMs (12% of the card)" in card, card
