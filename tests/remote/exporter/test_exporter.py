"""The sampler's Prometheus exporter: dcgm-exporter's names from the sim backend, nulls left
out (never 0), Xids and lost GPUs, a scrape that does not wait for a hung driver call, and the
``exporter`` subcommand as a real process (loopback, port 0, clean stop, one-line errors)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from gpufleet_sampler import metric_names as pn
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.nvml import NvmlBackend
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.exporter import MetricsState
from gpufleet_sampler.listen_address import parse_listen
from gpufleet_sampler.loop import Sampler
from gpufleet_sampler.metrics_http import make_server

from tests.support.nvml_fake import fake_nvml
from tests.support.paths import ROOT


def run_sim(scenario: str, seconds: float, seed: int = 1, **kw: Any) -> MetricsState:
    b = SimBackend(scenario=scenario, seed=seed, interval=1.0, **kw)
    try:
        s = Sampler(b, 1.0)
        state = MetricsState("node-1")
        state.set_hello(s.hello())
        t0 = time.time()
        for k in range(int(seconds) + 1):
            state.update(s.step(float(k), t0 + k))
        return state
    finally:
        b.close()


def series(text: str, name: str) -> list[tuple[dict[str, str], str]]:
    out = []
    for line in text.splitlines():
        if line.startswith(name + "{"):
            labels, value = line[len(name) + 1 :].rsplit("} ", 1)
            out.append((dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels)), value))
    return out


def test_every_protocol_column_has_one_prometheus_name() -> None:
    assert set(pn.COLUMN_FAMILY) == set(protocol.COLUMN_NAMES)
    names = [f.name for f in pn.ALL_FAMILIES]
    assert len(names) == len(set(names))
    assert pn.COLUMN_FAMILY["mem_used_bytes"].name == "DCGM_FI_DEV_FB_USED"
    assert pn.COLUMN_FAMILY["tensor_active_pct"].scale == 0.01  # ratio 0..1
    assert pn.COLUMN_FAMILY["energy_j"].scale == 1000.0  # mJ


def test_sim_h100_exposition_has_dcgm_names_labels_and_units() -> None:
    text = run_sim("thermal-throttle-h100", 3).render().decode()
    temps = series(text, "DCGM_FI_DEV_GPU_TEMP")
    assert len(temps) == 8
    labels, _ = temps[0]
    assert list(labels)[:6] == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]
    assert labels["device"] == "nvidia0" and labels["Hostname"] == "node-1"
    # Every family once, HELP before TYPE before its series.
    assert text.count("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n") == 1
    for name in ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE"):
        assert all(0.0 <= float(v) <= 1.0 for _, v in series(text, name))
    assert all(float(v) < 1000 for _, v in series(text, "DCGM_FI_DEV_POWER_USAGE"))  # W
    reasons = series(text, "gpufleet_clock_event_reason")
    assert len(reasons) == 8 * len(protocol.REASON_BITS)
    assert {v for _, v in reasons} <= {"0", "1"}
    procs = series(text, "gpufleet_process_gpu_memory_bytes")
    assert procs and all(p["name"] and p["user"] and p["pid"].isdigit() for p, _ in procs)


def test_a_metric_the_gpu_lacks_is_left_out_never_zero() -> None:
    a100 = run_sim("healthy-8xa100", 2).render().decode()
    assert "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" not in a100  # no GPM before Hopper
    assert "DCGM_FI_DEV_FAN_SPEED" not in a100  # passively cooled
    rtx = run_sim("power-capped-4090", 2).render().decode()
    assert "DCGM_FI_DEV_MEMORY_TEMP" not in rtx and "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" not in rtx
    assert len(series(rtx, "DCGM_FI_DEV_GPU_TEMP")) == 2
    limit = series(rtx, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT")
    assert {v for _, v in limit} == {"300"}
    assert {v for _, v in series(rtx, "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF")} == {"450"}


def test_xid_and_lost_gpu() -> None:
    # ecc-xid 25x fast: GPU 2 gets Xid 48 at 50.4 s and falls off the bus (Xid 79) at 51 s.
    text = run_sim("ecc-xid", 55, time_scale=0.04).render().decode()
    last = series(text, "DCGM_FI_DEV_XID_ERRORS")
    assert [(lab["gpu"], lab["err_code"], v) for lab, v in last] == [("2", "79", "79")]
    codes = {lab["err_code"] for lab, _ in series(text, "gpufleet_xid_errors_total")}
    assert codes == {"48", "79"}
    stamps = series(text, "gpufleet_xid_last_timestamp_seconds")
    assert all(float(v) > 1e9 for _, v in stamps)
    lost = {lab["gpu"]: v for lab, v in series(text, "gpufleet_gpu_lost")}
    assert lost == {"0": "0", "1": "0", "2": "1", "3": "0"}
    # The lost GPU reports nothing else: no series rather than zeros.
    assert "2" not in {lab["gpu"] for lab, _ in series(text, "DCGM_FI_DEV_GPU_TEMP")}


def test_label_values_are_escaped() -> None:
    exp = pn.Exposition()
    exp.add("gpufleet_process_sm_percent", pn.labels([("name", 'a"b\\c\nd')]), 1.5)
    exp.add("gpufleet_process_sm_percent", pn.labels([("name", "x")]), None)
    text = exp.render()
    assert 'name="a\\"b\\\\c\\nd"} 1.5\n' in text
    assert text.count("\n") == 3  # HELP, TYPE, one series


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:9400") == ("127.0.0.1", 9400)
    assert parse_listen(":9400") == ("127.0.0.1", 9400)
    assert parse_listen("[::1]:0") == ("::1", 0)
    for bad in ("9400", "host:port", "1.2.3.4:70000"):
        with pytest.raises(ValueError, match="--listen"):
            parse_listen(bad)


class _GatedSim(SimBackend):
    """A sim whose ticks after the first block until released: a hung driver call."""

    def __init__(self) -> None:
        super().__init__(scenario="healthy-8xa100", seed=1, interval=0.1)
        self.gate = threading.Event()
        self.blocked = threading.Event()
        self.ticks = 0

    def tick(self, mono: float) -> list[list[Any]]:
        self.ticks += 1
        if self.ticks > 1:
            self.blocked.set()
            self.gate.wait(30)
        return super().tick(mono)


def test_a_scrape_never_waits_for_a_hung_sampler() -> None:
    b = _GatedSim()
    state = MetricsState("node-1")
    server = make_server(state, "127.0.0.1", 0)
    http = threading.Thread(target=server.serve_forever, daemon=True)
    http.start()
    sampler = Sampler(b, 0.1)
    state.set_hello(sampler.hello())
    state.update(sampler.step(0.0, time.time()))
    hung = threading.Thread(target=lambda: state.update(sampler.step(0.1, time.time())))
    hung.start()
    try:
        assert b.blocked.wait(10)
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        with urllib.request.urlopen(url, timeout=5) as r:
            body = r.read().decode()
            assert r.headers["Content-Type"] == pn.CONTENT_TYPE
        assert len(series(body, "DCGM_FI_DEV_GPU_TEMP")) == 8  # the last good tick
    finally:
        b.gate.set()
        hung.join(10)
        server.shutdown()
        server.server_close()
        b.close()


def test_a_keep_alive_scrape_of_one_gpu_answers_without_waiting_for_a_delayed_ack() -> None:
    """Prometheus keeps its connection open. When the headers and a small body went out in
    two sends, the body sat behind Nagle's algorithm until the client's delayed ACK (~40 ms
    a scrape on loopback, measured with 1-2 GPUs); in one send, with TCP_NODELAY, a scrape of
    one GPU is well under a millisecond of network time (bench/exporter.py has the figure).
    Tested by what arrives, not by how long it takes (a loaded machine stalls any scrape):
    on each request of one connection, the first read returns the whole response."""
    with fake_nvml("h200x1"):
        b = NvmlBackend(interval=1.0, events=False)
        try:
            sampler = Sampler(b, 1.0)
            state = MetricsState("node-1")
            state.set_hello(sampler.hello())
            state.update(sampler.step(1.0, time.time()))
        finally:
            b.close()
    server = make_server(state, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as c:
            for _ in range(25):
                c.sendall(b"GET /metrics HTTP/1.1\r\nHost: node-1\r\n\r\n")
                first = c.recv(1 << 20)  # one read: what the server's first send carried
                head, _, body = first.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200"), head
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                assert length is not None, head
                assert len(body) == int(length.group(1)), "the body came in a send of its own"
    finally:
        server.shutdown()
        server.server_close()
    assert len(series(body.decode(), "DCGM_FI_DEV_GPU_TEMP")) == 1


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "remote")
    return env


def test_exporter_subcommand_serves_and_stops_cleanly() -> None:
    p = subprocess.Popen(
        [sys.executable, "-m", "gpufleet_sampler", "exporter", "--backend", "sim",
         "--scenario", "power-capped-4090", "--interval", "0.2", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    try:
        assert p.stdout is not None
        line = p.stdout.readline().decode()
        m = re.match(r"serving (http://127\.0\.0\.1:(\d+)/metrics)\n", line)
        assert m, line
        with urllib.request.urlopen(m.group(1), timeout=5) as r:
            assert r.status == 200
            assert len(series(r.read().decode(), "DCGM_FI_DEV_SM_CLOCK")) == 2
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(m.group(1).replace("/metrics", "/nope"), timeout=5)
        assert e.value.code == 404
        port = int(m.group(2))
        # The same port again: one clear line, exit 2.
        r2 = subprocess.run(
            [sys.executable, "-m", "gpufleet_sampler", "exporter", "--backend", "sim",
             "--scenario", "power-capped-4090", "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, env=_env(), timeout=60,
        )  # fmt: skip
        assert r2.returncode == 2
        assert r2.stderr.strip().startswith("gpufleet_sampler: cannot listen on 127.0.0.1:")
        assert "Traceback" not in r2.stderr
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(30)
        err = p.stderr.read().decode() if p.stderr else ""
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
    assert rc == 0 and "Traceback" not in err
    # The port is free again (as a server binds it: TIME_WAIT connections allowed).
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_exporter_bad_listen_is_one_line() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "gpufleet_sampler", "exporter", "--backend", "sim",
         "--scenario", "healthy-8xa100", "--listen", "nonsense"],
        capture_output=True, text=True, env=_env(), timeout=60,
    )  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "--listen 'nonsense'" in r.stderr
