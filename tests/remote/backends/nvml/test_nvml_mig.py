"""MIG slices through the fake pynvml's MIG device handles: an H100 split into three slices
(3g.40gb, 2g.20gb, 1g.10gb) becomes three GPUs of their own on the wire, each with its own
memory, SM share and processes; the laptop shows them as three rows under their parent and
raises the slice's memory alert while the card as a whole is at 30 %."""

from __future__ import annotations

import os
from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.text.catalogue import alert_sentence
from gpufleet.core.wire.messages import Hello, Procs, Sample, parse_object
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.support.mig_profile import GIB, MIB, SLICES, mig_profile
from tests.support.nvml_fake import fake_nvml

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")

POS = protocol.ROW_POS


def sampler_messages(n: int = 40) -> tuple[dict[str, Any], list[list[Any]], list[Any]]:
    with fake_nvml(mig_profile()) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            rows = []
            for t in range(n):
                fake._fake.set_time(float(t))
                rows.append(b.tick(float(t)))
            procs = b.procs(float(n))
        finally:
            b.close()
    return hello, rows, procs


def test_three_slices_are_three_gpus_with_their_own_memory_sms_and_processes() -> None:
    hello, rows, procs = sampler_messages(3)
    by_index = {g["index"]: g for g in hello["gpus"]}
    slices = [protocol.mig_index(0, k) for k in range(3)]
    assert slices == [100, 101, 102]
    assert set(by_index) == {*range(8), *slices}
    for k, idx in enumerate(slices):
        g = by_index[idx]
        name, sms, mib, _used = SLICES[k]
        assert g["name"].endswith(f"MIG {name}") and g["uuid"].startswith("MIG-")
        assert g["nominal"]["mem_total_bytes"] == mib * MIB
        assert g["mig"]["parent"] == 0 and g["mig"]["slot"] == k
        assert g["mig"]["profile"] == name and g["mig"]["sm_count"] == sms
        assert g["mig"]["sm_share"] == round(sms / 132, 4)
        assert "GPU 0's" in g["unsupported"]["sm_clock_mhz"]
        assert "mem_used_bytes" not in g["unsupported"]
    row = {r[0]: r for r in rows[-1]}
    assert row[102][POS["mem_used_bytes"]] == SLICES[2][3]
    assert row[102][POS["sm_clock_mhz"]] is None and row[102][POS["lost"]] == 0
    assert row[0][POS["util_gpu_pct"]] is None  # not on MIG
    # Each slice's process under the slice; this test's own process is resolved from /proc.
    mine = {p["gpu"]: p for p in procs if p["gpu"] >= 100}
    assert set(mine) == set(slices)
    assert mine[102]["pid"] == os.getpid() and mine[102]["start_ticks"] is not None
    assert mine[100]["mem_bytes"] == SLICES[0][3] - 300 * MIB
    assert not [p for p in procs if p["gpu"] == 0]


def test_laptop_sees_three_rows_and_the_slice_memory_alert_at_card_30_pct() -> None:
    hello_obj, rows, procs = sampler_messages(40)
    hello = parse_object(
        {
            "kind": "hello",
            "protocol": protocol.PROTOCOL_VERSION,
            "run_id": "mig",
            "backend": "nvml",
            "interval_s": 1.0,
            "columns": protocol.hello_columns(),
            **hello_obj,
        }
    )
    assert isinstance(hello, Hello)
    msgs: list[Any] = [hello]
    for t, r in enumerate(rows):
        msgs.append(
            parse_object(
                {"kind": "sample", "seq": t + 1, "t": 1.7e9 + t, "mono": float(t), "gpus": r},
                hello,
            )
        )
    msgs.append(parse_object({"kind": "procs", "seq": 99, "t": 1.7e9 + 40, "procs": procs}))
    assert isinstance(msgs[-1], Procs) and isinstance(msgs[1], Sample)
    # The card as a whole: 30 % of its memory.
    card = msgs[-2].value(0, "mem_used_bytes") / (80 * GIB)
    assert 0.28 < card < 0.32
    live = LiveBuffers(window_s=600)
    for m in msgs:
        live.feed("mig-host", m)
    assert [g for g in live.gpus("mig-host") if g >= 100] == [100, 101, 102]
    host = HostConfig(name="mig-host", transport="local")
    engine = RuleEngine(load_rules(), [host])
    alerts = [a for m in msgs for a in engine.feed("mig-host", m)]
    fired = {(a.rule_id, a.gpu) for a in alerts if a.state == "firing"}
    assert ("slice_mem_nearly_full", 102) in fired, fired
    assert not [k for k in fired if k[0] == "slice_mem_nearly_full" and k[1] != 102]
    (a,) = [a for a in alerts if a.rule_id == "slice_mem_nearly_full" and a.state == "firing"]
    assert 0.89 < a.evidence["values"]["used_frac"] < 0.91
    text = alert_sentence(a)
    assert "MIG slice 2 of GPU 0" in text and "The card as a whole is at 30 %" in text, text
