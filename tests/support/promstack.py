"""A real Prometheus for tests, and the two gpufleet exporters as real processes.

``Prometheus(workdir, jobs, rule_files)`` writes a config (scrape and evaluation every second),
starts Debian's ``/usr/bin/prometheus`` on a free loopback port with its TSDB in ``workdir``,
and waits until it is ready. ``query`` / ``alerts`` / ``wait_for`` talk to its HTTP API.

``start_sampler_exporter`` runs ``python -m gpufleet_sampler exporter`` (sim backend) and
``start_fleet_exporter`` runs ``gpufleet serve-metrics`` on a config of local sim hosts; both
on port 0, reading the bound URL from their first stdout line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def have_prometheus() -> bool:
    return os.access(PROMETHEUS, os.X_OK)


def have_promtool() -> bool:
    return os.access(PROMTOOL, os.X_OK)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return bytes(r.read())


def wait_until(cond: Callable[[], Any], timeout: float, what: str, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = cond()
        except Exception as e:  # not ready yet
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


class Prometheus:
    def __init__(
        self,
        workdir: Path,
        jobs: Mapping[str, Sequence[str]],
        rule_files: Sequence[Path] = (),
        metric_relabel: Mapping[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        lines = [
            "global:",
            "  scrape_interval: 1s",
            "  scrape_timeout: 900ms",
            "  evaluation_interval: 1s",
        ]
        if rule_files:
            lines.append("rule_files:")
            lines += [f"  - {json.dumps(str(p))}" for p in rule_files]
        lines.append("scrape_configs:")
        for job, targets in jobs.items():
            lines += [
                f"  - job_name: {json.dumps(job)}",
                "    static_configs:",
                f"      - targets: {json.dumps(list(targets))}",
            ]
            if metric_relabel and job in metric_relabel:
                # The fleet exporter serves many hosts from one target: the host becomes
                # the instance, as docs/prometheus.md recommends.
                lines += [
                    "    metric_relabel_configs:",
                    f"      - source_labels: [{metric_relabel[job]}]",
                    "        regex: (.+)",
                    "        target_label: instance",
                ]
        self.config = workdir / "prometheus.yml"
        self.config.write_text("\n".join(lines) + "\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Prometheus:
        log = open(self.workdir / "prometheus.log", "wb")  # noqa: SIM115 - closed in stop()
        self._log = log
        self.proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={self.config}",
                f"--storage.tsdb.path={self.workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
        )
        wait_until(self._ready, 30, "prometheus to be ready")
        return self

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"prometheus exited: {self.log_text()[-2000:]}")
        return http_get(f"{self.url}/-/ready", 1.0).startswith(b"Prometheus")

    def log_text(self) -> str:
        return (self.workdir / "prometheus.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if hasattr(self, "_log"):
            self._log.close()

    def api(self, path: str, **params: str) -> Any:
        q = urllib.parse.urlencode(params)
        doc = json.loads(http_get(f"{self.url}{path}?{q}"))
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        return list(self.api("/api/v1/query", query=expr)["result"])

    def alerts(self) -> list[dict[str, Any]]:
        return list(self.api("/api/v1/alerts")["alerts"])

    def targets_up(self) -> dict[str, str]:
        active = self.api("/api/v1/targets")["activeTargets"]
        return {t["labels"]["job"]: t["health"] for t in active}


class Exporter:
    """A child process serving /metrics; ``url`` from its first stdout line."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("serving "):
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            self.proc.kill()
            raise AssertionError(f"exporter did not start: {line!r} {err[-2000:]}")
        self.url = line.split()[1]
        self.target = urllib.parse.urlsplit(self.url).netloc

    def metrics(self) -> str:
        return http_get(self.url).decode()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()
        return int(self.proc.returncode)


def base_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "remote"), str(ROOT / "gui")])
    return env


def start_sampler_exporter(
    home: Path, scenario: str, seed: int = 1, interval: float = 0.5, hostname: str = "sim-node"
) -> Exporter:
    argv = [
        sys.executable,
        "-m",
        "gpufleet_sampler",
        "exporter",
        "--backend",
        "sim",
        "--scenario",
        scenario,
        "--seed",
        str(seed),
        "--interval",
        str(interval),
        "--hostname",
        hostname,
        "--listen",
        "127.0.0.1:0",
    ]
    return Exporter(argv, base_env(home), home)


SIM_HOSTS = (
    # (name, scenario, seed, price per hour)
    ("h100-sim", "thermal-throttle-h100", 2, 2.99),
    ("4090-sim", "power-capped-4090", 3, 1.58),
)


def write_fleet_config(config_dir: Path, hosts: Sequence[tuple[str, str, int, float]]) -> None:
    lines = ["schema_version = 1", ""]
    for name, scenario, seed, price in hosts:
        lines += [
            "[[hosts]]",
            f'name = "{name}"',
            'host = "localhost"',
            'transport = "local"',
            'backend = "sim"',
            f'scenario = "{scenario}"',
            f"seed = {seed}",
            "interval_s = 0.5",
            f"price_per_hour = {price}",
            "",
        ]
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.toml").write_text("\n".join(lines))


def fleet_env(home: Path) -> dict[str, str]:
    env = base_env(home)
    env["GPUFLEET_CONFIG_DIR"] = str(home / "config")
    env["GPUFLEET_DATA_DIR"] = str(home / "data")
    return env


def start_fleet_exporter(home: Path) -> Exporter:
    argv = [
        sys.executable,
        "-m",
        "gpufleet",
        "serve-metrics",
        "--listen",
        "127.0.0.1:0",
        "--no-health-check",
    ]
    return Exporter(argv, fleet_env(home), home)


def stop_sim_daemons(home: Path, hosts: Sequence[tuple[str, str, int, float]]) -> None:
    """The local sim hosts' sampler daemons (detached, under HOME) stop with the test."""
    for _name, scenario, seed, _price in hosts:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gpufleet_sampler",
                "stop",
                "--backend",
                "sim",
                "--scenario",
                scenario,
                "--seed",
                str(seed),
                "--interval",
                "0.5",
            ],
            env=base_env(home),
            capture_output=True,
            timeout=30,
            check=False,
        )


def export_rules(home: Path, out: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpufleet",
            "rules",
            "export",
            "--format",
            "prometheus",
            "--out",
            str(out),
        ],
        env=fleet_env(home),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr.decode()
