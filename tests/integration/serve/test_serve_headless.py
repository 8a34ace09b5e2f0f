"""``gpufleet serve`` runs the whole pipeline without a window: a real ``serve`` subprocess on
one local sim host (a real sampler daemon, the SQLite history, a webhook on a local HTTP
server, a real shell action) delivers the webhook of a firing rule and runs its action once;
stopped (SIGTERM) and started again on the same history, it sends and runs neither again.
``/-/ready`` answers 200 while it works. The window passes the same test through the same
builders (tests/ui/app/test_restart.py)."""

from __future__ import annotations

import configparser
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.config.configfile import AppConfig, save_config
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.config.settings import (
    Settings,
    WebhookSetting,
    forget_webhook_url,
    save_settings,
    store_webhook_url,
)
from gpufleet.core.fleet.fleet import Fleet

from tests.support.paths import ROOT
from tests.support.restart_case import firing_posts, write_throttle_rule
from tests.support.webhook_sink import WebhookSink

HOST = HostConfig(
    name="h100-a",
    host="localhost",
    transport="local",
    backend="sim",
    scenario="thermal-throttle-h100",
    seed=1,
    price_per_hour=2.99,
)


def _wait(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()
    except OSError:
        return 0, ""


class Serve:
    """One ``gpufleet serve`` subprocess on a free port; its output kept for the asserts."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.out = log.open("w", encoding="utf-8")
        cmd = [sys.executable, "-m", "gpufleet", "serve", "--listen", "127.0.0.1:0"]
        cmd.append("--no-health-check")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, text=True)
        _wait(lambda: "serving http://" in self.text() or self.proc.poll() is not None, 60, "serve")
        assert self.proc.poll() is None, self.text()
        line = next(x for x in self.text().splitlines() if x.startswith("serving http://"))
        self.base = line.split()[1].removesuffix("/metrics")

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def streaming(self) -> bool:
        code, body = _get(self.base + "/metrics")
        return code == 200 and 'gpufleet_host_up{Hostname="h100-a"} 1' in body

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


@pytest.fixture
def one_sim_host() -> Iterator[HostConfig]:
    """config.toml with one local sim host; its daemon (left sampling by serve, as for a
    real host) stopped at the end."""
    save_config(AppConfig(hosts=[HOST]))
    yield HOST
    Fleet([HOST]).stop_samplers([HOST.name])


def test_serve_notifies_and_acts_once_across_a_restart(
    one_sim_host: HostConfig, webhook_sink: WebhookSink, secret_service: None, tmp_path: Path
) -> None:
    bodies: list[dict[str, Any]] = webhook_sink.bodies
    ran = tmp_path / "ran"
    name = f"serve-hook-{os.getpid()}"
    store_webhook_url(name, webhook_sink.url)
    try:
        save_settings(Settings(webhooks=(WebhookSetting(name, "json", "warning"),)))
        write_throttle_rule(ran)

        first = Serve(tmp_path / "serve-1.log")
        try:
            assert _get(first.base + "/-/ready")[0] == 200
            _wait(
                lambda: firing_posts(bodies) == 1 and ran.exists(),
                120,
                "the webhook and the action",
            )
            _wait(lambda: "action ran: local action" in first.text(), 30, "the action's line")
        finally:
            first.stop()
        assert first.proc.returncode == 0, first.text()
        assert _get(first.base + "/-/ready")[0] == 0  # gone with it

        second = Serve(tmp_path / "serve-2.log")
        try:
            _wait(second.streaming, 60, "the host streaming again")
            # The scenario throttles again from the start: long enough for a second firing,
            # a second post or a second run of the action to have shown up.
            time.sleep(15)
            assert second.proc.poll() is None, second.text()
        finally:
            second.stop()
        assert firing_posts(bodies) == 1, bodies
        assert ran.read_text().splitlines() == ["ran"]
        assert "action ran" not in second.text()
    finally:
        forget_webhook_url(name)


def test_serve_metrics_is_kept_as_a_name_of_serve() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet", "serve-metrics", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "/-/ready" in out.stdout


def test_ready_answers_503_while_not_ready_and_is_absent_without_a_probe() -> None:
    from gpufleet_sampler.metrics_http import make_server

    class State:
        def render(self) -> bytes:
            return b"up 1\n"

    ok = [False]
    probed = make_server(State(), "127.0.0.1", 0, ready=lambda: ok[0])
    plain = make_server(State(), "127.0.0.1", 0)  # the sampler's exporter: no probe
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (probed, plain)]
    for th in threads:
        th.start()
    try:
        url = f"http://127.0.0.1:{probed.server_address[1]}/-/ready"
        assert _get(url) == (503, "not ready\n")
        ok[0] = True
        assert _get(url) == (200, "ready\n")
        assert _get(f"http://127.0.0.1:{plain.server_address[1]}/-/ready")[0] == 404
    finally:
        for s in (probed, plain):
            s.shutdown()
            s.server_close()
        for th in threads:
            th.join(5)


def test_the_systemd_unit_runs_serve_with_arguments_the_cli_takes() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read(ROOT / "packaging" / "systemd" / "gpufleet-serve.service", encoding="utf-8")
    argv = shlex.split(unit["Service"]["ExecStart"])
    assert Path(argv[0]).name == "gpufleet" and argv[1] == "serve"
    assert unit["Install"]["WantedBy"] == "default.target"  # a user unit
    out = subprocess.run(
        [sys.executable, "-m", "gpufleet", *argv[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
