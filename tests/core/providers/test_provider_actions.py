"""A rule's provider action through the real ActionRunner (grace, cancel, audit) against a
local server speaking the provider's API: stop once per alert (persisted), terminate only
opted in, nothing when the instance's watchdog is armed; billing follows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpufleet.core.alerts.actions import (
    CANCELLED,
    RAN,
    SKIPPED,
    ActionError,
    ActionRunner,
    ActionSpec,
)
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import Alert
from gpufleet.core.providers.actions import (
    FileActionRecord,
    ProviderActions,
    run_provider_hook,
    watchdog_armed,
)
from gpufleet.core.providers.base import Provider
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.lambda_cloud import LambdaCloud
from gpufleet.core.providers.vast import Vast
from gpufleet.core.providers.watchdog import current_state
from gpufleet.core.wire.messages import Hello, parse_object
from gpufleet_sampler import protocol

from tests.support.provider_payloads import LAMBDA_INSTANCES, VAST_INSTANCES
from tests.support.provider_server import ProviderServer, Reply, serve

FAST = HttpSettings(read_timeout_s=2.0, retries=1, backoff_s=0.05)
VAST_HOST = HostConfig(name="v", host="ssh5.vast.ai", provider="vast", provider_id="4242001")
LAMBDA_ID = LAMBDA_INSTANCES["data"][0]["id"]
LAMBDA_HOST = HostConfig(name="l", host="198.51.100.2", provider="lambda", provider_id=LAMBDA_ID)


def alert(aid: str = "idle_billed:v:1", host: str = "v") -> Alert:
    return Alert(
        id=aid,
        rule_id="idle_billed",
        severity="warning",
        host=host,
        gpu=None,
        state="firing",
        started_t=1.7e9,
        ended_t=None,
        evidence={},
        condition="idle_billed",
    )


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    yield from serve()


class Harness:
    def __init__(self, server: ProviderServer, record_path: Path, armed: bool = False) -> None:
        self.audit: list[dict[str, Any]] = []
        self.billing: list[tuple[str, str]] = []
        hosts = {h.name: h for h in (VAST_HOST, LAMBDA_HOST)}

        def opener(name: str) -> Provider:
            cls = {"vast": Vast, "lambda": LambdaCloud}[name]
            return cls("k", server.url, FAST)

        self.sync = ProviderActions(
            hosts.get,
            FileActionRecord(record_path),
            opener=opener,
            on_billing=lambda h, st: self.billing.append((h, st)),
        )
        run_provider = run_provider_hook(
            hosts.get,
            lambda h: hello(armed),
            on_billing=lambda h, st: self.billing.append((h, st)),
            record=FileActionRecord(record_path),
            opener=opener,
        )

        self.runner = ActionRunner(audit=self.audit.append, run_provider=run_provider)

    def fire(self, a: Alert, **spec: Any) -> Any:
        (run,) = self.runner.on_alert(a, ({"type": "provider", "command": "stop", **spec},))
        return run


def test_stop_runs_once_per_alert_even_after_a_restart(server, tmp_path) -> None:
    server.route("PUT", "/api/v0/instances/4242001/", Reply(200, {"success": True}))
    record = tmp_path / "actions.json"
    h = Harness(server, record)
    run = h.fire(alert(), grace_s=0.05)
    done = h.runner.wait(run.id, 10)
    assert done is not None and done.state == RAN, done
    (call,) = server.seen
    assert (call.method, call.body) == ("PUT", {"state": "stopped"})
    assert "the disk keeps costing storage" in h.audit[-1]["output"]
    assert h.billing == [("v", "storage")]
    # The app restarts and the same alert comes back from history: not stopped again.
    h2 = Harness(server, record)
    done = h2.runner.wait(h2.fire(alert(), grace_s=0.0).id, 10)
    assert done is not None and done.state == SKIPPED
    assert "already done for this alert" in done.output
    assert len(server.seen) == 1
    # A new alert (idle again later) may act again.
    done = h2.runner.wait(h2.fire(alert("idle_billed:v:2"), grace_s=0.0).id, 10)
    assert done is not None and done.state == RAN and len(server.seen) == 2


def test_cancel_in_the_grace_period_sends_nothing(server, tmp_path) -> None:
    h = Harness(server, tmp_path / "a.json")
    run = h.fire(alert(), grace_s=30)
    assert h.runner.cancel(run.id)
    done = h.runner.wait(run.id, 10)
    assert done is not None and done.state == CANCELLED and server.seen == []


def test_left_to_an_armed_watchdog(server, tmp_path) -> None:
    h = Harness(server, tmp_path / "a.json", armed=True)
    done = h.runner.wait(h.fire(alert(), grace_s=0).id, 10)
    assert done is not None and done.state == SKIPPED and "watchdog" in done.output
    assert server.seen == []


def test_lambda_has_no_stop_terminate_only_opted_in(server, tmp_path) -> None:
    h = Harness(server, tmp_path / "a.json")
    done = h.runner.wait(h.fire(alert(host="l"), grace_s=0).id, 10)
    assert done is not None and done.state == "failed"
    assert "Lambda has no stop, only terminate" in done.output and server.seen == []
    server.route(
        "POST",
        "/api/v1/instance-operations/terminate",
        Reply(200, {"data": {"terminated_instances": [{"id": LAMBDA_ID}]}}),
    )
    done = h.runner.wait(h.fire(alert(host="l"), grace_s=0, allow_terminate=True).id, 10)
    assert done is not None and done.state == RAN, done
    assert server.seen[-1].body == {"instance_ids": [LAMBDA_ID]}
    assert "persistent filesystems survive" in done.output
    assert h.billing == [("l", "ended")]


def test_action_specs_are_checked() -> None:
    with pytest.raises(ActionError, match="needs allow_terminate = true"):
        ActionSpec.from_mapping({"type": "provider", "command": "terminate"})
    with pytest.raises(ActionError, match="'stop' or 'terminate'"):
        ActionSpec.from_mapping({"type": "provider", "command": "reboot"})
    spec = ActionSpec.from_mapping(
        {"type": "provider", "command": "terminate", "allow_terminate": True}
    )
    assert spec.allow_terminate


BASE_HELLO = {
    "kind": "hello",
    "protocol": 1,
    "sampler_version": "x",
    "run_id": "r",
    "backend": "sim",
    "interval_s": 1.0,
    "columns": protocol.hello_columns(),
    "host": {},
    "gpus": [],
}


def hello(armed: bool, phase: str = "pending") -> Hello:
    obj = {**BASE_HELLO, "watchdog": {"armed": True, "phase": phase}} if armed else BASE_HELLO
    h = parse_object(obj)
    assert isinstance(h, Hello)
    return h


def test_watchdog_armed_is_read_from_hello() -> None:
    assert not watchdog_armed(hello(False)) and not watchdog_armed(None)
    assert watchdog_armed(hello(True))
    assert not watchdog_armed(hello(True, "done"))  # acted already: a new alert is ours again


def test_sync_fleet_one_list_per_provider(server, tmp_path) -> None:
    server.route("GET", "/api/v1/instances/", Reply(200, VAST_INSTANCES))
    server.route("GET", "/api/v1/instances", Reply(200, {"data": []}))
    h = Harness(server, tmp_path / "a.json")
    stopped = HostConfig(name="s", host="ssh7.vast.ai", provider="vast", provider_id="4242002")
    local = HostConfig(name="plain", host="box")
    got = h.sync.sync_fleet([VAST_HOST, stopped, LAMBDA_HOST, local])
    assert {k: o.billing for k, o in got.items()} == {
        "v": "running",
        "s": "storage",
        "l": "ended",  # no longer listed by Lambda
    }
    assert sorted(h.billing) == [("l", "ended"), ("s", "storage"), ("v", "running")]
    assert [c.path for c in server.seen] == ["/api/v1/instances/", "/api/v1/instances"]


def test_current_watchdog_state_from_hello_and_events() -> None:
    h = hello(True)
    assert current_state(hello(False), []) is None
    assert current_state(h, [])["phase"] == "pending"
    done = parse_object(
        {
            "kind": "event",
            "seq": 5,
            "t": 1.7e9,
            "type": "watchdog",
            "gpu": None,
            "code": None,
            "message": "done: HTTP 200",
            "phase": "done",
            "action": "provider",
            "ok": True,
            "outcome": "HTTP 200",
        },
        h,
    )
    st = current_state(h, [done])
    assert st is not None and st["phase"] == "done" and st["acted"]["outcome"] == "HTTP 200"
