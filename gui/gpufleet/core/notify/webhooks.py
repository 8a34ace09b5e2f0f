"""Webhook notifications: generic JSON, Slack, DingTalk and WeCom payloads, with retries.

Webhooks are named in the rules file (``[webhooks.NAME] format = "slack"``, and rules list
them in ``notify``); their URLs (which carry the token) live only in the OS keyring, under
``webhook:NAME`` (``set_webhook_url``). A ``Notifier`` sends from one worker thread with a
bounded queue, so a slow or dead endpoint never blocks the engine: each delivery is retried
with exponential backoff (bounded attempts and delay) on network errors, 5xx and 429, and
given up on other 4xx and on DingTalk/WeCom ``errcode`` replies (a bad token will not get
better by retrying). URLs never appear in logs or results (they hold tokens).

Every payload names the host (in its title, and as ``host`` in the JSON format). With an
``AlertLifecycle`` each alert state is posted at most once per webhook across restarts: a
delivery that succeeded is marked (committed) and never queued again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet.core.alerts.lifecycle import AlertLifecycle, channel
from gpufleet.core.config import secrets
from gpufleet.core.model.alert import Alert, severity_at_least
from gpufleet.core.text.catalogue import alert_sentence, alert_title

log = logging.getLogger(__name__)

FORMATS: Final = ("json", "slack", "dingtalk", "wecom")
SECRET_PREFIX: Final = "webhook:"


class WebhookError(ValueError):
    """A webhook definition that cannot be used (unknown format, no URL in the keyring)."""


@dataclass(frozen=True)
class Webhook:
    name: str
    format: str
    url: str = field(repr=False)
    min_severity: str = "warning"
    timeout_s: float = 10.0


@dataclass(frozen=True)
class Delivery:
    """What became of one alert sent to one webhook."""

    webhook: str
    alert_id: str
    ok: bool
    attempts: int
    status: int | None
    error: str | None


def set_webhook_url(name: str, url: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise WebhookError(f"webhook {name!r}: the URL must start with http:// or https://")
    secrets.set_secret(SECRET_PREFIX + name, "webhook-url", url)


def webhook_url(name: str) -> str | None:
    return secrets.get_secret(SECRET_PREFIX + name, "webhook-url")


def load_webhooks(table: Mapping[str, Any], source: str = "rules.toml") -> list[Webhook]:
    """Webhooks from a ``[webhooks]`` table, their URLs from the keyring."""
    out = []
    for name, spec in table.items():
        where = f"{source}: webhook {name!r}"
        if not isinstance(spec, Mapping):
            raise WebhookError(f"{where}: must be a table")
        fmt = spec.get("format", "json")
        if fmt not in FORMATS:
            raise WebhookError(f"{where}: format must be one of {', '.join(FORMATS)}")
        url = webhook_url(name)
        if not url:
            raise WebhookError(
                f"{where}: no URL in the keyring (store it with notify.set_webhook_url)"
            )
        out.append(
            Webhook(
                name=name,
                format=fmt,
                url=url,
                min_severity=str(spec.get("min_severity", "warning")),
                timeout_s=float(spec.get("timeout_s", 10.0)),
            )
        )
    return out


def payload(alert: Alert, fmt: str) -> dict[str, Any]:
    """The request body for one alert in one format."""
    title = alert_title(alert)
    text = alert_sentence(alert)
    state = "RESOLVED" if alert.state == "resolved" else alert.severity.upper()
    if fmt == "slack":
        return {"text": f"*[{state}] {title}*\n{text}"}
    if fmt == "dingtalk":
        return {
            "msgtype": "markdown",
            "markdown": {"title": title, "text": f"### [{state}] {title}\n\n{text}"},
        }
    if fmt == "wecom":
        return {"msgtype": "markdown", "markdown": {"content": f"**[{state}] {title}**\n{text}"}}
    return {
        "title": title,
        "text": text,
        "host": alert.host,
        "gpu": alert.gpu,
        "alert": alert.to_json(),
    }


def webhook_channel(name: str, alert: Alert) -> str:
    """The lifecycle channel of one alert state posted to one webhook."""
    return channel("webhook", name, alert.state)


class _GiveUp(Exception):
    pass


def _post(url: str, body: dict[str, Any], timeout: float) -> int:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    req = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json; charset=utf-8"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        status = int(resp.status)
        reply = resp.read(65536)
    # DingTalk and WeCom answer 200 with {"errcode": N} on failure (bad token, bad body).
    try:
        obj = json.loads(reply) if reply else None
    except ValueError:
        obj = None
    if isinstance(obj, dict) and obj.get("errcode") not in (None, 0):
        raise _GiveUp(
            f"the service refused it: errcode {obj.get('errcode')} {obj.get('errmsg', '')}".strip()
        )
    return status


class Notifier:
    """Delivers alerts to webhooks from one worker thread."""

    def __init__(
        self,
        webhooks: Sequence[Webhook],
        *,
        max_attempts: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        queue_size: int = 1000,
        on_result: Callable[[Delivery], None] | None = None,
        lifecycle: AlertLifecycle | None = None,
    ) -> None:
        self.webhooks = {w.name: w for w in webhooks}
        self.lifecycle = lifecycle
        self.max_attempts = max(1, max_attempts)
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.on_result = on_result
        self.results: list[Delivery] = []
        self.dropped = 0
        self._q: queue.Queue[tuple[Alert, Webhook] | None] = queue.Queue(maxsize=queue_size)
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._pending = 0
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gpufleet-notify", daemon=True)
            self._thread.start()

    def submit(
        self, alert: Alert, names: Sequence[str] | None = None, t: float | None = None
    ) -> int:
        """Queue ``alert`` for the named webhooks (all when None); silenced alerts and those
        under a webhook's minimum severity are skipped. Returns how many were queued."""
        if alert.silenced(alert.started_t if t is None else t):
            return 0
        n = 0
        for name in self.webhooks if names is None else names:
            w = self.webhooks.get(name)
            if w is None or not severity_at_least(alert.severity, w.min_severity):
                continue
            if self.lifecycle is not None and self.lifecycle.already_sent(
                alert.id, webhook_channel(name, alert)
            ):
                continue  # posted before (this run or the one before a restart)
            with self._idle:
                self._pending += 1
            try:
                self._q.put_nowait((alert, w))
                n += 1
            except queue.Full:
                self.dropped += 1
                self._done()
        return n

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything queued was delivered or given up."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            with contextlib.suppress(queue.Full):
                self._q.put_nowait(None)
            self._thread.join(timeout)
            self._thread = None

    def _done(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            item = self._q.get()
            if item is None:
                break
            alert, w = item
            try:
                result = self._deliver(alert, w)
                if result.ok and self.lifecycle is not None:
                    self.lifecycle.mark_sent(alert.id, webhook_channel(w.name, alert), time.time())
                self.results.append(result)
                if self.on_result is not None:
                    self.on_result(result)
            except Exception:  # a callback or a payload bug must not kill the worker
                log.exception("webhook %s: delivery failed", w.name)
            finally:
                self._done()

    def _deliver(self, alert: Alert, w: Webhook) -> Delivery:
        body = payload(alert, w.format)
        status: int | None = None
        error: str | None = None
        for attempt in range(1, self.max_attempts + 1):
            try:
                status = _post(w.url, body, w.timeout_s)
                return Delivery(w.name, alert.id, True, attempt, status, None)
            except _GiveUp as e:
                return Delivery(w.name, alert.id, False, attempt, status, str(e))
            except urllib.error.HTTPError as e:
                status, error = e.code, f"HTTP {e.code}"
                if 400 <= e.code < 500 and e.code != 429:
                    return Delivery(w.name, alert.id, False, attempt, status, error)
            except (urllib.error.URLError, OSError, TimeoutError) as e:
                # Never the URL: it holds the token.
                reason = getattr(e, "reason", e)
                error = f"{type(e).__name__}: {reason}"
            if attempt < self.max_attempts:
                delay = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
                log.info(
                    "webhook %s: attempt %d failed (%s); retry in %.1fs",
                    w.name,
                    attempt,
                    error,
                    delay,
                )
                if self._stop.wait(delay):
                    break
        return Delivery(w.name, alert.id, False, self.max_attempts, status, error)
