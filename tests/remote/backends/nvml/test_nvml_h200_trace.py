"""The NVML trace recorded on a real H200 (tests/fixtures/nvml/h200x1.json), replayed through
the fake pynvml: the real sampler's ``stream`` and ``check`` must show what the GPU did.

The trace: driver 580.159.04, one H200 passed through to a VM (PCIe, no NVLink), 61 ticks at
1 s while ``tools/gpu_load.py`` ran bf16 matmuls in 20 s busy / 10 s idle phases holding
~18 GB. Its process was pid 434 on that machine; here the pid is mapped onto a live
``python3`` child, so that /proc answers for it as it did there (pid 434 on this machine is
somebody else, or no one). Replayed at 0.1 s a tick: the fake's NVML clock runs in trace
time, so rates come out as recorded. docs/device/h200-stream.jsonl is the real sampler's
output on that GPU; the replay is compared with it.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.text.catalogue import finding_sentence
from gpufleet.core.verdicts.health import evaluate_check, overall_verdict
from gpufleet.core.wire.messages import ErrorMsg, Event, Hello, Procs, Sample, StreamDecoder
from gpufleet_sampler import protocol, protocol_schema
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.support.nvml_fake import PROFILES, ROOT, fake_env, fake_nvml, record_trace

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")

TRACE = PROFILES / "h200x1.json"
REAL_STREAM = ROOT / "docs" / "device" / "h200-stream.jsonl"
REAL_CHECK = ROOT / "docs" / "device" / "h200-check.json"
RECORDED_PID = 434
TICK_S = 0.1


def _trace() -> dict[str, Any]:
    with open(TRACE, encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


def _recorded(key: str) -> list[Any]:
    """Every per-tick value the trace holds for ``key`` (GPU 0), in tick order."""
    out = []
    for row in _trace()["ticks"]:
        v = row[0].get(key)
        if v is not None:
            out.append(v["v"] if isinstance(v, dict) and "v" in v else v)
    return out


def _remap_pid(obj: Any, pid: int) -> Any:
    if isinstance(obj, dict):
        if obj.get("pid") == RECORDED_PID:
            return dict(obj, pid=pid)
        return {k: _remap_pid(v, pid) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_remap_pid(v, pid) for v in obj]
    return obj


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """(the trace with its process mapped onto a live python3, that process's pid)."""
    python3 = Path(sys.executable).with_name("python3")
    child = subprocess.Popen(
        [str(python3), "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        path = tmp_path_factory.mktemp("h200") / "h200x1.json"
        path.write_text(json.dumps(_remap_pid(_trace(), child.pid)), encoding="utf-8")
        yield path, child.pid
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)


def _sampler(args: list[str], trace: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *args, "--backend", "nvml"],
        env=fake_env(trace, tick_s=TICK_S),
        cwd=str(ROOT),
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def replay(stand_in: tuple[Path, int]) -> list[Any]:
    # 40 samples at the trace's pace: ticks ~2..42 of 61 (busy, idle, busy), ending before
    # the trace cycles back to tick 0 (where every counter would fall back).
    res = _sampler(["stream", "--count", "40", "--interval", str(TICK_S)], stand_in[0])
    assert res.returncode == 0, res.stderr.decode()
    assert res.stderr.decode().strip() == ""  # no error lines
    dec = StreamDecoder()
    msgs = dec.feed_many(res.stdout.splitlines())
    assert dec.bad_lines == 0, dec.last_error
    assert not [m for m in msgs if isinstance(m, ErrorMsg)]
    return msgs


def _col(samples: list[Sample], name: str) -> list[Any]:
    return [s.value(0, name) for s in samples]


def test_hello_names_the_h200_and_its_nominal_values(replay: list[Any]) -> None:
    hello = replay[0]
    assert isinstance(hello, Hello) and hello.backend == "nvml"
    assert hello.host["driver_version"] == "580.159.04"
    assert hello.host["nvml_version"] == "13.580.159.04"
    assert hello.host["cuda_version"] == "13.0"
    (g,) = hello.gpus
    assert g.name == "NVIDIA H200"
    assert g.uuid == "GPU-3c31fff2-2f58-f29c-fb54-b4301e45ae5e"
    nom = g.nominal
    assert nom["mem_total_bytes"] == 150754820096
    assert nom["sm_clock_max_mhz"] == 1980 and nom["sm_clock_base_mhz"] == 1980
    assert nom["power_enforced_w"] == 700.0 and nom["power_default_w"] == 700.0
    assert (nom["pcie_max_gen"], nom["pcie_max_width"]) == (5, 16)
    assert nom["temp_slowdown_c"] == 89 and nom["temp_mem_max_c"] == 95
    # No fan on this board: a reason, and the column never 0.
    assert g.unsupported["fan_pct"] == "NotSupported: nvmlDeviceGetFanSpeed"
    # PCIe only: NVLink is unsupported, each column with its reason.
    assert nom["nvlink_links"] == 0
    for c in ("nvlink_up", "nvlink_tx_bps", "nvlink_rx_bps"):
        assert g.unsupported[c].startswith("NotSupported"), c
    # Hopper retires no pages (rows are remapped instead).
    assert "retired_pending" in g.unsupported
    # Everything else the sampler reads, the H200 answered.
    assert set(g.unsupported) == {
        "fan_pct",
        "nvlink_up",
        "nvlink_tx_bps",
        "nvlink_rx_bps",
        "retired_pending",
    }
    assert g.extra.get("gpm") is True and g.extra.get("memory_info") == "v2"


def test_samples_show_the_busy_and_idle_phases_as_recorded(replay: list[Any]) -> None:
    samples = [m for m in replay if isinstance(m, Sample)]
    assert len(samples) == 40
    util = _col(samples, "util_gpu_pct")
    power = _col(samples, "power_w")
    # Busy (99-100 %, ~690 W at the 700 W cap) and idle (0 %, ~120 W) phases both appear.
    assert max(util) >= 99 and min(util) == 0
    assert max(power) > 680 and min(power) < 130
    assert sum(1 for u in util if u >= 99) >= 10 and sum(1 for u in util if u == 0) >= 5
    # Every value is one the GPU gave, converted (mW -> W, mJ -> J).
    rec_util = {u["gpu"] for u in _recorded("nvmlDeviceGetUtilizationRates")}
    assert set(util) <= rec_util
    assert set(power) <= {p / 1000.0 for p in _recorded("nvmlDeviceGetPowerUsage")}
    assert set(_col(samples, "sm_clock_mhz")) <= set(_recorded("nvmlDeviceGetClockInfo:1"))
    assert set(_col(samples, "energy_j")) <= {e // 1000 for e in _recorded("field:83")}
    # HBM temperature reported in every sample, as recorded.
    tmem = _col(samples, "temp_mem_c")
    assert None not in tmem and set(tmem) <= set(_recorded("field:82"))
    assert set(_col(samples, "mem_used_bytes")) == {18374000640}
    assert set(_col(samples, "power_limit_w")) == {700.0}
    assert set(_col(samples, "pcie_gen")) == {5} and set(_col(samples, "pcie_width")) == {16}
    assert set(_col(samples, "fan_pct")) == {None}
    for c in ("nvlink_up", "nvlink_tx_bps", "nvlink_rx_bps", "retired_pending"):
        assert set(_col(samples, c)) == {None}, c
    # Held at the power cap while busy (clock event reason 4 = SW power cap): ~100 % of
    # the time; 0 % while idle.
    vpow = [v for v in _col(samples, "viol_power_pct") if v is not None]
    assert max(vpow) >= 99.0 and min(vpow) == 0.0
    assert 4 in _col(samples, "clock_reasons") and 0 in _col(samples, "clock_reasons")
    # PCIe rates: bytes per recorded second, within what the 32-bit counters moved per tick.
    for key, c in (("field:197", "pcie_tx_bps"), ("field:198", "pcie_rx_bps")):
        v = _recorded(key)
        deltas = [(b - a) % (1 << 32) for a, b in itertools.pairwise(v)]
        rates = [r for r in _col(samples, c) if r is not None]
        assert len(rates) >= len(samples) - 2, c
        assert all(min(deltas) - 1 <= r <= max(deltas) + 1 for r in rates), (c, rates)
    # GPM (Hopper): SM activity high in busy ticks, 0 in idle ones.
    sma = [v for v in _col(samples, "sm_active_pct") if v is not None]
    assert max(sma) > 90 and min(sma) == 0.0
    assert set(_col(samples, "ecc_dbe_vol")) == {0} and set(_col(samples, "remap_pending")) == {0}
    assert set(_col(samples, "lost")) == {0}
    assert not [m for m in replay if isinstance(m, Event)]


def test_the_python3_process_with_its_18_gb(replay: list[Any], stand_in: tuple[Path, int]) -> None:
    snaps = [m for m in replay if isinstance(m, Procs)]
    assert snaps
    for snap in snaps:
        (p,) = snap.procs
        assert (p.gpu, p.pid, p.name, p.type) == (0, stand_in[1], "python3", "C")
        assert p.mem_bytes == 18364760064  # ~18.4 GB (17.1 GiB)
        assert p.start_ticks is not None and p.user
    sm = {u["smUtil"] for row in _recorded("nvmlDeviceGetProcessUtilization") for u in row}
    assert {p.sm_pct for s in snaps for p in s.procs} <= sm


def test_replay_has_the_real_runs_support_picture(replay: list[Any]) -> None:
    """docs/device/h200-stream.jsonl is what the sampler printed on the H200 itself."""
    real = StreamDecoder().feed_many(REAL_STREAM.read_bytes().splitlines())
    rh, h = real[0], replay[0]
    assert isinstance(rh, Hello) and isinstance(h, Hello)
    for k in ("driver_version", "nvml_version", "cuda_version"):
        assert h.host[k] == rh.host[k], k
    assert h.gpus[0].nominal == rh.gpus[0].nominal
    assert h.gpus[0].unsupported == rh.gpus[0].unsupported

    def present(samples: list[Any]) -> set[str]:
        return {
            c
            for s in samples[1:]
            if isinstance(s, Sample)
            for c in protocol.COLUMN_NAMES
            if s.value(0, c) is not None
        }

    assert present(replay) == present(real)


def test_check_facts_match_the_real_gpus(stand_in: tuple[Path, int]) -> None:
    res = _sampler(["check"], stand_in[0])
    assert res.returncode == 0, res.stderr.decode()
    facts = json.loads(res.stdout)
    with open(REAL_CHECK, encoding="utf-8") as f:
        real = json.load(f)
    assert facts["kind"] == "check" and facts["driver_version"] == "580.159.04"
    (g,) = facts["gpus"]
    (rg,) = real["gpus"]
    # Facts added after the recording: the device file and the memory of processes that are
    # not in the sampler's container.
    newer = {"minor", "device", "processes_not_here", "mem_not_here_bytes", "mig_slices"}
    assert set(g) - newer == set(rg)
    for k in (
        "name",
        "uuid",
        "pci_bus_id",
        "mem_total_bytes",
        "mem_reserved_bytes",
        "sm_clock_max_mhz",
        "power_enforced_w",
        "power_default_w",
        "power_max_w",
        "temp_slowdown_c",
        "temp_mem_max_c",
        "pcie_gen",
        "pcie_max_gen",
        "pcie_width",
        "pcie_max_width",
        "nvlink_links",
        "nvlink_up",
        "ecc_mode",
        "ecc_sbe_vol",
        "ecc_dbe_vol",
        "ecc_sbe_agg",
        "ecc_dbe_agg",
        "remap_pending",
        "remap_failed",
        "retired_pending",
        "persistence_mode",
        "virtualization_mode",
        "unsupported",
    ):
        # The recording predates the schema's names and flags (virtualization_mode 1 is
        # "passthrough", ecc_mode 1 is true): compare through the same coercion.
        assert g[k] == protocol_schema.coerce(k, rg[k]), k
    assert g["temp_mem_c"] is not None and g["xid_seen"] == "unknown"
    (p,) = g["process_list"]
    assert (p["pid"], p["name"], p["mem_bytes"]) == (stand_in[1], "python3", 18364760064)
    # The laptop's verdicts: nothing fails; the Xids could not be checked (not a pass).
    findings = evaluate_check(facts)
    assert overall_verdict(findings) != "fail"
    (x,) = [f for f in findings if f.id == "xid"]
    assert x.verdict != "pass" and "could not be checked" in finding_sentence(x)


# ---------------------------------------------------------------------- backend details


def _ticks(fake: Any, b: NvmlBackend, first: int, last: int) -> list[list[list[Any]]]:
    out = []
    for t in range(first, last + 1):
        fake._fake.set_time(float(t))
        out.append(b.tick(float(t)))
    return out


def _val(rows: list[list[Any]], name: str) -> Any:
    return rows[0][protocol.ROW_POS[name]]


def test_32_bit_pcie_byte_counters_wrap_instead_of_dropping_the_rate() -> None:
    """The H200 gives fields 197/198 as 32-bit values (valueType 1): they wrap every 4 GiB,
    which at ~7 MB/s is every 10 minutes and under a data loader several times a minute."""
    prof = _trace()
    step = 7_000_000
    for k, row in enumerate(prof["ticks"]):
        row[0]["field:197"] = {"v": ((1 << 32) - 3 * step + k * step) % (1 << 32), "type": 1}
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=1.0, events=False)
        try:
            rows = _ticks(fake, b, 1, 6)  # the counter wraps between ticks 2 and 3
        finally:
            b.close()
    assert [_val(r, "pcie_tx_bps") for r in rows] == [step] * 6


def test_error_counters_ride_along_only_on_medium_ticks() -> None:
    """PCIe replays (94) and volatile ECC (3/4) change rarely: they are left out of the per-tick
    field read (the costliest per-tick call on the H200) except every medium_s, in that same
    call; in between the last values are sent."""
    prof = _trace()
    for k, row in enumerate(prof["ticks"]):
        row[0]["field:3"] = {"v": 0 if k < 3 else 5, "type": 3}
        row[0]["field:4"] = {"v": 0 if k < 3 else 1, "type": 3}
        row[0]["field:94"] = {"v": 0 if k < 3 else 2, "type": 1}
    with fake_nvml(prof) as fake:
        asked: list[list[Any]] = []
        real_fv = fake.nvmlDeviceGetFieldValues

        def recording(h: Any, ids: list[Any]) -> Any:
            asked.append(list(ids))
            return real_fv(h, ids)

        fake.nvmlDeviceGetFieldValues = recording
        b = NvmlBackend(interval=1.0, medium_s=5.0, events=False)
        try:
            asked.clear()
            rows = _ticks(fake, b, 1, 12)
            events = b.events(12.0)
        finally:
            fake.nvmlDeviceGetFieldValues = real_fv
            b.close()
    per_tick = [ids for ids in asked if 83 in ids]
    assert len(per_tick) == 12  # one field read a tick, no extra one on medium ticks
    with_errors = [k + 1 for k, ids in enumerate(per_tick) if {3, 4, 94} <= set(ids)]
    assert with_errors == [6, 11]  # medium ticks: 5 s after the first tick, then every 5 s
    assert all(not {3, 4, 94} & set(ids) for ids in per_tick if 83 in ids and 3 not in ids)
    # Values: start-up read (0) until the medium tick at 6 s reads 5 / 1 / 2.
    assert [_val(r, "ecc_sbe_vol") for r in rows] == [0] * 5 + [5] * 7
    assert [_val(r, "ecc_dbe_vol") for r in rows] == [0] * 5 + [1] * 7
    assert [_val(r, "pcie_replays") for r in rows] == [0] * 5 + [2] * 7
    (ev,) = [e for e in events if e["type"] == protocol.EVENT_ECC]
    assert ev["code"] == 1 and "uncorrectable" in ev["message"]


def test_call_times_bisect_fields_times_each_per_tick_field_alone() -> None:
    """tools/nvml_call_times.py --bisect-fields, on the H200's answers: every field of the
    per-tick read (and the medium ticks' error counters) timed alone, plus the whole call."""
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "nvml_call_times.py"),
            "--ticks",
            "3",
            "--interval",
            "0.05",
            "--bisect-fields",
            "--bisect-reps",
            "3",
        ],
        env=fake_env(TRACE, tick_s=0.05),
        cwd=str(ROOT),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr.decode()
    out = json.loads(res.stdout)
    # RSS before and after nvmlInit: how much libnvidia-ml maps, on the next real run.
    rss = out["rss"]
    assert 0 < rss["after_import_mib"] <= rss["after_backend_start_mib"] + 1
    bis = out["bisect_fields"]
    assert bis["gpu"] == 0 and bis["rounds"] == 3 and bis["whole_call_us_median"] > 0
    names = [e["field"] for e in bis["per_field"]]
    assert sorted(names) == sorted(
        ["83", "82", "197", "198", "74", "271", "269", "270", "94", "3", "4"]
    )
    assert bis["fields"] == len(names)
    for e in bis["per_field"]:
        assert e["answer"].startswith("ok, type ") and 0 < e["us_median"] <= e["us_max"], e
    # The timings of the bisection stay out of the per-tick table.
    (fv,) = [r for r in out["per_tick"] if r["fn"] == "nvmlDeviceGetFieldValues"]
    assert fv["calls_per_tick"] == 1.0


def test_recorder_writes_strict_json_for_nan_answers(tmp_path: Path) -> None:
    """GPM answered NaN on the H200 (DRAM bandwidth, first sample); the recorder writes it as
    the string "NaN", which the fake reads back as a NaN and the backend sends as null."""
    prof = _trace()
    prof["tick_s"] = 0.2  # recorded at 0.2 s, so the fake must tick at that pace
    for row in prof["ticks"]:
        row[0]["gpm:10"] = float("nan")
    src = tmp_path / "h200-nan.json"
    src.write_text(json.dumps(prof), encoding="utf-8")
    out = tmp_path / "rerecorded.json"
    res = record_trace(src, out, 0.8, 0.2, "--skip-measure")
    assert res.returncode == 0, res.stderr.decode()

    def no_constants(name: str) -> Any:
        raise AssertionError(f"{name} in the recorded JSON")

    rec = json.loads(out.read_text(encoding="utf-8"), parse_constant=no_constants)
    assert rec["gpus"][0]["nvmlDeviceGetName"] == "NVIDIA H200"
    assert {row[0].get("gpm:10") for row in rec["ticks"]} - {None} == {"NaN"}
    with fake_nvml(rec) as fake:
        b = NvmlBackend(interval=0.2, events=False)
        try:
            rows = _ticks(fake, b, 1, 3)
        finally:
            b.close()
    assert [_val(r, "dram_active_pct") for r in rows] == [None] * 3
    assert all(_val(r, "sm_active_pct") is not None for r in rows[1:])
