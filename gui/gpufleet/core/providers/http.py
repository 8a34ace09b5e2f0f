"""The HTTP client every adapter uses: urllib3 with timeouts, retries, a deadline, a size cap
and clear errors.

Retries (our own loop, so that every wait counts against the call's deadline): a 429 is
retried for every method (the provider did nothing), honouring ``Retry-After`` up to
``retry_after_max_s`` where the provider sends one and backing off exponentially where it
does not (vast.ai sends none); 5xx answers and read timeouts are retried only for idempotent
methods (GET, PUT, DELETE), never for a POST that may have acted. Connection failures are
retried for every method (nothing was sent).

Every call has an overall deadline (``deadline_s``: connecting, waiting, every retry and
reading the whole body): a server that drips a byte every few seconds or asks to be retried
in a day fails within it, and nothing that waits on a call (a stop, the app quitting) waits
longer. The body is read in pieces and refused past ``max_body_bytes``: a huge answer never
sits in memory.

What an error says depends on what the provider said: a 410, or a 404 on an endpoint the
adapter relies on, is drift (the API changed; ``base.drift``); a refused key, an inactive
account (Lambda's ``global/account-inactive``), a rate limit and an outage are each their
own kind and sentence.

The API key travels only in the ``Authorization`` header. It is never logged and never part
of an error: every message is built here from the status and the provider's own error text,
and anything that still contains the key has it replaced by ``***``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from gpufleet.core.providers.base import Drift, ErrorKind, ProviderError, drift

log = logging.getLogger(__name__)
# urllib3 logs each retry as a warning; the one error raised here says it all, once.
logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_RETRY_STATUS = frozenset({500, 502, 503, 504})
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class HttpSettings:
    """Timeouts in seconds; ``retries`` is the number of tries after the first."""

    connect_timeout_s: float = 5.0
    read_timeout_s: float = 20.0
    retries: int = 4
    backoff_s: float = 1.0  # 1, 2, 4, … s between tries when no Retry-After is given
    backoff_max_s: float = 30.0
    deadline_s: float = 60.0  # the whole call, every try and wait included
    retry_after_max_s: float = 30.0  # a longer Retry-After is not waited for
    max_body_bytes: int = 16 * 1024 * 1024  # instance lists are KiB; past this: refused


# Lambda's documented error codes (OpenAPI 1.5.3) and what each one is to us.
_CODE_KINDS: dict[str, ErrorKind] = {
    "global/invalid-api-key": "auth",
    "global/account-inactive": "account",
    "global/object-does-not-exist": "not_found",
    "global/quota-exceeded": "rate_limited",
    "provider/internal-unavailable": "server",
    "global/unknown": "server",
}


def _error_code(body: bytes) -> str | None:
    """``error.code`` of a Lambda-shaped error body, else None."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    err = doc.get("error") if isinstance(doc, dict) else None
    code = err.get("code") if isinstance(err, dict) else None
    return code if isinstance(code, str) else None


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds or an HTTP date), else None."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class _Failed(Exception):
    """A try that failed before an answer: ``reason`` is urllib3's, ``retry`` whether the
    loop may try again."""

    def __init__(self, reason: BaseException, retry: bool) -> None:
        super().__init__(str(reason))
        self.reason = reason
        self.retry = retry


class _Deadline(Exception):
    """The overall deadline passed while the body was being read."""


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(str(size))
        self.size = size


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
        sleep: Callable[[float], None] = time.sleep,
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
        self._sleep = sleep
        self._pool = urllib3.PoolManager(
            headers={"User-Agent": "gpufleet", "Accept": "application/json"},
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
        relied_on: bool = False,
    ) -> Any:
        """The decoded JSON answer (None for an empty body); raises ProviderError.

        ``relied_on``: the endpoint itself is what the adapter is built on (a list, GraphQL),
        so a 404 there is drift; on an instance's own path a 404 is that instance not
        found. A 410 is drift everywhere."""
        url = self.base_url + path
        headers = {"Authorization": f"Bearer {self._key}"}
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        what = f"{method} {path}"
        deadline = time.monotonic() + self.settings.deadline_s
        status, raw = self._with_retries(method, url, data, query, headers, what, deadline)
        return self._decode(what, status, raw, not_found_ok, relied_on)

    def _with_retries(
        self,
        method: str,
        url: str,
        data: bytes | None,
        query: Mapping[str, str] | None,
        headers: dict[str, str],
        what: str,
        deadline: float,
    ) -> tuple[int, bytes]:
        s = self.settings
        retry_status = (_RETRY_STATUS | {429}) if method in _IDEMPOTENT else frozenset({429})
        tries = s.retries + 1
        for n in range(tries):
            last = n == tries - 1
            try:
                status, retry_after, raw = self._once(method, url, data, query, headers, deadline)
            except _Failed as e:
                if last or not e.retry or time.monotonic() >= deadline:
                    raise self._transport_error(what, e.reason, n + 1) from None
                self._wait(self._backoff(n), deadline, what, None)
                continue
            except _Deadline:
                raise self._deadline_error(what) from None
            except _TooLarge as e:
                raise ProviderError(
                    f"{self.label}: {what}: the answer is larger than "
                    f"{s.max_body_bytes // (1024 * 1024)} MiB ({e.size} bytes or more): refused",
                    "bad_response",
                ) from None
            if status not in retry_status or last:
                return status, raw
            wait = self._backoff(n) if retry_after is None else retry_after
            if wait > s.retry_after_max_s:
                # Asked to come back much later: this call does not wait that long.
                return status, raw
            self._wait(wait, deadline, what, status)
        raise AssertionError("unreachable")  # the loop returns or raises on its last try

    def _backoff(self, n: int) -> float:
        s = self.settings
        return float(min(s.backoff_max_s, s.backoff_s * (2**n)))

    def _wait(self, wait_s: float, deadline: float, what: str, status: int | None) -> None:
        if time.monotonic() + wait_s >= deadline:
            if status == 429:
                self._raise(
                    f"{self.label}: {what}: rate limited (HTTP 429) and the next try would pass "
                    f"the {self.settings.deadline_s:g} s deadline; try again in a minute",
                    "rate_limited",
                    429,
                )
            raise self._deadline_error(what)
        self._sleep(wait_s)

    def _once(
        self,
        method: str,
        url: str,
        data: bytes | None,
        query: Mapping[str, str] | None,
        headers: dict[str, str],
        deadline: float,
    ) -> tuple[int, float | None, bytes]:
        """One try: (status, Retry-After seconds, the whole body), read within the deadline
        and the size cap."""
        s = self.settings
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Deadline()
        timeout = urllib3.Timeout(
            connect=min(s.connect_timeout_s, left), read=min(s.read_timeout_s, left)
        )
        try:
            r = self._pool.request(
                method,
                url,
                body=data,
                fields=dict(query) if query else None,
                headers=headers,
                retries=False,
                redirect=False,
                timeout=timeout,
                preload_content=False,
            )
        except (ReadTimeoutError, ProtocolError) as e:
            # The request went out: only an idempotent one may go again.
            raise _Failed(e, method in _IDEMPOTENT) from None
        except (HTTPError, OSError) as e:
            raise _Failed(e, True) from None
        try:
            raw = self._read_body(r, deadline)
        finally:
            r.release_conn()
        return r.status, _retry_after(r.headers.get("Retry-After")), raw

    def _read_body(self, r: urllib3.BaseHTTPResponse, deadline: float) -> bytes:
        """The body, in pieces: refused past the cap (announced or read), cut at the deadline
        (a timer shuts the response so that a read blocked on a dripping server returns)."""
        cap = self.settings.max_body_bytes
        announced = r.headers.get("Content-Length")
        if announced and announced.isdigit() and int(announced) > cap:
            r.close()
            raise _TooLarge(int(announced))
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), r.shutdown)
        timer.daemon = True
        timer.start()
        parts: list[bytes] = []
        size = 0
        try:
            while True:
                try:
                    chunk = r.read1(_CHUNK)
                except (HTTPError, OSError, ValueError, AttributeError):
                    # ValueError/AttributeError: urllib3 reading a response the timer shut
                    if time.monotonic() >= deadline:
                        raise _Deadline() from None
                    raise
                if not chunk:
                    if time.monotonic() >= deadline and r.length_remaining:
                        raise _Deadline()
                    break
                size += len(chunk)
                if size > cap:
                    r.close()
                    raise _TooLarge(size)
                parts.append(chunk)
                if time.monotonic() >= deadline:
                    r.close()
                    raise _Deadline()
        finally:
            timer.cancel()
        return b"".join(parts)

    def _deadline_error(self, what: str) -> ProviderError:
        msg = (
            f"{self.label}: {what}: no complete answer within the "
            f"{self.settings.deadline_s:g} s deadline"
        )
        log.debug("%s", self._scrub(msg))
        return ProviderError(self._scrub(msg), "timeout")

    def _transport_error(self, what: str, reason: BaseException, tries: int) -> ProviderError:
        host = urlsplit(self.base_url).netloc
        kind: ErrorKind
        if isinstance(reason, ReadTimeoutError):
            kind = "timeout"
            why = f"no answer within {self.settings.read_timeout_s:g} s"
        elif isinstance(reason, NewConnectionError | ProtocolError):
            # (before ConnectTimeoutError: urllib3 derives NewConnectionError from it)
            kind = "network"
            why = f"cannot reach {host} ({type(reason).__name__})"
        elif isinstance(reason, ConnectTimeoutError):
            kind = "timeout"
            why = f"could not connect within {self.settings.connect_timeout_s:g} s"
        else:
            kind = "network"
            why = f"cannot reach {host} ({type(reason).__name__})"
        msg = f"{self.label}: {what}: {why} (after {tries} tries)"
        log.debug("%s", self._scrub(msg))
        return ProviderError(self._scrub(msg), kind)

    def _decode(
        self, what: str, status: int, data: bytes, not_found_ok: bool, relied_on: bool
    ) -> Any:
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
        said = f"HTTP {status}{suffix}"
        code = _error_code(data)
        kind = _CODE_KINDS.get(code or "")
        if status == 410 or (status == 404 and relied_on and kind is None):
            changed = drift(self.label, what, said, status)
            self._raise(str(changed), "api_changed", status, changed.drift)
        if kind == "account":
            self._raise(
                f"{self.label}: the key was accepted but the account may not do this ({said}); "
                "see your account page at the provider",
                "account",
                status,
            )
        if kind == "auth" or (kind is None and status in (401, 403)):
            self._raise(
                f"{self.label}: the API key was refused ({said}); check it: {self._key_hint}",
                "auth",
                status,
            )
        if kind == "not_found" or status == 404:
            if not_found_ok:
                return None
            self._raise(f"{self.label}: {what}: not found ({said})", "not_found", status)
        tries = self.settings.retries + 1
        if status == 429 or kind == "rate_limited":
            self._raise(
                f"{self.label}: {what}: rate limited ({said}) after up to {tries} tries; "
                "try again in a minute",
                "rate_limited",
                status,
            )
        if status >= 500 or kind == "server":
            self._raise(f"{self.label}: {what}: the provider failed ({said})", "server", status)
        return self._raise(f"{self.label}: {what}: refused ({said})", "failed", status)

    def _raise(self, msg: str, kind: ErrorKind, status: int | None, d: Drift | None = None) -> Any:
        if kind == "api_changed":
            # In the log too: it is what a maintainer needs to see, whoever made the call.
            log.warning("%s", self._scrub(msg))
        if d is not None:
            d = Drift(d.provider, d.endpoint, self._scrub(d.said))
        raise ProviderError(self._scrub(msg), kind, status, d)

    def close(self) -> None:
        self._pool.clear()
