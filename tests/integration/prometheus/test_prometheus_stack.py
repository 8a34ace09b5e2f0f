"""gpufleet against a real Prometheus (Debian's package): both exporters scraped, Grafana
dashboard 12239's queries, exported rules evaluated to firing, and the Prometheus data source
reading back what was scraped from the simulated GPUs.

One Prometheus (scrape and evaluation every second) serves the whole module: the sampler's
exporter on an 8× H100 sim, and ``gpufleet serve-metrics`` on two local sim hosts (8× H100,
2× RTX 4090), with the user's rules lowering a threshold so that a rule fires on sim data.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from gpufleet.core.fleet.events import HostStatus
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.prometheus.source import (
    PromClient,
    PromError,
    PromPoller,
    PromSource,
    PromSourceConfig,
)

from tests.support import promstack
from tests.support.promstack import (
    SIM_HOSTS,
    Exporter,
    Prometheus,
    export_rules,
    start_fleet_exporter,
    start_sampler_exporter,
    stop_sim_daemons,
    wait_until,
    write_fleet_config,
)

pytestmark = pytest.mark.skipif(
    not promstack.have_prometheus(),
    reason="needs Debian's prometheus package (/usr/bin/prometheus)",
)

# Lowered so that it fires on the sim's ~60 °C GPUs at once (slowdown 87-90 °C).
USER_RULES = """
[rules.temp_near_slowdown]
for_s = 0
clear_for_s = 0
params = { margin_c = 80.0 }
"""

H100_GPUS = 8
GPUS = {"sim-node": 8, "h100-sim": 8, "4090-sim": 2}


@dataclass
class Stack:
    home: Path
    sampler: Exporter
    fleet: Exporter
    prom: Prometheus
    rules: Path


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("promstack")
    write_fleet_config(home / "config", SIM_HOSTS)
    (home / "config" / "rules.toml").write_text(USER_RULES)
    rules = home / "gpufleet-rules.yml"
    export_rules(home, rules)
    started: list[Exporter] = []
    prom: Prometheus | None = None
    try:
        sampler = start_sampler_exporter(home, "thermal-throttle-h100", seed=1, hostname="sim-node")
        started.append(sampler)
        fleet = start_fleet_exporter(home)
        started.append(fleet)
        (home / "prom").mkdir()
        prom = Prometheus(
            home / "prom",
            {"gpufleet-sampler": [sampler.target], "gpufleet-fleet": [fleet.target]},
            [rules],
            metric_relabel={"gpufleet-fleet": "Hostname"},
        ).start()
        p = prom
        wait_until(
            lambda: (
                p.query("count(DCGM_FI_DEV_GPU_TEMP)")
                and float(p.query("count(DCGM_FI_DEV_GPU_TEMP)")[0]["value"][1])
                == sum(GPUS.values())
            ),
            45,
            "every GPU of both exporters in Prometheus",
        )
        yield Stack(home, sampler, fleet, prom, rules)
    finally:
        if prom is not None:
            prom.stop()
        for e in reversed(started):
            e.stop()
        stop_sim_daemons(home, SIM_HOSTS)


def _values(result: list[dict]) -> list[float]:
    return [float(r["value"][1]) for r in result]


# --- dashboard 12239 ------------------------------------------------------------------------

PANELS = (
    # (expr, plausible range, only on GPUs that report it)
    ("DCGM_FI_DEV_GPU_TEMP", (20.0, 110.0)),
    ("DCGM_FI_DEV_POWER_USAGE", (20.0, 1000.0)),
    ("DCGM_FI_DEV_SM_CLOCK * 1000000", (2e8, 3e9)),  # Hz
    ("DCGM_FI_DEV_GPU_UTIL", (0.0, 100.0)),
    ("DCGM_FI_DEV_FB_USED", (0.0, 81920.0)),  # MiB
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", (0.0, 1.0)),  # ratio
)


def _with_vars(expr: str, instances: list[str], gpus: list[str]) -> str:
    """The panel query as Grafana sends it with "All" selected for both variables."""
    inst = "|".join(re.escape(i).replace("\\", "\\\\") for i in instances)
    sel = f'{{instance=~"{inst}", gpu=~"{"|".join(gpus)}"}}'
    name, _, rest = expr.partition(" ")
    return f"{name}{sel} {rest}".strip()


def test_dashboard_12239_template_variables_and_panels(stack: Stack) -> None:
    prom = stack.prom
    instances = prom.api("/api/v1/label/instance/values", **{"match[]": "DCGM_FI_DEV_GPU_TEMP"})
    assert set(instances) == {stack.sampler.target, "h100-sim", "4090-sim"}
    gpus = prom.api("/api/v1/label/gpu/values", **{"match[]": "DCGM_FI_DEV_GPU_TEMP"})
    assert sorted(gpus, key=int) == [str(i) for i in range(8)]
    per_instance = {stack.sampler.target: 8, "h100-sim": 8, "4090-sim": 2}
    for expr, (lo, hi) in PANELS:
        result = prom.query(_with_vars(expr, instances, gpus))
        got: dict[str, set[str]] = {}
        for r in result:
            got.setdefault(r["metric"]["instance"], set()).add(r["metric"]["gpu"])
            v = float(r["value"][1])
            assert lo <= v <= hi, (expr, r["metric"], v)
        expected = dict(per_instance)
        if "TENSOR" in expr:
            # RTX 4090s have no GPM: no series at all (a null is omitted, never 0).
            del expected["4090-sim"]
        assert {k: len(v) for k, v in got.items()} == expected, expr
        assert len(result) == sum(expected.values()), f"{expr}: one series per GPU"


def test_names_labels_and_units_match_dcgm_exporter(stack: Stack) -> None:
    text = stack.sampler.metrics()
    assert "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n" in text
    assert "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("DCGM_FI_DEV_GPU_TEMP{"))
    keys = re.findall(r'(\w+)="', line)
    assert keys[:6] == ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]
    assert 'device="nvidia0"' in line and 'Hostname="sim-node"' in line
    assert 'modelName="NVIDIA H100 80GB HBM3"' in line

    q = stack.prom.query
    sel = '{Hostname="h100-sim"}'
    for r in q(f"DCGM_FI_DEV_POWER_USAGE{sel}"):
        assert 50 < float(r["value"][1]) < 800  # W, not mW
    # MiB: used + free + reserved = total (NVML's v2 split), and total is 80 GiB-ish.
    total = _values(q(f"DCGM_FI_DEV_FB_TOTAL{sel}"))
    assert all(70_000 < t < 100_000 for t in total)
    on = "on (Hostname, gpu)"
    parts = q(
        f"DCGM_FI_DEV_FB_USED{sel} + {on} DCGM_FI_DEV_FB_FREE{sel} "
        f"+ {on} DCGM_FI_DEV_FB_RESERVED{sel} - {on} DCGM_FI_DEV_FB_TOTAL{sel}"
    )
    assert len(parts) == H100_GPUS and all(abs(v) < 1 for v in _values(parts))
    # mJ counter that grows; PROF ratios in 0..1; PROF bytes in B/s.
    assert all(v > 1e3 for v in _values(q(f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{sel}")))
    for name in ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"):
        vals = _values(q(f"{name}{sel}"))
        assert len(vals) == H100_GPUS and all(0 <= v <= 1 for v in vals)
    assert all(v >= 0 for v in _values(q(f"DCGM_FI_PROF_PCIE_RX_BYTES{sel}")))
    # The 4090 lacks HBM temperature: no series, never a 0.
    assert q('DCGM_FI_DEV_MEMORY_TEMP{Hostname="4090-sim"}') == []
    assert len(q('DCGM_FI_DEV_GPU_TEMP{Hostname="4090-sim"}')) == 2
    # One series per reason, 0/1, and the mask agrees with them.
    reasons = q('gpufleet_clock_event_reason{Hostname="4090-sim",gpu="0"}')
    assert {r["metric"]["reason"] for r in reasons} >= {"power_cap", "hw_thermal", "gpu_idle"}
    mask = _values(q('DCGM_FI_DEV_CLOCKS_EVENT_REASONS{Hostname="4090-sim",gpu="0"}'))[0]
    on = {r["metric"]["reason"] for r in reasons if r["value"][1] == "1"}
    assert ("power_cap" in on) == bool(int(mask) & 0x4)
    # Processes with pid / name / user labels.
    procs = q('gpufleet_process_gpu_memory_bytes{Hostname="sim-node"}')
    assert procs and all({"pid", "name", "user"} <= set(r["metric"]) for r in procs)


def test_fleet_exporter_cost_alerts_and_host_state(stack: Stack) -> None:
    q = stack.prom.query
    assert sorted(r["metric"]["Hostname"] for r in q("gpufleet_host_up == 1")) == [
        "4090-sim",
        "h100-sim",
    ]
    cost = wait_until(lambda: q('gpufleet_cost_total{Hostname="h100-sim"} > 0'), 15, "cost")
    assert cost[0]["metric"]["currency"] == "USD"
    rate = q('gpufleet_cost_rate_per_hour{Hostname="4090-sim"}')
    assert float(rate[0]["value"][1]) == pytest.approx(1.58)
    assert q("gpufleet_cost_idle_total")
    # The 4090s' provider cap (300 W of 450 W) is an alert in the app, exported as ALERTS.
    alerts = wait_until(
        lambda: q('gpufleet_alerts{alertname="GpufleetPowerLimitLow",Hostname="4090-sim"}'),
        15,
        "the app's power_limit_low alert",
    )
    m = alerts[0]["metric"]
    assert m["alertstate"] == "firing" and m["severity"] == "warning" and m["gpu"] in ("0", "1")


# --- rules ------------------------------------------------------------------------------------


def test_exported_rules_pass_promtool_and_fire_in_prometheus(stack: Stack) -> None:
    if promstack.have_promtool():
        r = subprocess.run(
            [promstack.PROMTOOL, "check", "rules", str(stack.rules)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 0, r.stdout + r.stderr
    text = stack.rules.read_text()
    assert "DCGM_FI_DEV_SLOWDOWN_TEMP - 80" in text  # the user's lowered threshold

    def firing() -> list[dict]:
        return [
            a
            for a in stack.prom.alerts()
            if a["labels"]["alertname"] == "GpufleetTempNearSlowdown" and a["state"] == "firing"
        ]

    alerts = wait_until(lambda: len(firing()) >= 18 and firing(), 20, "the rule to fire")
    hosts = {a["labels"]["Hostname"] for a in alerts}
    assert hosts == {"sim-node", "h100-sim", "4090-sim"}
    a = next(a for a in alerts if a["labels"]["Hostname"] == "h100-sim")
    assert a["labels"]["severity"] == "warning" and a["labels"]["rule_id"] == "temp_near_slowdown"
    # The catalogue's sentence, with Prometheus' numbers filled in (the query template ran).
    desc = a["annotations"]["description"]
    m = re.search(r"is at (\d+) °C, within 80 °C of its slowdown temperature \((\d+) °C\)", desc)
    assert m, desc
    assert 20 < int(m.group(1)) < int(m.group(2)) <= 95
    assert a["annotations"]["summary"].startswith("h100-sim: GPU ")


# --- Prometheus as a data source --------------------------------------------------------------


def test_promsource_reads_back_the_scraped_history(stack: Stack) -> None:
    src = PromSource(PromClient(stack.prom.url, timeout=5), "prom", interval_s=1.0)
    hellos = src.discover()
    assert {k: len(h.gpus) for k, h in hellos.items()} == GPUS
    h100 = hellos["h100-sim"]
    g0 = h100.gpu(0)
    assert g0 is not None and g0.name == "NVIDIA H100 80GB HBM3" and g0.uuid.startswith("GPU-")
    assert g0.nominal["sm_clock_max_mhz"] == 1980
    assert g0.nominal["mem_total_bytes"] > 70 * 2**30  # MiB back to bytes
    rtx = hellos["4090-sim"].gpu(0)
    assert rtx is not None and "temp_mem_c" in rtx.unsupported  # "metrics the server lacks"
    assert "DCGM_FI_DEV_MEMORY_TEMP" in rtx.unsupported["temp_mem_c"]

    def enough() -> list:
        now = time.time()
        got = src.history(now - 30, now, 1.0).get("h100-sim", [])
        return got if len(got) >= 5 else []

    samples = wait_until(enough, 20, "5 s of scraped history")
    last = samples[-1]
    assert last.columns == h100.columns
    temps = [s.value(5, "temp_gpu_c") for s in samples]
    assert all(t is not None and 20 < t < 110 for t in temps)
    used = last.value(0, "mem_used_bytes")
    assert used is not None and 60 * 2**30 < used < 81 * 2**30  # bytes again
    tensor = last.value(0, "tensor_active_pct")
    assert tensor is not None and 0 <= tensor <= 100  # percent again

    # The tabs plot from the live buffers: fed the same way as from a Fleet.
    live = LiveBuffers(window_s=600)
    live.feed("prom/h100-sim", h100)
    for s in samples:
        live.feed("prom/h100-sim", s)
    series = live.series("prom/h100-sim", 5, "temp_gpu_c")
    finite = [v for v in series.v if not math.isnan(v)]
    assert len(finite) >= 5 and finite[-1] == pytest.approx(temps[-1])

    latest = src.latest()
    assert set(latest) == set(GPUS) and len(latest["4090-sim"].rows) == 2


def test_promsource_down_gives_a_clear_error_not_a_hang() -> None:
    port = promstack.free_port()  # nothing listens here
    client = PromClient(f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(PromError) as e:
        client.query("up")
    assert e.value.kind == "connect"
    assert str(e.value).startswith(f"cannot reach Prometheus at http://127.0.0.1:{port}: ")
    assert "refused" in str(e.value).lower()

    events: list[object] = []
    cfg = PromSourceConfig(name="team", url=f"http://127.0.0.1:{port}", interval_s=0.2)
    poller = PromPoller(cfg, events.append)
    poller.start()
    try:
        wait_until(
            lambda: any(isinstance(ev, HostStatus) and ev.state == "reconnecting" for ev in events),
            10,
            "a reconnecting status",
        )
    finally:
        # It stops (its thread ends) rather than hang on the dead endpoint; the join's
        # timeout is a hang guard only.
        thread = poller._thread
        poller.stop(timeout=60.0)
        assert thread is not None and not thread.is_alive()
    st = next(ev for ev in events if isinstance(ev, HostStatus) and ev.state == "reconnecting")
    assert (
        st.host == "team"
        and st.kind == "connect"
        and "cannot reach Prometheus" in (st.reason or "")
    )
