"""Webhooks delivered to a real local HTTP server, in each format, with retries."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import Alert
from gpufleet.core.notify.webhooks import (
    FORMATS,
    Notifier,
    Webhook,
    WebhookError,
    load_webhooks,
    set_webhook_url,
    webhook_url,
)

from tests.support.rules_support import Stream
from tests.support.webhook_sink import WebhookSink


def an_alert() -> Alert:
    eng = RuleEngine(
        [r for r in load_rules(include_user=False) if r.id == "idle_billed"],
        [HostConfig(name="a100-train", price_per_hour=10.0)],
    )
    s = Stream()
    eng.feed("a100-train", s.hello)
    out: list[Alert] = []
    for t in range(0, 901, 10):
        out += eng.feed("a100-train", s.sample(t, util_gpu_pct=0, mem_used_bytes=0))
    (a,) = out
    return a


def deliver(hook: WebhookSink, fmt: str, **kw: Any) -> Notifier:
    n = Notifier([Webhook("team", fmt, hook.url)], backoff_s=0.01, **kw)
    n.start()
    try:
        assert n.submit(an_alert()) == 1
        assert n.flush(20)
    finally:
        n.stop()
    return n


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_is_delivered(webhook_sink: WebhookSink, fmt: str) -> None:
    n = deliver(webhook_sink, fmt)
    (res,) = n.results
    assert res.ok and res.attempts == 1 and res.status == 200
    ((path, body),) = webhook_sink.requests
    assert path == "/hook/secret-token"
    text = json.dumps(body, ensure_ascii=False)
    assert "a100-train idle while billed" in text and "$10.00" in text
    if fmt == "slack":
        assert set(body) == {"text"}
    elif fmt in ("dingtalk", "wecom"):
        assert body["msgtype"] == "markdown"
        key = "text" if fmt == "dingtalk" else "content"
        assert "idle" in body["markdown"][key]
    else:
        assert body["alert"]["rule_id"] == "idle_billed" and body["alert"]["severity"] == "warning"


def test_retried_after_server_errors() -> None:
    with WebhookSink(fail_first=2) as h:
        n = deliver(h, "json")
    (res,) = n.results
    assert res.ok and res.attempts == 3 and h.attempts == 3 and len(h.requests) == 1


def test_gives_up_after_bounded_attempts_without_leaking_the_url() -> None:
    with WebhookSink(fail_first=100) as h:
        n = deliver(h, "slack", max_attempts=3)
    (res,) = n.results
    assert not res.ok and res.attempts == 3 and h.attempts == 3 and res.error == "HTTP 500"
    assert "secret-token" not in repr(res) and "secret-token" not in repr(
        Webhook("x", "json", h.url)
    )


def test_client_errors_and_errcode_replies_are_not_retried() -> None:
    with WebhookSink(status=200, reply=b'{"errcode": 310000, "errmsg": "sign not match"}') as h:
        n = deliver(h, "dingtalk")
    (res,) = n.results
    assert not res.ok and res.attempts == 1 and "310000" in (res.error or "")


def test_silenced_and_minor_alerts_are_not_sent(webhook_sink: WebhookSink) -> None:
    from dataclasses import replace

    n = Notifier(
        [Webhook("team", "json", webhook_sink.url, min_severity="critical")], backoff_s=0.01
    )
    a = an_alert()
    assert n.submit(a) == 0  # a warning, under the webhook's minimum
    assert n.submit(replace(a, severity="critical", acked=True)) == 0


@pytest.mark.skipif(
    not os.environ.get("GPUFLEET_TEST_SECRET_SERVICE"),
    reason="needs the real Secret Service of tools/run-tests",
)
def test_urls_come_from_the_keyring(webhook_sink: WebhookSink) -> None:
    with pytest.raises(WebhookError, match="no URL in the keyring"):
        load_webhooks({"ops": {"format": "wecom"}})
    set_webhook_url("ops", webhook_sink.url)
    assert webhook_url("ops") == webhook_sink.url
    (w,) = load_webhooks({"ops": {"format": "wecom", "min_severity": "info"}})
    assert w.url == webhook_sink.url and w.format == "wecom"
    with pytest.raises(WebhookError, match="format must be one of"):
        load_webhooks({"ops": {"format": "telegram"}})


def test_every_format_names_the_host() -> None:
    from gpufleet.core.notify.webhooks import payload

    s = Stream(n_gpus=3)
    eng = RuleEngine(load_rules(include_user=False))
    alerts = []
    for t in range(20):
        alerts += eng.feed("rental-b", s.sample(t, gpus={2: {"lost": 1}}))
    (a,) = [x for x in alerts if x.rule_id == "gpu_lost"]
    for fmt in FORMATS:
        body = json.dumps(payload(a, fmt), ensure_ascii=False)
        assert "GPU 2 of rental-b" in body, fmt
    assert payload(a, "json")["host"] == "rental-b"
