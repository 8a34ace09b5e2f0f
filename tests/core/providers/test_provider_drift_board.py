"""Drift found by a provider call stays on the host until a later call for it succeeds: the
billing sync's list and a rule's stop against a local server that answers 410 Gone where the
adapter's endpoints were retired, then answers again; an outage in between changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpufleet.core.alerts.actions import RAN, ActionRunner
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.providers.actions import FileActionRecord, ProviderActions, run_provider_hook
from gpufleet.core.providers.base import Provider, ProviderError
from gpufleet.core.providers.drift_board import DriftBoard
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.vast import Vast

from tests.core.providers.test_provider_actions import alert, hello
from tests.support.provider_payloads import VAST_INSTANCES
from tests.support.provider_server import ProviderServer, Reply, serve

FAST = HttpSettings(read_timeout_s=2.0, retries=0, backoff_s=0.01)
V = HostConfig(name="v", host="ssh5.vast.ai", provider="vast", provider_id="4242001")
S = HostConfig(name="s", host="ssh7.vast.ai", provider="vast", provider_id="4242002")
STOP = "/api/v0/instances/4242001/"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    # vast's v1 list and its v0 fallback both retired, and the stop endpoint of instance v.
    yield from serve(retired=("/api/v1/instances/", "/api/v0/instances/", STOP))


def _sync(server: ProviderServer, board: DriftBoard, path: Path) -> ProviderActions:
    def opener(name: str) -> Provider:
        return Vast("k", server.url, FAST)

    return ProviderActions(
        {h.name: h for h in (V, S)}.get,
        FileActionRecord(path),
        opener=opener,
        on_drift=board.report,
        sleep=lambda s: None,
    )


def test_a_sync_that_meets_a_retired_list_says_so_on_each_host_until_one_succeeds(
    server: ProviderServer, tmp_path: Path
) -> None:
    board = DriftBoard()
    sync = _sync(server, board, tmp_path / "a.json")
    got = sync.sync_fleet([V, S])
    assert all(o.rc == 1 for o in got.values())
    notes = board.sentences()
    assert set(notes) == {"v", "s"}
    assert notes["v"].startswith("vast.ai's API changed (GET /api/v1/instances/: ")
    assert "HTTP 410" in notes["v"] and "gpufleet needs an update" in notes["v"]
    assert "billing is not synced from vast.ai" in notes["v"]
    assert "refused" not in notes["v"] and "key" not in notes["v"]
    # An outage is not drift, nor the end of it: the note stays.
    server.route("GET", "/api/v1/instances/", Reply(503, {"error": "maintenance"}))
    sync.sync_fleet([V, S])
    assert set(board.sentences()) == {"v", "s"}
    # The list answers again: the hosts no longer say it.
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    got = sync.sync_fleet([V, S])
    assert {o.billing for o in got.values()} == {"running", "storage"}
    assert board.sentences() == {}


def test_a_rule_stop_on_a_retired_endpoint_puts_drift_on_its_host(
    server: ProviderServer, tmp_path: Path
) -> None:
    board = DriftBoard()
    record = tmp_path / "a.json"
    run_provider = run_provider_hook(
        {V.name: V}.get,
        lambda h: hello(False),
        record=FileActionRecord(record),
        opener=lambda name: Vast("k", server.url, FAST),
        on_drift=board.report,
    )
    runner = ActionRunner(run_provider=run_provider)
    (run,) = runner.on_alert(alert(), ({"type": "provider", "command": "stop", "grace_s": 0},))
    done = runner.wait(run.id, 10)
    assert done is not None and done.state == "failed" and "API changed" in done.output
    assert len(server.calls("PUT", STOP)) == 1  # drift: never tried again
    (e,) = board.errors().values()
    assert e.kind == "api_changed" and e.drift is not None and e.drift.said.startswith("HTTP 410")
    assert board.sentences()["v"].startswith(f"vast.ai's API changed (PUT {STOP}: HTTP 410: Gone)")
    # Fixed (a new gpufleet, or the endpoint is back): the next stop that works clears it.
    server.route("PUT", STOP, Reply(200, {"success": True}))
    (run,) = runner.on_alert(
        alert("idle_billed:v:2"), ({"type": "provider", "command": "stop", "grace_s": 0},)
    )
    done = runner.wait(run.id, 10)
    assert done is not None and done.state == RAN, done
    assert board.sentences() == {}


def test_errors_of_other_kinds_are_not_drift() -> None:
    board = DriftBoard()
    board.report("h", ProviderError("RunPod: the API key was refused (HTTP 401)", "auth", 401))
    board.report("h", ProviderError("RunPod: list: the provider failed (HTTP 502)", "server"))
    assert board.sentences() == {}
    board.report("h", ProviderError("RunPod: the provider's API changed", "api_changed"))
    assert board.sentences()["h"].startswith("RunPod: the provider's API changed. Until gpufleet")
