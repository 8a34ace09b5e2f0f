"""Demo sampler daemons are stopped only by whoever started them: ``gpufleet serve-metrics
--demo`` leaves running the daemons that were running before it (the desktop app's), and stops
its own. Real daemons (sim backend, local transport), a real ``serve-metrics`` subprocess."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import time

from gpufleet.core.fleet.demo import demo_hosts, demo_state_dir
from gpufleet.core.fleet.events import HostMessage
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.fleet.localdaemons import running_local_daemons, started_here
from gpufleet.core.wire.messages import Sample

SERVE = [sys.executable, "-m", "gpufleet", "serve-metrics"]


def _wait(cond: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def test_serve_metrics_leaves_running_the_demo_daemons_it_did_not_start() -> None:
    hosts = demo_hosts()
    other = [h for h in hosts if h.name == "a100-eval"]
    sd = demo_state_dir()
    assert running_local_daemons(hosts, sd) == set()
    # "The desktop app": a fleet that starts one demo daemon and leaves it running.
    fleet = Fleet(other, demo=True)
    q = fleet.subscribe()
    fleet.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                ev = q.get(timeout=1)
            except queue.Empty:
                continue
            if isinstance(ev, HostMessage) and isinstance(ev.msg, Sample):
                break
    finally:
        fleet.stop()
    assert running_local_daemons(hosts, sd) == {"a100-eval"}
    assert started_here(hosts, {"a100-eval"}) == [h.name for h in hosts if h.name != "a100-eval"]

    p = subprocess.Popen(
        [*SERVE, "--demo", "--no-health-check", "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None
        assert p.stdout.readline().startswith("serving http://127.0.0.1:")
        everyone = {h.name for h in hosts}
        assert _wait(lambda: running_local_daemons(hosts, sd) == everyone, 90), (
            running_local_daemons(hosts, sd)
        )
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    try:
        assert running_local_daemons(hosts, sd) == {"a100-eval"}
    finally:
        assert Fleet(other, demo=True).stop_samplers() == {"a100-eval": None}
    assert running_local_daemons(hosts, sd) == set()
