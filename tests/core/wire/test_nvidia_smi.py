"""nvidia-smi's documented outputs parsed into the sampler's messages: the H200's ``-q -x``
(written from docs/device/h200-nvidia-smi-q.txt in the nvsmi DTD's element names), query
lines with ``[N/A]`` and ``[Not Supported]`` cells, an older driver that refuses new field
names, compute-apps lines; and the whole stream through the local transport with a stand-in
``nvidia-smi`` (sh + awk) that plays the fixtures back."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.link import sampler_argv as samplercmd
from gpufleet.core.link.nvidia_smi_link import SMI_PREFIX, CollectorTransport, with_collector
from gpufleet.core.link.transport import LocalTransport
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check
from gpufleet.core.wire import nvidia_smi as smi
from gpufleet.core.wire.messages import Hello, Procs, Sample, StreamDecoder, parse_object
from gpufleet_sampler import protocol

from tests.support.paths import FIXTURES
from tests.support.smi_standin import fake_smi, local_smi

FIX = FIXTURES / "nvidia-smi"
GIB = 1 << 30


def test_h200_inventory_from_q_x() -> None:
    inv = smi.parse_inventory((FIX / "h200-q.xml").read_bytes())
    assert inv.driver_version == "580.159.04" and inv.cuda_version == "13.0"
    (g,) = inv.gpus
    assert g.name == "NVIDIA H200" and g.uuid == "GPU-3c31fff2-2f58-f29c-fb54-b4301e45ae5e"
    assert g.pci_bus_id == "00000000:00:06.0"
    n = g.nominal
    assert n["sm_clock_max_mhz"] == 1980 and n["mem_clock_max_mhz"] == 3201
    assert n["power_default_w"] == 700 and n["power_enforced_w"] == 700
    assert n["power_min_w"] == 200 and n["pcie_max_gen"] == 5 and n["pcie_max_width"] == 16
    assert n["mem_total_bytes"] == 143771 << 20 and n["mem_reserved_bytes"] == 616 << 20
    # Driver 580 gives margins to T.Limit only: 33 °C + 54 °C margin = 87 °C; slowdown 2 °C
    # and shutdown 8 °C above it.
    assert n["temp_slowdown_c"] == 89 and n["temp_shutdown_c"] == 95
    assert g.extra["virtualization_mode"] == "passthrough"
    assert g.extra["mig_mode"] == 0 and g.extra["arch"] == "Hopper"
    assert g.extra["persistence_mode"] == 1


def test_driver_535_inventory_reads_current_power_limit_and_tlimit_margins() -> None:
    inv = smi.parse_inventory((FIX / "rtx4090x2-q.xml").read_bytes())
    assert [g.index for g in inv.gpus] == [0, 1]
    n = inv.gpus[1].nominal
    assert n["power_enforced_w"] == 300 and n["power_default_w"] == 450
    # Driver 535 prints margins to T.Limit only: 66 °C + 17 °C = 83 °C; slowdown 2 °C and
    # shutdown 7 °C above it.
    assert n["temp_slowdown_c"] == 85 and n["temp_shutdown_c"] == 90
    assert n["temp_mem_max_c"] is None and n["sm_clock_base_mhz"] is None


@pytest.mark.parametrize(
    ("xml", "why"),
    [
        (b"<nope", "did not print valid XML"),
        (b"<other/>", "not <nvidia_smi_log>"),
        (b"<nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>", "no GPU"),
    ],
)
def test_bad_inventory_says_why(xml: bytes, why: str) -> None:
    with pytest.raises(smi.SmiError, match=why):
        smi.parse_inventory(xml)


def _h200_lines() -> list[str]:
    return [
        ln
        for ln in (FIX / "h200-query.csv").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


def test_query_lines_become_sample_rows_with_nulls_never_zeros() -> None:
    plan = smi.FieldPlan.initial()
    asm = smi.QueryAssembler(plan.columns(), [0])
    ticks = [t for ln in _h200_lines() for t in asm.feed(ln)]
    assert len(ticks) == 40
    busy = ticks[20][0]
    assert busy.values["util_gpu_pct"] == 100 and busy.values["pstate"] == 0
    assert busy.values["mem_used_bytes"] == (121344 + 10) << 20
    assert busy.values["remap_pending"] == 0 and busy.values["clock_reasons"] == 0
    assert ticks[0][0].values["clock_reasons"] == 0x1  # idle
    row = smi.sample_row(busy)
    assert row[0] == 0 and len(row) == len(protocol.COLUMNS) + 1
    assert row[protocol.ROW_POS["fan_pct"]] is None  # "[N/A]", not 0
    assert row[protocol.ROW_POS["sm_active_pct"]] is None  # no GPM through nvidia-smi
    assert row[protocol.ROW_POS["lost"]] == 0
    assert busy.missing["fan_pct"] == smi.NOT_AVAILABLE


def test_not_supported_lost_gpu_and_bad_lines() -> None:
    cols = ["util_gpu_pct", "temp_mem_c", "ecc_sbe_vol"]
    asm = smi.QueryAssembler(cols, [0, 1])
    assert asm.feed("0, 97, [Not Supported], 3") == []
    (tick,) = asm.feed("1, [GPU is lost], [GPU is lost], [GPU is lost]")
    assert tick[0].missing["temp_mem_c"] == smi.NOT_SUPPORTED and tick[0].values["ecc_sbe_vol"] == 3
    assert tick[1].lost and smi.sample_row(tick[1])[protocol.ROW_POS["lost"]] == 1
    # A garbled line is counted, not fatal; a GPU reporting twice closes the tick it is in.
    assert asm.feed("garbage") == [] and asm.bad_lines == 1 and "fields" in (asm.last_error or "")
    asm.feed("0, 50, 40, 0")
    (t2,) = asm.feed("0, 51, 40, 0")
    assert set(t2) == {0} and t2[0].values["util_gpu_pct"] == 50


def test_an_older_nvidia_smi_gets_its_field_names() -> None:
    plan = smi.FieldPlan.initial()
    out = 'Field "clocks_event_reasons.active" is not a valid field to query.\n'
    assert smi.invalid_field(out) == "clocks_event_reasons.active"
    assert plan.refuse("clocks_event_reasons.active")
    assert "clocks_throttle_reasons.active" in plan.fields()
    assert plan.refuse("remapped_rows.pending")
    assert "remap_pending" not in plan.columns()
    assert "remapped_rows.pending" in plan.dropped["remap_pending"]
    assert not plan.refuse("no.such.field")


def test_hello_marks_what_nvidia_smi_cannot_give() -> None:
    inv = smi.parse_inventory((FIX / "h200-q.xml").read_bytes())
    plan = smi.FieldPlan.initial()
    asm = smi.QueryAssembler(plan.columns(), [0])
    (first,) = asm.feed(_h200_lines()[0])
    obj = smi.hello_obj(inv, plan, first, "run-1", 1.0, "h200-box")
    hello = parse_object(obj)
    assert isinstance(hello, Hello) and hello.backend == "nvidia-smi"
    un = hello.gpus[0].unsupported
    for col in ("sm_active_pct", "tensor_active_pct", "energy_j", "nvlink_tx_bps"):
        assert "not among nvidia-smi's --query-gpu fields" in un[col], col
    assert un["fan_pct"] == smi.NOT_AVAILABLE and "util_gpu_pct" not in un
    assert "lost" not in un
    assert "no offline ring" in hello.raw["limits"]
    assert hello.gpus[0].nominal_value("temp_slowdown_c") == 89


def test_compute_apps_become_procs() -> None:
    inv = smi.parse_inventory((FIX / "rtx4090x2-q.xml").read_bytes())
    lines = (FIX / "rtx4090x2-apps.csv").read_text().splitlines()
    lines.append("GPU-unknown, 1, x, 5")  # a GPU not in the inventory: skipped
    procs = smi.apps_procs(lines, inv.uuid_index())
    assert [(p["gpu"], p["pid"]) for p in procs] == [(0, 48211), (1, 48212)]
    assert procs[0]["cmd"] == "/usr/bin/python3.11 train.py --config a, b.yaml"
    assert procs[0]["name"] == "python3.11" and procs[0]["mem_bytes"] == 19210 << 20
    assert procs[0]["start_ticks"] is None and procs[0]["sm_pct"] is None
    msg = parse_object({"kind": "procs", "seq": 1, "t": 1.0, "procs": procs})
    assert isinstance(msg, Procs) and msg.procs[1].pid == 48212


def test_local_stream_through_the_stand_in_nvidia_smi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h, t = local_smi(tmp_path, monkeypatch, "rtx4090x2")
    assert isinstance(t, CollectorTransport)
    prefix = t.ensure_sampler()
    assert prefix == [SMI_PREFIX]
    stream = t.stream(samplercmd.attach_argv(prefix, h, 0))
    dec = StreamDecoder()
    live = LiveBuffers(window_s=600)
    samples: list[Sample] = []
    procs: list[Procs] = []
    deadline = time.monotonic() + 60
    try:
        for line in stream:
            m = dec.feed(line)
            if m is None:
                continue
            live.feed(h.name, m)
            if isinstance(m, Sample):
                samples.append(m)
            elif isinstance(m, Procs):
                procs.append(m)
            if (len(samples) >= 8 and procs) or time.monotonic() > deadline:
                break
    finally:
        stream.close()
        t.close()
    assert dec.bad_lines == 0, dec.last_error
    hello = dec.hello
    assert hello is not None and [g.index for g in hello.gpus] == [0, 1]
    # Driver 535 refused the new names; the old ones were used.
    assert "temp_mem_c" in hello.gpus[0].unsupported
    assert "remap_pending" in hello.gpus[0].unsupported
    assert len(samples) >= 8 and procs, (len(samples), len(procs))
    assert [s.seq for s in samples] == sorted(s.seq for s in samples)
    s = samples[-1]
    assert s.value(1, "power_limit_w") == 300 and s.value(0, "clock_reasons") == 0x4
    assert s.value(0, "pcie_gen") == 4 and s.value(0, "temp_mem_c") is None
    assert {p.pid for p in procs[-1].procs} == {48211, 48212}
    # What the plots draw: the live buffers hold the series.
    series = live.series(h.name, 1, "power_w")
    assert len(series) >= 8 and abs(float(series.v[-1]) - 296.1) < 0.01
    # The health check comes from -q -x; a kill needs the sampler and says so.
    rc, out, _err = t.run([SMI_PREFIX, "check"])
    assert rc == 0 and b'"backend":"nvidia-smi"' in out
    rc, out, _err = t.run([SMI_PREFIX, "kill", "--pid", "1"])
    assert rc != 0 and b'"result":"refused"' in out and b"start time" in out


def test_a_mig_host_streams_its_slices_under_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h, t = local_smi(tmp_path, monkeypatch, "a100mig")
    stream = t.stream(samplercmd.attach_argv(t.ensure_sampler(), h, 0))
    dec = StreamDecoder()
    live = LiveBuffers(window_s=600)
    samples: list[Sample] = []
    try:
        for line in stream:
            m = dec.feed(line)
            if m is not None:
                live.feed(h.name, m)
            if isinstance(m, Sample):
                samples.append(m)
            if len(samples) >= 4:
                break
    finally:
        stream.close()
        t.close()
    assert dec.bad_lines == 0, dec.last_error
    hello = dec.hello
    assert hello is not None
    assert [g.index for g in hello.gpus] == [0, 100, 101, 102]
    slices = hello.gpus[1:]
    assert [g.name for g in slices] == [
        f"NVIDIA A100-SXM4-80GB MIG {p}" for p in ("3g.40gb", "2g.20gb", "1g.10gb")
    ]
    assert slices[2].uuid == "MIG-3b4c5d6e-7f80-5192-a3b4-c5d6e7f8a9b2"  # from nvidia-smi -L
    assert [g.extra["mig"]["sm_count"] for g in slices] == [42, 28, 14]
    assert [g.nominal_value("mem_total_bytes") for g in slices] == [
        40192 << 20,
        19968 << 20,
        9856 << 20,
    ]
    # The card: utilization [N/A] in MIG mode, said as such; its power and clocks are there.
    assert hello.gpus[0].unsupported["util_gpu_pct"] == smi.MIG_UTIL
    s = samples[-1]
    assert s.value(0, "util_gpu_pct") is None and s.value(0, "power_limit_w") == 400
    assert [s.value(i, "mem_used_bytes") for i in (100, 101, 102)] == [
        12850 << 20,
        7431 << 20,
        13 << 20,
    ]
    assert s.value(100, "power_w") is None  # the card's, not the slice's
    assert len(live.series(h.name, 101, "mem_used_bytes")) == len(samples)


def test_auto_keeps_the_sampler_and_local_hosts_unwrapped() -> None:
    h = HostConfig(name="x", transport="local", backend="sim", scenario="healthy-8xa100")
    t = LocalTransport(h)
    assert with_collector(t, h) is t
    ssh_auto = HostConfig(name="y")
    assert ssh_auto.collector == "auto"
    assert with_collector(t, HostConfig(name="z", collector="sampler")) is t


def test_a_failing_nvidia_smi_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = fake_smi(tmp_path, "rtx4090x2")
    (bin_dir / "q.xml").unlink()  # -q -x now fails, as on a host whose driver is gone
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    h = HostConfig(name="smi", transport="local", collector="nvidia-smi")
    t = with_collector(LocalTransport(h), h)
    stream = t.stream(samplercmd.attach_argv(t.ensure_sampler(), h, 0))
    dec = StreamDecoder()
    msgs = [m for m in (dec.feed(line) for line in stream) if m is not None]
    t.close()
    assert len(msgs) == 1 and "nvidia-smi -q -x failed" in msgs[0].message  # type: ignore[union-attr]
    assert "nvidia-smi -q -x failed" in (stream.end_reason() or "")


def test_health_check_from_q_x_names_pass_through_and_the_power_cap() -> None:
    facts = smi.check_facts((FIX / "h200-q.xml").read_bytes())
    found = {f.id: f for f in evaluate_check(facts)}
    assert found["virtualization"].verdict == "pass"
    assert "passthrough" in finding_sentence(found["virtualization"])
    assert found["power_limit"].verdict == "pass" and found["ecc"].verdict == "pass"
    assert found["remapped_rows"].verdict == "pass" and found["persistence_mode"].verdict == "pass"
    assert found["xid"].verdict == "info"  # nothing watched for Xids: unknown, not a pass
    assert found["temperature"].values["temp_slowdown_c"] == 89
    # The capped 4090s: the limit below the default fails; the process is listed.
    facts = smi.check_facts((FIX / "rtx4090x2-q.xml").read_bytes())
    out = evaluate_check(facts)
    assert {(f.id, f.gpu) for f in out if f.verdict == "fail"} >= {("power_limit", 0)}
    (procs,) = [f for f in out if f.id == "processes" and f.gpu == 0]
    assert [p["pid"] for p in procs.values["processes"]] == [48211]
    (ecc,) = [f for f in out if f.id == "ecc" and f.gpu == 0]
    assert ecc.values.get("variant") == "unsupported"  # GeForce: ECC N/A
