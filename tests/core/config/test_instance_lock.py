"""One gpufleet per data dir: while the window (or serve) holds it, a second
``gpufleet serve`` refuses with who holds it and what to do, instead of notifying and acting
a second time; the demo's data dir is apart from the real one. And the demo daemons a CLI
command started are stopped when it ends (``stream demo:…`` left one sampling for a day),
while one that was running before it is left to its owner."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from gpufleet.core.config import instance_lock
from gpufleet.core.fleet.demo import demo_host, demo_state_dir
from gpufleet.core.fleet.fleet import Fleet
from gpufleet.core.fleet.localdaemons import running_local_daemons

from tests.support.cli_run import gpufleet
from tests.support.sampler_daemons import Recorder, stop_daemons

pytestmark = pytest.mark.skipif(not instance_lock.LOCKS_SUPPORTED, reason="no flock here")


def test_a_second_serve_on_a_held_data_dir_refuses_with_the_reason() -> None:
    with instance_lock.for_fleet(True, instance_lock.ROLE_WINDOW):
        p = gpufleet("serve", "--demo", "--listen", "127.0.0.1:0")
        assert p.returncode == 1, p.stdout + p.stderr
        assert "Traceback" not in p.stderr and "serving" not in p.stdout
        err = p.stderr.strip()
        assert f"the gpufleet window (pid {os.getpid()}, since " in err, err
        assert "twice" in err and "GPUFLEET_DATA_DIR" in err
        # The real data dir is another one: a real instance may run beside the demo.
        with instance_lock.for_fleet(False, instance_lock.ROLE_SERVE):
            pass
        # In one process too (two windows of one app): flock excludes per open file.
        with pytest.raises(instance_lock.InstanceBusy, match="the gpufleet window"):
            instance_lock.for_fleet(True, instance_lock.ROLE_SERVE).acquire()
    # Released (as at exit, or a kill -9): the next one starts.
    with instance_lock.for_fleet(True, instance_lock.ROLE_SERVE):
        pass


@pytest.fixture
def h100() -> Iterator[None]:
    yield
    h = demo_host("demo:h100-a")
    assert h is not None
    stop_daemons([h], str(demo_state_dir()))


def test_stream_stops_the_demo_daemon_it_started_and_leaves_anothers(h100: None) -> None:
    h = demo_host("demo:h100-a")
    assert h is not None
    p = gpufleet("stream", "demo:h100-a", "--seconds", "3", "--no-record")
    assert p.returncode == 0, p.stderr
    assert running_local_daemons([h], demo_state_dir()) == set()
    # One that runs already (the window's) is not the command's to stop.
    fleet = Fleet([h], demo=True)
    rec = Recorder(fleet.subscribe())
    fleet.start()
    try:
        rec.wait(lambda: bool(running_local_daemons([h], demo_state_dir())), 60, "a daemon")
        p = gpufleet("stream", "demo:h100-a", "--seconds", "2", "--no-record")
        assert p.returncode == 0, p.stderr
        assert running_local_daemons([h], demo_state_dir()) == {h.name}
    finally:
        fleet.stop()
