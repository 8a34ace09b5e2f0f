"""Alertmanager to the desktop: a local endpoint for Alertmanager's webhook (opt-in).

A team's Prometheus + Alertmanager can send its alerts to the laptop: point a
``webhook_configs`` receiver at ``http://127.0.0.1:9466/alertmanager`` (through an SSH
tunnel when Alertmanager runs elsewhere) with ``http_config.authorization.credentials`` set
to the shared token. Each POST of the webhook payload (version 4: ``alerts[]`` with
``status``, ``labels``, ``annotations``, ``startsAt``, ``endsAt``, ``fingerprint``) becomes
``Alert`` objects handed to a callback, which the GUI feeds to its alert list and tray.

Security: it binds to loopback by default and requires ``Authorization: Bearer <token>``; a
missing or wrong token gets 401 and nothing is shown. The token is given explicitly or read
from the keyring (``secrets.get_secret("alertmanager", "token")``). Bodies over 1 MiB are
refused (413), a Content-Length that is not a plain decimal (negative, say) gets 400, a
missing one 411, malformed bodies 400 with a one-line reason. It serves through the sampler's
``BoundedHTTPServer``: read and idle timeouts, bounded threads, no traceback when a client
resets.

The alerts keep Alertmanager's own words: ``condition`` is ``EXTERNAL`` and the evidence holds
the labels and annotations; ``catalogue.alert_title`` / ``alert_sentence`` show the
annotations' ``summary`` and ``description``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
from calendar import timegm
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Final

from gpufleet_sampler.listen_address import parse_listen
from gpufleet_sampler.metrics_http import (
    CONNECTION_TIMEOUT_S,
    BoundedHTTPServer,
    bounded_server,
    content_length,
)

from gpufleet.core.config import secrets
from gpufleet.core.model.alert import FIRING, RESOLVED, Alert, Severity

log = logging.getLogger(__name__)

DEFAULT_LISTEN: Final = "127.0.0.1:9466"
SECRET_NAME: Final = "alertmanager"
EXTERNAL: Final = "alertmanager"  # Alert.condition of alerts received from Alertmanager
MAX_BODY: Final = 1 << 20

_SEVERITY: Final[dict[str, Severity]] = {
    "critical": "critical",
    "page": "critical",
    "error": "critical",
    "high": "critical",
    "warning": "warning",
    "warn": "warning",
    "medium": "warning",
    "info": "info",
    "informational": "info",
    "low": "info",
    "none": "info",
}
_TIME_RE: Final = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)$"
)


class ReceiverError(Exception):
    """The receiver cannot start (no token, bad address); one line."""


class PayloadError(ValueError):
    """A POST body that is not an Alertmanager webhook payload; one line."""


def parse_time(text: Any) -> float | None:
    """RFC 3339 (Alertmanager's ``startsAt``/``endsAt``, nanoseconds allowed) to epoch
    seconds; None for Go's zero time ("0001-01-01T00:00:00Z") or anything else."""
    if not isinstance(text, str):
        return None
    m = _TIME_RE.match(text.strip())
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, tz = m.groups()
    if int(y) <= 1:
        return None
    t = float(timegm((int(y), int(mo), int(d), int(h), int(mi), int(s), 0, 0, 0)))
    if frac:
        t += float("0." + frac[:9])
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        tz = tz[1:].replace(":", "")
        t -= sign * (int(tz[:2]) * 3600 + int(tz[2:]) * 60)
    return t


def _gpu(labels: Mapping[str, str]) -> int | None:
    try:
        return int(labels.get("gpu", ""))
    except ValueError:
        return None


def parse_payload(payload: Any) -> list[Alert]:
    """The alerts of one webhook payload; PayloadError when it is not one."""
    if not isinstance(payload, Mapping):
        raise PayloadError("the body must be a JSON object (Alertmanager's webhook payload)")
    raw_alerts = payload.get("alerts")
    if not isinstance(raw_alerts, list):
        raise PayloadError("the payload has no `alerts` list (is this Alertmanager's webhook?)")
    out: list[Alert] = []
    for i, a in enumerate(raw_alerts):
        if not isinstance(a, Mapping):
            raise PayloadError(f"alerts[{i}] must be an object")
        labels = a.get("labels") or {}
        annotations = a.get("annotations") or {}
        if not isinstance(labels, Mapping) or not isinstance(annotations, Mapping):
            raise PayloadError(f"alerts[{i}]: labels and annotations must be objects")
        labels = {str(k): str(v) for k, v in labels.items()}
        annotations = {str(k): str(v) for k, v in annotations.items()}
        status = a.get("status")
        if status not in (FIRING, RESOLVED):
            raise PayloadError(f"alerts[{i}]: status must be firing or resolved, not {status!r}")
        started = parse_time(a.get("startsAt"))
        if started is None:
            raise PayloadError(f"alerts[{i}]: startsAt {a.get('startsAt')!r} is not a time")
        ended = parse_time(a.get("endsAt")) if status == RESOLVED else None
        fingerprint = str(a.get("fingerprint") or "")
        if not fingerprint:
            canon = json.dumps(sorted(labels.items())).encode()
            fingerprint = hashlib.sha256(canon).hexdigest()[:16]
        name = labels.get("alertname", "alert")
        out.append(
            Alert(
                id=f"am:{fingerprint}@{started:.3f}",
                rule_id=labels.get("rule_id") or name,
                severity=_SEVERITY.get(labels.get("severity", "").lower(), "warning"),
                host=labels.get("Hostname")
                or labels.get("hostname")
                or labels.get("instance")
                or "alertmanager",
                gpu=_gpu(labels),
                state=status,
                started_t=started,
                ended_t=ended,
                evidence={
                    "source": "alertmanager",
                    "alertname": name,
                    "labels": labels,
                    "annotations": annotations,
                    "summary": annotations.get("summary") or annotations.get("title") or name,
                    "description": annotations.get("description")
                    or annotations.get("message")
                    or "",
                    "generator_url": str(a.get("generatorURL") or ""),
                    "receiver": str(payload.get("receiver") or ""),
                    "external_url": str(payload.get("externalURL") or ""),
                },
                condition=EXTERNAL,
                key=fingerprint,
            )
        )
    return out


def stored_token() -> str | None:
    return secrets.get_secret(SECRET_NAME, "token")


class AlertmanagerReceiver:
    """The webhook endpoint (see the module docstring). ``on_alerts`` runs on the HTTP
    thread: hand the alerts over (a queue, a Qt signal), do not block in it."""

    def __init__(
        self,
        on_alerts: Callable[[list[Alert]], None],
        *,
        token: str | None = None,
        listen: str = DEFAULT_LISTEN,
    ) -> None:
        if token is None:
            token = stored_token()
        if not token:
            raise ReceiverError(
                "the Alertmanager receiver needs a shared token: store one with "
                "`gpufleet prometheus set-secret alertmanager --generate` (kept in the OS keyring)"
            )
        self._token = token.encode()
        self.on_alerts = on_alerts
        try:
            self.host, self.port = parse_listen(listen)
        except ValueError as e:
            raise ReceiverError(str(e)) from None
        self._server: BoundedHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.received = 0
        self.rejected = 0

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/alertmanager"

    def authorized(self, header: str | None) -> bool:
        if not header or not header.startswith("Bearer "):
            return False
        return hmac.compare_digest(header[len("Bearer ") :].strip().encode(), self._token)

    def start(self) -> None:
        try:
            server = bounded_server(self.host, self.port, _handler(self))
        except OSError as e:
            msg = f"cannot listen on {self.host}:{self.port}: {e.strerror or e}"
            raise ReceiverError(msg) from None
        self.port = int(server.server_address[1])
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="am-receiver", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None


def _handler(rx: AlertmanagerReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "gpufleet-am-receiver"
        timeout = CONNECTION_TIMEOUT_S  # a body that never arrives does not hold a thread

        def do_GET(self) -> None:
            self._reply(200, "gpufleet Alertmanager receiver: POST the webhook payload here\n")

        def do_POST(self) -> None:
            if not rx.authorized(self.headers.get("Authorization")):
                rx.rejected += 1
                self._reply(401, "a valid bearer token is required\n", bearer=True)
                return
            length, status, why = content_length(self.headers.get("Content-Length"), MAX_BODY)
            if length is None:
                rx.rejected += 1
                self._reply(status, why + "\n")
                return
            body = self.rfile.read(length)
            if len(body) != length:  # the client went away mid-body
                return
            try:
                alerts = parse_payload(json.loads(body))
            except (ValueError, UnicodeDecodeError) as e:
                msg = str(e) if isinstance(e, PayloadError) else f"not JSON: {e}"
                self._reply(400, msg.splitlines()[0] + "\n")
                return
            rx.received += len(alerts)
            try:
                rx.on_alerts(alerts)
            except Exception:  # the app's problem, not Alertmanager's: it must not retry
                log.exception("am-receiver: the alert callback failed")
            self._reply(200, "ok\n")

        def _reply(self, code: int, text: str, bearer: bool = False) -> None:
            body = text.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if bearer:
                self.send_header("WWW-Authenticate", 'Bearer realm="gpufleet"')
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
