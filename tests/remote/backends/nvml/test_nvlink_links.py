"""Per-link NVLink (``links`` messages): the NVML backend through the fake pynvml (h100x8:
18 links, rates = counter deltas / interval), none from the RTX 4090 profile or the real H200
trace (per-link calls NotSupported there, and hello says why), the sim's ecc-xid scenario with
one link down, the daemon ring, and the sampler exporter's per-link series (promtool-checked).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from typing import Any

import pytest
from gpufleet.core.wire.messages import Hello, Links, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.exporter import MetricsState
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.ring import Ring

from tests.support.nvml_fake import PROFILES, ROOT, fake_env, fake_nvml, profile

# Exact values: no tier stretched by the fake's own Python timed on a loaded machine.
pytestmark = pytest.mark.usefixtures("generous_budget")

# h100x8.json: every link's TX and RX KiB counters ramp by 8138020 KiB per second.
LINK_KIB_PER_S = 8138020


def _run_nvml(prof: str, ticks: int, medium_s: float = 5.0) -> list[dict[str, Any]]:
    """The loop on the NVML backend over ``ticks`` 1-s ticks of the fake's clock."""
    msgs: list[dict[str, Any]] = []
    with fake_nvml(prof) as fake:
        fake._fake.set_time(0.0)
        b = NvmlBackend(interval=1.0, medium_s=medium_s, events=False)
        try:
            s = Sampler(b, 1.0, procs_interval=1e9)
            msgs.append(s.hello())
            for k in range(1, ticks + 1):
                fake._fake.set_time(float(k))
                msgs.extend(s.step(float(k), 1.7e9 + k))
        finally:
            b.close()
    return msgs


def _links(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in msgs if m["kind"] == protocol.KIND_LINKS]


def test_h100x8_links_rows_carry_per_link_rates_states_and_speeds() -> None:
    msgs = _run_nvml("h100x8", 12)
    hello = msgs[0]
    assert [c["name"] for c in hello["link_columns"]] == list(protocol.LINK_COLUMN_NAMES)
    assert hello["links_interval_s"] == 5.0
    assert all(protocol.LINKS_UNSUPPORTED_KEY not in g for g in hello["gpus"])
    links = _links(msgs)
    # The first tick sends the probe's read (states and speeds, no rates yet), then one per 5 s.
    assert len(links) == 3
    first, later = links[0], links[1:]
    assert len(first["gpus"]) == 8
    assert all(v is None for r in first["gpus"] for v in r[protocol.LINK_POS["tx_bps"]])
    want = LINK_KIB_PER_S * 1024  # B/s: the KiB counter's delta over the 5 s interval
    for m in later:
        for row in m["gpus"]:
            tx, rx = row[protocol.LINK_POS["tx_bps"]], row[protocol.LINK_POS["rx_bps"]]
            assert len(tx) == len(rx) == 18
            assert all(abs(v - want) <= 1024 for v in tx + rx), (tx, rx)
            assert row[protocol.LINK_POS["up"]] == [1] * 18
            assert row[protocol.LINK_POS["speed_bps"]] == [25_000_000_000] * 18
    # 18 links of a GPU every 5 s: about 130 bytes per GPU per second on the wire.
    assert len(protocol.encode(later[0])) / 8 / 5.0 < 150


def test_a_link_counter_that_goes_down_gives_null_and_a_down_link_reads_zero() -> None:
    p = profile("h100x8")
    while len(p["gpus"]) < 4:
        p["gpus"].append({})
    p["gpus"][3]["field:138:7"] = {"seq": [10_000_000, 100, 200, 300, 400, 500], "cycle": False}
    p["gpus"][3]["field:165:2"] = 0
    msgs = _run_nvml(p, 6, medium_s=5.0)
    row = next(r for r in _links(msgs)[-1]["gpus"] if r[0] == 3)
    assert row[protocol.LINK_POS["tx_bps"]][7] is None  # wrapped / reset: null, never < 0
    assert row[protocol.LINK_POS["tx_bps"]][6] is not None
    assert row[protocol.LINK_POS["up"]][2] == 0
    assert row[protocol.LINK_POS["up"]].count(1) == 17


@pytest.mark.parametrize("prof", ["rtx4090x2", "h200x1"])
def test_no_nvlink_no_links_messages_and_hello_says_why(prof: str) -> None:
    msgs = _run_nvml(prof, 11)
    assert _links(msgs) == []
    for g in msgs[0]["gpus"]:
        why = g[protocol.LINKS_UNSUPPORTED_KEY]
        assert why.startswith("NotSupported") and "field 91" in why
    if prof == "h200x1":
        # The real H200 (docs/device/h200-nvlink-probe.json): the link count itself is
        # NotSupported, so not one per-link call is made on the medium tier.
        assert "NVLink" in msgs[0]["gpus"][0][protocol.LINKS_UNSUPPORTED_KEY]


ARGS = ("stream", "--backend", "nvml", "--count", "2", "--interval", "0.05")


def test_stream_subprocess_links_parse_with_the_decoder() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", *ARGS],
        env=fake_env(PROFILES / "h100x8.json", tick_s=0.05),
        cwd=str(ROOT),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr.decode()
    dec = StreamDecoder()
    msgs = dec.feed_many(res.stdout.splitlines())
    assert dec.bad_lines == 0, dec.last_error
    assert isinstance(msgs[0], Hello)
    (links,) = [m for m in msgs if isinstance(m, Links)]
    assert [r.gpu for r in links.rows] == list(range(8))
    assert all(r.n_links == 18 and r.up == (1,) * 18 for r in links.rows)


def test_sim_ecc_xid_has_one_link_down_and_its_traffic_on_the_others() -> None:
    b = SimBackend("ecc-xid", seed=0, interval=1.0)
    try:
        s = Sampler(b, 1.0, procs_interval=1e9)
        msgs: list[dict[str, Any]] = []
        for k in range(16):
            msgs.extend(s.step(100.0 + k, 1.7e9 + k))
    finally:
        b.close()
    links = _links(msgs)
    assert len(links) == 4  # the first tick, then every 5 s
    for m in links:
        downs = [
            (r[0], k)
            for r in m["gpus"]
            for k, up in enumerate(r[protocol.LINK_POS["up"]])
            if not up
        ]
        assert downs == [(1, 5)]
        row1 = next(r for r in m["gpus"] if r[0] == 1)
        row0 = next(r for r in m["gpus"] if r[0] == 0)
        tx1, tx0 = row1[protocol.LINK_POS["tx_bps"]], row0[protocol.LINK_POS["tx_bps"]]
        assert tx1[5] == 0
        # The same GPU total, spread over 11 links instead of 12.
        assert sum(tx1) == pytest.approx(sum(tx0), rel=0.01)
    samples = [m for m in msgs if m["kind"] == protocol.KIND_SAMPLE]
    up = protocol.ROW_POS["nvlink_up"]
    assert {r[0]: r[up] for r in samples[-1]["gpus"]} == {0: 12, 1: 11, 2: 12, 3: 12}


def test_sim_links_are_deterministic_under_a_seed() -> None:
    def run(seed: int) -> list[Any]:
        b = SimBackend("healthy-8xa100", seed=seed, interval=1.0)
        try:
            s = Sampler(b, 1.0, procs_interval=1e9, run_id="x")
            return [m for k in range(11) for m in s.step(float(k), 1.7e9 + k)]
        finally:
            b.close()

    assert _links(run(3)) == _links(run(3))
    assert _links(run(3)) != _links(run(4))


def test_ring_holds_links_raw_and_drops_them_from_the_day_tier() -> None:
    r = Ring(interval=1.0, raw_samples=4, downsample=1, compress=False)
    seq = 0
    for k in range(10):
        seq += 1
        r.append(seq, float(k), "sample", b"s\n")
        if k % 5 == 0:
            seq += 1
            r.append(seq, float(k), "links", b"l\n")
    lines, _ = r.since(0)
    assert lines.count(b"l\n") == 1  # the one still in the raw tier (k = 5); k = 0 dropped
    assert lines.count(b"s\n") == 10  # samples thinned (downsample 1 keeps every one)


def test_exporter_has_per_link_series_and_promtool_accepts_them(tmp_path: Any) -> None:
    b = SimBackend("ecc-xid", seed=0, interval=1.0)
    try:
        s = Sampler(b, 1.0)
        state = MetricsState("node-1")
        state.set_hello(s.hello())
        for k in range(3):
            state.update(s.step(float(k), time.time() + k))
    finally:
        b.close()
    text = state.render().decode()
    for name in (
        "gpufleet_nvlink_link_tx_bytes_per_second",
        "gpufleet_nvlink_link_rx_bytes_per_second",
        "gpufleet_nvlink_link_up",
        "gpufleet_nvlink_link_nominal_bytes_per_second",
    ):
        assert text.count(f"# TYPE {name} gauge\n") == 1
        assert text.count(f"# HELP {name} ") == 1
    up = [ln for ln in text.splitlines() if ln.startswith("gpufleet_nvlink_link_up{")]
    assert len(up) == 4 * 12
    down = [ln for ln in up if ln.endswith(" 0")]
    assert len(down) == 1 and 'gpu="1"' in down[0] and 'link="5"' in down[0]
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("needs Debian's prometheus package (promtool)")
    res = subprocess.run(
        [promtool, "check", "metrics"], input=text.encode(), capture_output=True, check=False
    )
    out = (res.stdout + res.stderr).decode()
    # Exit 1 = the exposition does not parse; 3 = lint findings only. dcgm-exporter's own
    # label names (UUID, modelName, Hostname) are camelCase on purpose (dashboards match
    # them): that lint is expected, anything else about the per-link families is not.
    assert res.returncode in (0, 3), out
    mine = [ln for ln in out.splitlines() if "gpufleet_nvlink_link" in ln]
    assert all("snake_case" in ln for ln in mine), mine
