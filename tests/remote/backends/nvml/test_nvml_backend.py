"""The NVML backend through the fake pynvml: degradation, lost GPUs, rates, tiers, processes.

The fake is the real pynvml module with its library calls answered from a JSON profile
(tests/fakes/pynvml.py), so the backend meets the real structs, constants and error classes.
The fake clock is driven explicitly: ``fake._fake.set_time(t)`` then ``backend.tick(t)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.support.nvml_fake import fake_nvml, profile

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")

POS = protocol.ROW_POS


@pytest.fixture
def h100() -> Iterator[tuple[Any, NvmlBackend]]:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, event_wait_ms=50)
        try:
            yield fake, b
        finally:
            b.close()


def run_ticks(fake: Any, b: NvmlBackend, t0: int, t1: int) -> list[list[list[Any]]]:
    out = []
    for t in range(t0, t1):
        fake._fake.set_time(float(t))
        out.append(b.tick(float(t)))
    return out


def col(row: list[Any], name: str) -> Any:
    return row[POS[name]]


# ---------------------------------------------------------------------------- unsupported


def test_notsupported_is_null_never_zero_with_reason_in_hello() -> None:
    with fake_nvml("rtx4090x2") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            rows = run_ticks(fake, b, 1, 6)
        finally:
            b.close()
    g0 = hello["gpus"][0]
    unsupported = g0["unsupported"]
    # GeForce lacks these: each is in hello with the call that said so...
    for name in (
        "temp_mem_c",
        "sm_active_pct",
        "tensor_active_pct",
        "nvlink_tx_bps",
        "pcie_tx_bps",
        "remap_pending",
        "retired_pending",
        "ecc_dbe_vol",
    ):
        assert name in unsupported, name
        assert unsupported[name], f"{name} has no reason"
    assert unsupported["temp_mem_c"] == "NotSupported: field 82"
    assert unsupported["remap_pending"] == "NotSupported: nvmlDeviceGetRemappedRows"
    # ...and null in every row, never 0.
    for tick in rows:
        for row in tick:
            for name in unsupported:
                assert col(row, name) is None, name
            # What it has is reported.
            for name in ("util_gpu_pct", "temp_gpu_c", "power_w", "fan_pct", "mem_used_bytes"):
                assert col(row, name) is not None, name
    # Every unsupported name is a real column.
    assert set(unsupported) <= set(protocol.COLUMN_NAMES)


def test_datacenter_profile_reports_everything_but_the_fan() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            rows = run_ticks(fake, b, 1, 4)
        finally:
            b.close()
    assert len(hello["gpus"]) == 8
    assert hello["gpus"][0]["unsupported"] == {"fan_pct": "NotSupported: nvmlDeviceGetFanSpeed"}
    nom = hello["gpus"][0]["nominal"]
    assert set(nom) == {k for k, _ in protocol.NOMINAL_KEYS}
    assert nom["nvlink_links"] == 18
    assert nom["nvlink_link_bps"] == 25_000_000_000
    assert nom["mem_reserved_bytes"] == 570425344
    assert nom["power_default_w"] == 700.0
    assert hello["host"]["cuda_version"] == "12.4"
    for row in rows[-1]:
        assert len(row) == len(protocol.COLUMN_NAMES) + 1
        for name in protocol.COLUMN_NAMES:
            if name != "fan_pct":
                assert col(row, name) is not None, name
        assert col(row, "lost") == 0
        # Rates from counter deltas over NVML's timestamps: the profile's counters advance by
        # 2.4e9 B, 146484375 KiB (= 150 GB) and 40 ms of power capping per 1 s tick.
        assert col(row, "pcie_tx_bps") == 2_400_000_000
        assert col(row, "nvlink_tx_bps") == 150_000_000_000
        assert col(row, "viol_power_pct") == 4.0
        assert col(row, "viol_thermal_pct") == 0.0
        assert 0 <= col(row, "sm_active_pct") <= 100


def test_first_tick_already_has_rates() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            (rows,) = run_ticks(fake, b, 1, 2)
        finally:
            b.close()
    assert col(rows[0], "pcie_rx_bps") == 1_800_000_000


@pytest.mark.parametrize("error", ["NoPermission", "FunctionNotFound", "NotSupported"])
def test_no_permission_and_function_not_found_degrade_like_not_supported(error: str) -> None:
    prof = profile("h100x8")
    d = prof["defaults"]
    d["nvmlDeviceGetPerformanceState"] = {"error": error}
    d["field:74"] = {"error": error}
    d["nvmlDeviceGetComputeRunningProcesses"] = {"error": error}
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            rows = run_ticks(fake, b, 1, 4)
            procs = b.procs(4.0)
        finally:
            b.close()
    unsupported = hello["gpus"][3]["unsupported"]
    assert unsupported["pstate"] == f"{error}: nvmlDeviceGetPerformanceState"
    assert unsupported["viol_power_pct"] == f"{error}: field 74"
    probes = hello["gpus"][3]["probes"]
    assert probes["nvmlDeviceGetComputeRunningProcesses_v3"].startswith(error)
    for tick in rows:
        for row in tick:
            assert col(row, "pstate") is None
            assert col(row, "viol_power_pct") is None
            assert col(row, "temp_gpu_c") is not None
    # No compute processes can be listed; graphics ones still could (there are none).
    assert procs == []


def test_function_not_found_falls_back_to_the_older_call() -> None:
    # rtx4090x2's driver lacks TemperatureV, ClocksEventReasons and the _v3 process lists.
    with fake_nvml("rtx4090x2") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            (rows,) = run_ticks(fake, b, 1, 2)
            procs = b.procs(1.0)
        finally:
            b.close()
    probes = hello["gpus"][0]["probes"]
    assert probes["nvmlDeviceGetTemperatureV"] == "FunctionNotFound: nvmlDeviceGetTemperatureV"
    assert "temp_gpu_c" not in hello["gpus"][0]["unsupported"]
    assert "clock_reasons" not in hello["gpus"][0]["unsupported"]
    assert col(rows[0], "temp_gpu_c") is not None
    assert col(rows[0], "clock_reasons") in (0, 4)
    # _v2 process lists answered: one compute process (us) and one graphics one per GPU.
    assert sorted(p["type"] for p in procs if p["gpu"] == 0) == ["C", "G"]
    assert fake._fake.calls["nvmlDeviceGetComputeRunningProcesses_v2"] >= 2


def test_missing_function_without_fallback_is_null_with_reason() -> None:
    prof = profile("h100x8")
    prof["missing"] = ["nvmlDeviceGetUtilizationRates", "nvmlDeviceGetFieldValues"]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            hello = b.hello()
            (rows,) = run_ticks(fake, b, 1, 2)
        finally:
            b.close()
    un = hello["gpus"][0]["unsupported"]
    assert un["util_gpu_pct"] == "FunctionNotFound: nvmlDeviceGetUtilizationRates"
    assert un["util_mem_pct"] == "FunctionNotFound: nvmlDeviceGetUtilizationRates"
    assert un["temp_mem_c"].startswith("FunctionNotFound: nvmlDeviceGetFieldValues")
    row = rows[0]
    assert col(row, "util_gpu_pct") is None and col(row, "temp_mem_c") is None
    # Energy falls back to its own call; PCIe rates to GPM.
    assert col(row, "energy_j") is not None
    assert col(row, "pcie_tx_bps") is not None


# ---------------------------------------------------------------------------- lost GPU


def test_gpu_is_lost_marks_one_gpu_and_the_others_go_on() -> None:
    prof = profile("h100x8")
    prof["inject"] = [{"gpu": 2, "from_tick": 3, "key": "*", "error": "GpuIsLost"}]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            ticks = run_ticks(fake, b, 1, 7)
            events = b.events(7.0)
            procs = b.procs(7.0)
            hello_after = b.hello()
        finally:
            b.close()
    for t, rows in zip(range(1, 7), ticks, strict=True):
        assert [r[0] for r in rows] == list(range(8))
        lost_row = rows[2]
        if t < 3:
            assert col(lost_row, "lost") == 0
            assert col(lost_row, "temp_gpu_c") is not None
        else:
            assert col(lost_row, "lost") == 1
            assert all(v is None for v in lost_row[1:-1])
        for other in rows[:2] + rows[3:]:
            assert col(other, "lost") == 0
            assert col(other, "power_w") is not None
    lost_events = [e for e in events if e["type"] == protocol.EVENT_GPU_LOST]
    assert len(lost_events) == 1 and lost_events[0]["gpu"] == 2
    assert {p["gpu"] for p in procs} == {0, 1, 3, 4, 5, 6, 7}
    assert hello_after["gpus"][2]["lost"] == 1


def test_gpu_lost_at_start_up() -> None:
    prof = profile("rtx4090x2")
    prof["inject"] = [{"gpu": 1, "key": "*", "error": "GpuIsLost"}]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            (rows,) = run_ticks(fake, b, 1, 2)
            events = b.events(1.0)
        finally:
            b.close()
    assert col(rows[1], "lost") == 1 and col(rows[0], "lost") == 0
    assert [e["gpu"] for e in events if e["type"] == "gpu_lost"] == [1]


# ---------------------------------------------------------------------------- counters


def test_counter_wrap_or_reset_gives_no_negative_or_huge_rate() -> None:
    prof = profile("h100x8")
    d = prof["defaults"]
    # A 32-bit-style wrap every ~4 ticks, a reset to 0 at tick 5 and a glitch at tick 8.
    d["field:197"] = {"ramp": [0, 1_000_000_000], "mod": 4_294_967_296}
    d["field:198"] = {"seq": [10**12, 10**12 + 10**9, 0, 10**9, 2 * 10**9, 10**18, 10**18 + 1]}
    d["field:74"] = {"seq": [5 * 10**9, 5 * 10**9 + 10**8, 0, 10**8, 2 * 10**8]}
    d["field:138:4294967295"] = {"seq": [100, 50, 150]}
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            ticks = run_ticks(fake, b, 1, 15)
        finally:
            b.close()
    tx = [col(rows[0], "pcie_tx_bps") for rows in ticks]
    rx = [col(rows[0], "pcie_rx_bps") for rows in ticks]
    vp = [col(rows[0], "viol_power_pct") for rows in ticks]
    nv = [col(rows[0], "nvlink_tx_bps") for rows in ticks]
    for series, cap in ((tx, 2e11), (rx, 2e11), (vp, 100.0), (nv, 1e13)):
        assert all(v is None or 0 <= v <= cap for v in series), series
    assert None in tx and 1_000_000_000 in tx  # the wrap tick is null, the others exact
    assert None in rx and 1_000_000_000 in rx  # reset and glitch are null
    assert None in vp and 10.0 in vp
    assert None in nv and 102400 in nv  # 100 KiB/s after the decrease


def test_cached_field_timestamp_repeats_the_last_rate() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=0.5, events=False)
        try:
            fake._fake.set_time(1.0)
            first = b.tick(1.0)
            second = b.tick(1.5)  # same fake time: NVML served the same values and timestamps
        finally:
            b.close()
    assert col(first[0], "pcie_tx_bps") == col(second[0], "pcie_tx_bps") == 2_400_000_000


# ---------------------------------------------------------------------------- tiers


def test_tiers_processes_never_per_tick_medium_every_5s_slow_every_minute() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            calls = fake._fake.calls
            start = dict(calls)
            run_ticks(fake, b, 1, 126)  # 125 ticks of 1 s
            after = dict(calls)
        finally:
            b.close()

    def n(name: str) -> int:
        return after.get(name, 0) - start.get(name, 0)

    assert n("nvmlDeviceGetUtilizationRates") == 125 * 8
    # One field read per tick (the medium tier's error counters and NVLink link states ride
    # along in it: no NVML cost here makes fields the cheaper way), plus the per-link
    # counters every 5 s (at 6, 11, ... 121 s: 24 per GPU), plus the slow tier's (twice).
    assert n("nvmlDeviceGetFieldValues") == 125 * 8 + 24 * 8 + 2 * 8
    assert n("nvmlDeviceGetComputeRunningProcesses_v3") == 0
    assert n("nvmlDeviceGetProcessUtilization") == 0
    # Medium tier every 5 s. GPUs take it on different ticks: GPU k of 8 first at
    # 6 - k * 5 // 8 s (6, 6, 5, 5, 4, 3, 3, 2), so GPUs 2-7 have 25 by 125 s, GPUs 0-1 24.
    assert n("nvmlDeviceGetCurrPcieLinkGeneration") == 2 * 24 + 6 * 25
    assert n("nvmlDeviceGetNvLinkState") == 0  # field 165 answers all 18 links at once
    # Slow tier: GPU k first at 61 - k * 60 // 8 s, then 60 s later.
    assert n("nvmlDeviceGetRemappedRows") == 2 * 8
    assert n("nvmlDeviceGetRetiredPagesPendingStatus") == 2 * 8
    assert n("nvmlDeviceGetPcieThroughput") == 0


def test_nvlink_state_falls_back_to_per_link_calls_and_a_link_down_is_an_event() -> None:
    prof = profile("h100x8")
    del prof["defaults"]["field:165:*"]
    prof["gpus"] = [{"nvmlDeviceGetNvLinkState:17": {"seq": [1] * 8 + [0], "cycle": False}}]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            ticks = run_ticks(fake, b, 1, 13)
            events = b.events(13.0)
        finally:
            b.close()
    # At start for every GPU, then every 5 s from 6 - k * 5 // 8 s for GPU k (6, 6, 5, 5, 4,
    # 3, 3, 2: GPU 7 a third time at 12 s), up to 12 s.
    assert fake._fake.calls["nvmlDeviceGetNvLinkState"] == (8 + 7 * 2 + 3) * 18
    assert col(ticks[0][0], "nvlink_up") == 18
    assert col(ticks[-1][0], "nvlink_up") == 17
    (ev,) = [e for e in events if e["type"] == protocol.EVENT_NVLINK]
    assert ev["gpu"] == 0 and "18 to 17" in ev["message"]


def test_slow_tier_changes_become_events() -> None:
    prof = profile("h100x8")
    prof["gpus"] = [
        {},
        {
            "nvmlDeviceGetRemappedRows": {
                "seq": [[0, 0, 0, 0]] * 30 + [[0, 1, 1, 0]],
                "cycle": False,
            }
        },
    ]
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, slow_s=10.0, events=False)
        try:
            ticks = run_ticks(fake, b, 1, 45)
            events = b.events(45.0)
        finally:
            b.close()
    remap = [e for e in events if e["type"] == protocol.EVENT_REMAP]
    assert len(remap) == 1 and remap[0]["gpu"] == 1 and remap[0]["code"] == 1
    assert "reset the GPU" in remap[0]["message"]
    assert col(ticks[-1][1], "remap_pending") == 1
    assert col(ticks[-1][0], "remap_pending") == 0


def test_power_limit_change_is_seen_within_the_medium_tier() -> None:
    prof = profile("rtx4090x2")
    prof["defaults"]["nvmlDeviceGetEnforcedPowerLimit"] = {"seq": [450000] * 10 + [300000] * 50}
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            ticks = run_ticks(fake, b, 1, 20)
        finally:
            b.close()
    limits = [col(rows[0], "power_limit_w") for rows in ticks]
    assert limits[0] == 450.0 and limits[-1] == 300.0


# ---------------------------------------------------------------------------- processes


def test_process_utilization_timestamp_is_carried_between_calls() -> None:
    with fake_nvml("h100x8") as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            fake._fake.set_time(1.0)
            first = b.procs(1.0)
            again = b.procs(1.2)  # before the per-process utilization tier is due again
            fake._fake.set_time(3.0)
            third = b.procs(3.0)  # 2 s later: due (GPU k of 8 at 3 - k * 2 // 8 s)
            fourth = b.procs(5.0)  # due for GPU 0 again, the fake's clock still at 3 s
        finally:
            b.close()
    args = fake._fake.putil_args[0]
    base = fake._fake.ts_base_us
    # The probe passes 0; then each call passes the newest timestamp seen so far.
    assert args == [0, 0, base + 1_000_000, base + 3_000_000]
    assert fake._fake.putil_args[7] == args  # GPU 7's turn (due at 2 s) came at 3 s
    assert all(p["sm_pct"] is not None and p["sm_pct"] > 0 for p in first + third)
    # In between, each process keeps the share last read (the call costs ~1.8 ms on an H200).
    assert [p["sm_pct"] for p in again] == [p["sm_pct"] for p in first]
    # Read again with nothing new since the last read (NotFound): 0, not unknown.
    assert fourth[0]["gpu"] == 0 and fourth[0]["sm_pct"] == 0
    me = first[0]
    assert me["name"] and me["user"] and me["start_ticks"] and me["cmd"]
    assert set(me) == set(protocol.PROC_KEYS) | set(protocol.PROC_MAP_KEYS)
    assert me["mapping"] == protocol.MAP_EXACT and me["host_pid"] == me["pid"]
    assert me["mem_bytes"] == 71303168000 and me["type"] == "C"


def test_process_utilization_unsupported_is_null_not_zero() -> None:
    prof = profile("rtx4090x2")
    prof["defaults"]["nvmlDeviceGetProcessUtilization"] = {"error": "NotSupported"}
    with fake_nvml(prof):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            procs = b.procs(1.0)
        finally:
            b.close()
    assert procs and all(p["sm_pct"] is None for p in procs)


# ---------------------------------------------------------------------------- events


def test_xid_from_the_event_thread_reaches_events(h100: tuple[Any, NvmlBackend]) -> None:
    import time

    fake, b = h100
    xid = fake.nvmlEventTypeXidCriticalError
    fake._fake.inject_event(5, xid, 79)
    deadline = time.monotonic() + 5.0
    got: list[dict[str, Any]] = []
    while not got and time.monotonic() < deadline:
        got = [e for e in b.events(0.0) if e["type"] == protocol.EVENT_XID]
        if not got:
            time.sleep(0.01)
    assert got, "the Xid never reached events()"
    ev = got[0]
    assert ev["gpu"] == 5 and ev["code"] == 79
    assert "fallen off the bus" in ev["message"]


def test_event_thread_stops_on_close() -> None:
    import threading

    with fake_nvml("h100x8"):
        b = NvmlBackend(interval=1.0, event_wait_ms=50)
        assert any(t.name == "nvml-events" for t in threading.enumerate())
        b.close()
    assert not any(t.name == "nvml-events" for t in threading.enumerate())


def test_unregistrable_events_are_noted_not_fatal() -> None:
    prof = profile("rtx4090x2")
    prof["defaults"]["nvmlDeviceGetSupportedEventTypes"] = {"error": "NoPermission"}
    with fake_nvml(prof):
        b = NvmlBackend(interval=1.0)
        try:
            probes = b.hello()["gpus"][0]["probes"]
        finally:
            b.close()
    assert probes["xid_events"] == "NoPermission: nvmlDeviceRegisterEvents"


# ---------------------------------------------------------------------------- info / check


def test_info_and_check_are_facts() -> None:
    with fake_nvml("h100x8"):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            info = b.info()
            check = b.check()
        finally:
            b.close()
    assert info["gpu_count"] == 8 and info["host"]["driver_version"] == "550.54.15"
    assert info["gpus"][1]["uuid"].endswith("1") and info["gpus"][1]["pci_bus_id"]
    g = check["gpus"][0]
    assert check["driver_version"] == "550.54.15" and check["cuda_version"] == "12.4"
    for key in (
        "persistence_mode",
        "pstate",
        "power_enforced_w",
        "power_default_w",
        "temp_gpu_c",
        "temp_slowdown_c",
        "pcie_gen",
        "pcie_max_gen",
        "pcie_width",
        "pcie_max_width",
        "ecc_sbe_agg",
        "remap_pending",
        "retired_pending",
        "processes",
        "mem_total_bytes",
        "mem_reserved_bytes",
        "virtualization_mode",
    ):
        assert g[key] is not None, key
    assert g["xid_seen"] == "unknown"
    assert g["ecc_mode"] is True and g["ecc_sbe_agg"] == 3
    assert g["processes"] == 1


def test_no_driver_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpufleet_sampler.backends.nvml import NvmlUnavailable

    from tests.support.nvml_fake import import_fake

    monkeypatch.delenv("GPUFLEET_FAKE_NVML", raising=False)
    fake = import_fake()
    with fake_nvml("h100x8"):
        fake._fake.profile = None  # as if libnvidia-ml.so.1 were absent
        with pytest.raises(NvmlUnavailable, match="NVIDIA driver"):
            NvmlBackend(interval=1.0)
