"""The HTTP client every adapter uses: urllib3 with timeouts, retries and clear errors.

Retries: a 429 is retried for every method (the provider did nothing), honouring
``Retry-After`` where the provider sends one and backing off exponentially where it does
not (vast.ai sends none); 5xx answers and read timeouts are retried only for idempotent
methods (GET, PUT, DELETE), never for a POST that may have acted. Connection failures are
retried for every method (nothing was sent).

The API key travels only in the ``Authorization`` header. It is never logged and never part
of an error: every message is built here from the status and the provider's own error text,
and anything that still contains the key has it replaced by ``***``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.util.retry import Retry

from gpufleet.core.providers.base import ErrorKind, ProviderError

log = logging.getLogger(__name__)
# urllib3 logs each retry as a warning; the one error raised here says it all, once.
logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


@dataclass(frozen=True)
class HttpSettings:
    """Timeouts in seconds; ``retries`` is the number of tries after the first."""

    connect_timeout_s: float = 5.0
    read_timeout_s: float = 20.0
    retries: int = 4
    backoff_s: float = 1.0  # 1, 2, 4, … s between tries when no Retry-After is given
    backoff_max_s: float = 30.0


def _message_of(body: bytes) -> str:
    """The provider's own error text from a JSON or plain body, shortened."""
    text = body.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        return text[:200]
    parts: list[str] = []

    def pick(d: Any) -> None:
        if isinstance(d, dict):
            for key in ("error", "msg", "message", "suggestion", "detail"):
                v = d.get(key)
                if isinstance(v, str) and v and v not in parts:
                    parts.append(v)
                elif isinstance(v, dict):
                    pick(v)
        elif isinstance(d, list):
            for x in d[:3]:
                pick(x)

    pick(doc)
    return "; ".join(parts)[:200] if parts else text[:200]


class ApiClient:
    """JSON over HTTPS to one base URL with one key. Thread-safe (urllib3's pool is)."""

    def __init__(
        self,
        label: str,
        base_url: str,
        api_key: str,
        key_hint: str,
        settings: HttpSettings | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ProviderError(
                f"{label}: bad API URL {base_url!r}: use http(s)://host[:port][/path]", "failed"
            )
        self.label = label
        self.base_url = base_url.rstrip("/")
        self._key = api_key
        self._key_hint = key_hint  # where the key comes from, for the 401 message
        self.settings = settings or HttpSettings()
        s = self.settings
        self._pool = urllib3.PoolManager(
            timeout=urllib3.Timeout(connect=s.connect_timeout_s, read=s.read_timeout_s),
            headers={"User-Agent": "gpufleet", "Accept": "application/json"},
        )

    def _retry(self, method: str) -> Retry:
        s = self.settings
        idempotent = method in _IDEMPOTENT
        return Retry(
            total=s.retries,
            connect=s.retries,
            read=s.retries if idempotent else 0,
            status=s.retries,
            other=0,
            allowed_methods=None,  # every method; which statuses retry is decided below
            status_forcelist=(429, 500, 502, 503, 504) if idempotent else (429,),
            backoff_factor=s.backoff_s / 2,  # urllib3 doubles from the second retry on
            backoff_max=s.backoff_max_s,
            respect_retry_after_header=True,
            raise_on_status=False,
            redirect=0,
        )

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        query: Mapping[str, str] | None = None,
        not_found_ok: bool = False,
    ) -> Any:
        """The decoded JSON answer (None for an empty body); raises ProviderError."""
        url = self.base_url + path
        headers = {"Authorization": f"Bearer {self._key}"}
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        what = f"{method} {path}"
        try:
            r = self._pool.request(
                method,
                url,
                body=data,
                fields=dict(query) if query else None,
                headers=headers,
                retries=self._retry(method),
            )
        except MaxRetryError as e:
            raise self._transport_error(what, e.reason) from None
        except (HTTPError, OSError) as e:
            raise self._transport_error(what, e) from None
        return self._decode(what, r.status, r.data, not_found_ok)

    def _transport_error(self, what: str, reason: BaseException | None) -> ProviderError:
        host = urlsplit(self.base_url).netloc
        kind: ErrorKind
        if isinstance(reason, ReadTimeoutError):
            kind = "timeout"
            why = f"no answer within {self.settings.read_timeout_s:g} s"
        elif isinstance(reason, NewConnectionError | ProtocolError):
            # (before ConnectTimeoutError: urllib3 derives NewConnectionError from it)
            kind = "network"
            why = f"cannot reach {host} ({type(reason).__name__})"
        elif isinstance(reason, urllib3.exceptions.ConnectTimeoutError):
            kind = "timeout"
            why = f"could not connect within {self.settings.connect_timeout_s:g} s"
        elif isinstance(reason, OSError):
            kind = "network"
            why = f"cannot reach {host} ({type(reason).__name__})"
        elif isinstance(reason, ResponseError):
            kind = "server"
            why = "too many error answers"
        else:
            kind = "network"
            why = type(reason).__name__ if reason else "the request failed"
        tries = self.settings.retries + 1
        msg = f"{self.label}: {what}: {why} (after {tries} tries)"
        log.debug("%s", self._scrub(msg))
        return ProviderError(self._scrub(msg), kind)

    def _decode(self, what: str, status: int, data: bytes, not_found_ok: bool) -> Any:
        if 200 <= status < 300:
            if not data.strip():
                return None
            try:
                return json.loads(data)
            except ValueError:
                raise ProviderError(
                    f"{self.label}: {what}: the answer is not JSON ({len(data)} bytes)",
                    "bad_response",
                    status,
                ) from None
        detail = self._scrub(_message_of(data))
        suffix = f": {detail}" if detail else ""
        tries = self.settings.retries + 1
        kind: ErrorKind
        if status in (401, 403):
            kind = "auth"
            msg = (
                f"{self.label}: the API key was refused (HTTP {status}{suffix}); "
                f"check it: {self._key_hint}"
            )
        elif status == 404:
            if not_found_ok:
                return None
            kind = "not_found"
            msg = f"{self.label}: {what}: not found (HTTP 404{suffix})"
        elif status == 429:
            kind = "rate_limited"
            msg = (
                f"{self.label}: {what}: rate limited (HTTP 429{suffix}) after {tries} tries; "
                "try again in a minute"
            )
        elif status >= 500:
            kind = "server"
            msg = f"{self.label}: {what}: the provider failed (HTTP {status}{suffix})"
        else:
            kind = "failed"
            msg = f"{self.label}: {what}: refused (HTTP {status}{suffix})"
        return self._raise(msg, kind, status)

    def _raise(self, msg: str, kind: ErrorKind, status: int) -> Any:
        raise ProviderError(self._scrub(msg), kind, status)

    def close(self) -> None:
        self._pool.clear()
