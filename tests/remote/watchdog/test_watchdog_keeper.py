"""An armed watchdog survives its daemon being killed: the keeper the daemon starts while
armed starts the daemon again (and the daemon starts the keeper again when the keeper is the
one killed); a deliberate ``stop`` or a disarm ends the keeper, so nothing comes back.

Real parts: a detached sim daemon started by the sampler's own ``daemon`` subcommand, real
SIGKILLs (what the OOM killer sends), the keeper's and the daemon's flocks as the sampler
reads them. A short keeper period (``GPUFLEET_WATCHDOG_KEEP_S``) only makes the waits short;
every wait is for an observed state, never a timed assert."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from gpufleet_sampler.daemon import client, keeper
from gpufleet_sampler.state_dir import lock_holder

from tests.remote.watchdog.test_watchdog import _paths, _start, sampler, sd, wd
from tests.support.waiting import wait_until

__all__ = ["sd"]  # the fixture, shared with test_watchdog

FAST = {"GPUFLEET_WATCHDOG_KEEP_S": "0.2"}


def _status(sd: Path) -> dict[str, Any] | None:
    return client.request(_paths(sd), {"op": "status"})


def _restarted(sd: Path, old_pid: int) -> bool:
    st = _status(sd)
    return st is not None and st["pid"] != old_pid


def _arm(sd: Path) -> float:
    _start(sd, **FAST)
    reply = wd(sd, "arm", "--action", "command", "--command", "true", "--idle-s", "3600")
    assert reply["ok"], reply
    wait_until(lambda: keeper.holder(_paths(sd)) is not None, what="the watchdog's keeper")
    state = json.loads((sd / f"watchdog-{_paths(sd).key}.json").read_text())
    return float(state["armed_t"])


def test_a_killed_daemon_comes_back_armed_and_a_killed_keeper_too(sd: Path) -> None:
    armed_t = _arm(sd)
    p = _paths(sd)
    pid = int(_status(sd)["pid"])  # type: ignore[index]
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: _restarted(sd, pid), what="the daemon started again by the keeper")
    after = _status(sd)
    assert after is not None and after["watchdog"]["phase"] == "watching"
    state = json.loads((sd / f"watchdog-{p.key}.json").read_text())
    assert state["armed_t"] == armed_t  # the same arming, not a new one
    # The keeper killed in turn: the daemon starts another one.
    kpid = keeper.holder(p)
    assert kpid is not None and kpid > 0
    os.kill(kpid, signal.SIGKILL)
    wait_until(
        lambda: keeper.holder(p) not in (None, kpid), what="a new keeper started by the daemon"
    )
    # Disarmed: the keeper leaves by itself; the daemon stays (the laptop may be attached).
    assert wd(sd, "disarm")["ok"]
    wait_until(lambda: keeper.holder(p) is None, what="the keeper to exit after the disarm")
    assert _status(sd) is not None
    log = Path(p.log).read_text()
    assert "the daemon was gone: started it again" in log
    assert "the watchdog is no longer armed: exiting" in log


def test_a_deliberate_stop_is_not_undone(sd: Path) -> None:
    _arm(sd)
    p = _paths(sd)
    r = sampler("stop", "--backend", "sim", "--scenario", "crashed-idle", "--state-dir", str(sd))
    assert r.returncode == 0 and json.loads(r.stdout)["stopped"], r.stdout + r.stderr
    # The daemon ended the keeper before it went: neither is there, so nothing restarts it.
    wait_until(lambda: keeper.holder(p) is None, what="the keeper to go with the stop")
    assert lock_holder(p) is None and _status(sd) is None
    # Still armed on disk: the next daemon (the laptop's next connection) watches again.
    assert wd(sd, "status")["watchdog"]["phase"] == "watching"


def test_no_keeper_while_disarmed(sd: Path) -> None:
    _start(sd, **FAST)
    p = _paths(sd)
    st = _status(sd)
    assert st is not None and st["watchdog"]["phase"] == "disarmed"
    # The daemon's ticks have run (a sample is in the ring) and started no keeper.
    wait_until(lambda: (_status(sd) or {}).get("last_seq", 0) > 5, what="some ticks")
    assert keeper.holder(p) is None
