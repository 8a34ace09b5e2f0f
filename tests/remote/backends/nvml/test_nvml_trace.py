"""tools/record_nvml_trace.py, run against the fake pynvml (no GPU here): what it records must
drive the fake again and give the backend the same picture (the format round-trips)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend

from tests.support.nvml_fake import PROFILES, fake_nvml, record_trace

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")


def _record(prof: str, out: Path) -> dict:
    # The fake's NVML clock runs in profile time, so the profile recorded here must tick at the
    # recording interval, as a real GPU's answers do (a replay sped up by
    # GPUFLEET_FAKE_NVML_TICK_S would record 1 s of counter growth per 0.2 s tick).
    with open(PROFILES / f"{prof}.json", encoding="utf-8") as f:
        paced = dict(json.load(f), tick_s=0.2)
    src = out.with_name(f"{prof}-paced.json")
    src.write_text(json.dumps(paced), encoding="utf-8")
    res = record_trace(src, out, 1.2, 0.2)
    assert res.returncode == 0, res.stderr.decode()
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def _hello_and_rows(prof: dict) -> tuple[dict, list]:
    with fake_nvml(prof) as fake:
        b = NvmlBackend(interval=0.2, events=False)
        try:
            hello = b.hello()
            rows = []
            for t in range(1, 5):
                fake._fake.set_time(t * float(prof.get("tick_s", 1.0)))
                rows.append(b.tick(t * 0.2))
            procs = b.procs(1.0)
        finally:
            b.close()
    return {"hello": hello, "procs": procs}, rows


def test_recorded_trace_replays_with_the_same_support_picture(tmp_path: Path) -> None:
    for name in ("rtx4090x2", "h100x8"):
        trace = _record(name, tmp_path / f"{name}.json")
        assert trace["format"] == "gpufleet-nvml-profile" and trace["source"] == "recorded"
        assert trace["ticks"] and len(trace["gpus"]) == trace["count"]
        m = trace["measurements"]
        assert m["cpu_pct"] is not None and m["rss_mib"] > 0 and m["ticks"] >= 3
        with open(PROFILES / f"{name}.json", encoding="utf-8") as f:
            original = json.load(f)
        want, _ = _hello_and_rows(original)
        got, rows = _hello_and_rows(trace)
        for wg, gg in zip(want["hello"]["gpus"], got["hello"]["gpus"], strict=True):
            assert set(gg["unsupported"]) == set(wg["unsupported"]), name
            assert gg["nominal"] == wg["nominal"], name
            assert gg["uuid"] == wg["uuid"]
        # A replayed trace cycles, so a counter falls back at the wrap and that tick's rate
        # is null (as on a real reset); every other supported value is always there.
        rates = {c for c in protocol.COLUMN_NAMES if c.endswith("_bps") or c.startswith("viol_")}
        for col in protocol.COLUMN_NAMES:
            if col in got["hello"]["gpus"][0]["unsupported"]:
                continue
            values = [tick[0][protocol.ROW_POS[col]] for tick in rows]
            if col in rates:
                assert any(v is not None for v in values), (name, col)
            else:
                assert all(v is not None for v in values), (name, col)

        # The profiles' pids are "this process": the recorder's, then; the rest must match.
        def shape(procs: list) -> list:
            return sorted((p["gpu"], p["type"], p["mem_bytes"] or 0) for p in procs)

        assert shape(got["procs"]) == shape(want["procs"])
