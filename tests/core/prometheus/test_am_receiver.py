"""The Alertmanager webhook receiver: real HTTP on loopback, Alertmanager's version-4 payload,
bearer token (wrong → 401 and nothing shown), and the alerts' sentences in the catalogue."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from gpufleet.core.config import secrets
from gpufleet.core.model.alert import Alert
from gpufleet.core.prometheus.am_receiver import (
    EXTERNAL,
    AlertmanagerReceiver,
    ReceiverError,
    parse_payload,
    parse_time,
)
from gpufleet.core.text import catalogue

from tests.support import keyring_lock

TOKEN = "s3cret-shared-token"


def payload(status: str = "firing", ends: str = "0001-01-01T00:00:00Z") -> dict:
    """What Alertmanager 0.2x POSTs for one of gpufleet's exported rules."""
    return {
        "version": "4",
        "groupKey": '{}:{alertname="GpufleetThermalThrottle"}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "laptop",
        "groupLabels": {"alertname": "GpufleetThermalThrottle"},
        "commonLabels": {"alertname": "GpufleetThermalThrottle", "severity": "warning"},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager.example:9093",
        "alerts": [
            {
                "status": status,
                "labels": {
                    "alertname": "GpufleetThermalThrottle",
                    "rule_id": "thermal_throttle",
                    "severity": "warning",
                    "Hostname": "h100-a",
                    "gpu": "5",
                    "instance": "h100-a:9400",
                },
                "annotations": {
                    "summary": "h100-a: Thermal throttling on GPU 5",
                    "description": "GPU 5 has been slowed by its temperature for 30 s.",
                },
                "startsAt": "2026-03-01T10:00:00.123456789Z",
                "endsAt": ends,
                "generatorURL": "http://prometheus.example:9090/graph?g0.expr=...",
                "fingerprint": "c0ffee1234567890",
            }
        ],
    }


@pytest.fixture
def receiver() -> Iterator[tuple[AlertmanagerReceiver, list[list[Alert]]]]:
    got: list[list[Alert]] = []
    rx = AlertmanagerReceiver(got.append, token=TOKEN, listen="127.0.0.1:0")
    rx.start()
    yield rx, got
    rx.stop()


def post(url: str, body: bytes, token: str | None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_webhook_post_becomes_alerts_for_the_alert_list(receiver: tuple) -> None:
    rx, got = receiver
    assert rx.url.startswith("http://127.0.0.1:") and rx.port != 0
    code, text = post(rx.url, json.dumps(payload()).encode(), TOKEN)
    assert (code, text) == (200, "ok\n")
    assert len(got) == 1 and len(got[0]) == 1
    a = got[0][0]
    assert a.condition == EXTERNAL and a.firing and a.ended_t is None
    assert (a.host, a.gpu, a.severity, a.rule_id) == ("h100-a", 5, "warning", "thermal_throttle")
    assert a.started_t == pytest.approx(1772359200.123456789)
    assert a.evidence["labels"]["instance"] == "h100-a:9400"
    # What the alert list and the tray show: Alertmanager's own words.
    assert catalogue.alert_title(a) == "h100-a: Thermal throttling on GPU 5"
    assert catalogue.alert_sentence(a) == "GPU 5 has been slowed by its temperature for 30 s."

    # The same alert resolved: same id, state and end time set.
    code, _ = post(rx.url, json.dumps(payload("resolved", "2026-03-01T10:05:00Z")).encode(), TOKEN)
    assert code == 200
    r = got[1][0]
    assert r.id == a.id and r.state == "resolved" and r.ended_t == pytest.approx(1772359500.0)


def test_a_wrong_or_missing_token_is_rejected_and_nothing_shown(receiver: tuple) -> None:
    rx, got = receiver
    body = json.dumps(payload()).encode()
    assert post(rx.url, body, "not-the-token")[0] == 401
    assert post(rx.url, body, None)[0] == 401
    assert post(rx.url, body, TOKEN + "x")[0] == 401
    assert got == [] and rx.rejected == 3 and rx.received == 0


def test_bad_bodies_get_a_one_line_400(receiver: tuple) -> None:
    rx, got = receiver
    code, text = post(rx.url, b"{not json", TOKEN)
    assert code == 400 and text.startswith("not JSON") and text.count("\n") == 1
    code, text = post(rx.url, b'{"version": "4"}', TOKEN)
    assert code == 400 and "no `alerts` list" in text
    bad = payload()
    bad["alerts"][0]["startsAt"] = "yesterday"
    code, text = post(rx.url, json.dumps(bad).encode(), TOKEN)
    assert code == 400 and "startsAt" in text
    assert got == []


def test_payload_mapping_edge_cases() -> None:
    p = payload()
    del p["alerts"][0]["fingerprint"]
    p["alerts"][0]["labels"] = {"alertname": "NodeDown", "severity": "page", "instance": "n1:9100"}
    (a,) = parse_payload(p)
    assert (a.host, a.gpu, a.severity, a.rule_id) == ("n1:9100", None, "critical", "NodeDown")
    assert (
        a.id.startswith("am:")
        and catalogue.alert_title(a) == p["alerts"][0]["annotations"]["summary"]
    )
    assert parse_time("2026-03-01T12:00:00+02:00") == parse_time("2026-03-01T10:00:00Z")
    assert parse_time("0001-01-01T00:00:00Z") is None


def test_no_token_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gpufleet.core.prometheus.am_receiver.stored_token", lambda: None)
    with pytest.raises(ReceiverError, match="needs a shared token"):
        AlertmanagerReceiver(lambda alerts: None)


def test_token_from_the_keyring() -> None:
    if not os.environ.get("GPUFLEET_TEST_KEYRING_HOME") or secrets.store_available():
        pytest.skip("needs a private Secret Service: run under tools/run-tests")
    token = uuid.uuid4().hex
    got: list[list[Alert]] = []
    with keyring_lock.holding("alertmanager-token"):
        secrets.set_secret("alertmanager", "token", token)
        try:
            rx = AlertmanagerReceiver(got.append, listen="127.0.0.1:0")
            rx.start()
            try:
                assert post(rx.url, json.dumps(payload()).encode(), token)[0] == 200
                assert post(rx.url, json.dumps(payload()).encode(), "wrong")[0] == 401
            finally:
                rx.stop()
        finally:
            secrets.delete_secret("alertmanager", "token")
    assert len(got) == 1
