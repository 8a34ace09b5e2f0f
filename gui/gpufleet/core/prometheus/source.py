"""Prometheus as a data source: read a fleet's GPUs from a Prometheus server (Qt-free).

A "host group" can be a Prometheus server instead of SSH hosts (``[[prometheus]]`` in
config.toml): the instances and GPUs are discovered from ``DCGM_FI_DEV_GPU_TEMP``'s labels
(``Hostname``, else ``instance``; ``gpu``, ``UUID``, ``modelName``, ``pci_bus_id``), live
values come from ``/api/v1/query`` and history from ``/api/v1/query_range``, and both are
mapped back from dcgm-exporter's names and units to the protocol's columns through the one
table (``gpufleet_sampler.metric_names``). The result is the app's own message types
(``Hello`` per host with nominal values where the server has them, ``Sample`` per step), so
the existing tabs, rules and cost tracker use them unchanged. A column the server has no
series for is listed in the GPU's ``unsupported`` with the reason ("no DCGM_FI_... series"):
the tabs say so instead of drawing zeros.

``PromPoller`` runs the queries on its own thread and publishes ``HostMessage`` /
``HostStatus`` events exactly like a Fleet, so the GUI's bridge consumes it as it consumes a
Fleet; a Prometheus that is down or refuses the credentials becomes a ``HostStatus`` with a
one-line reason (never a frozen window, never a traceback).

Credentials live in the keyring: ``get_secret("prometheus:<name>", "token")`` for a bearer
token, ``"password"`` for basic auth (the user name is in the config).
"""

from __future__ import annotations

import base64
import json
import math
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gpufleet_sampler import metric_names as pn
from gpufleet_sampler import protocol

from gpufleet.core.config import secrets
from gpufleet.core.config.prometheus_sources import PromSourceConfig
from gpufleet.core.fleet.events import (
    CONNECTING,
    RECONNECTING,
    STREAMING,
    FleetEvent,
    HostMessage,
    HostStatus,
)
from gpufleet.core.model.errors import ErrorKind, GpufleetError, SessionState
from gpufleet.core.wire.messages import GpuInfo, Hello, Sample, Value

DISCOVERY_METRIC: Final = "DCGM_FI_DEV_GPU_TEMP"
MAX_POINTS: Final = 11_000  # Prometheus refuses more than 11,000 points per series


class PromError(GpufleetError):
    """A query failed; ``kind``: connect, timeout, auth, http, query, config. One line."""

    def __init__(self, message: str, kind: ErrorKind = "query") -> None:
        super().__init__(message, kind, retryable=kind in ("connect", "timeout", "http"))


def credentials(cfg: PromSourceConfig) -> tuple[str | None, tuple[str, str] | None]:
    """(bearer token, basic (user, password)) from the keyring, as the config asks."""
    if cfg.auth == "none":
        return None, None
    if cfg.auth == "bearer":
        token = secrets.get_secret(cfg.secret_name, "token")
        if not token:
            raise PromError(
                f"{cfg.name}: no bearer token in the keyring for {cfg.secret_name!r}", "auth"
            )
        return token, None
    password = secrets.get_secret(cfg.secret_name, "password")
    if password is None:
        raise PromError(f"{cfg.name}: no password in the keyring for {cfg.secret_name!r}", "auth")
    return None, (cfg.user or "", password)


# --- the HTTP API client -------------------------------------------------------------------


Labels = dict[str, str]


class PromClient:
    """A minimal client of Prometheus' HTTP API (urllib, timeouts, bearer or basic auth)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        basic: tuple[str, str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._auth: str | None = None
        if token:
            self._auth = f"Bearer {token}"
        elif basic is not None:
            raw = f"{basic[0]}:{basic[1]}".encode()
            self._auth = "Basic " + base64.b64encode(raw).decode("ascii")

    def _get(self, path: str, params: Mapping[str, str]) -> Any:
        # POST with a form body: long selectors do not hit URL length limits.
        data = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=data, method="POST")
        req.add_header("Content-Type", "application/x-www-form-urlencoded")
        if self._auth:
            req.add_header("Authorization", self._auth)
        where = f"Prometheus at {self.url}"
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                raise PromError(
                    f"{where} refused the credentials (HTTP {e.code}): check the token or "
                    "password stored in the keyring",
                    "auth",
                ) from None
            detail = _error_text(e.read())
            raise PromError(f"{where} answered HTTP {e.code}: {detail}", "http") from None
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise PromError(
                    f"{where} did not answer within {self.timeout:g} s", "timeout"
                ) from None
            text = getattr(reason, "strerror", None) or str(reason)
            raise PromError(f"cannot reach {where}: {text}", "connect") from None
        except TimeoutError:
            raise PromError(
                f"{where} did not answer within {self.timeout:g} s", "timeout"
            ) from None
        except OSError as e:
            raise PromError(f"cannot reach {where}: {e.strerror or e}", "connect") from None
        try:
            doc = json.loads(body)
        except ValueError:
            raise PromError(
                f"{where} did not answer with JSON: is the URL right?", "http"
            ) from None
        if not isinstance(doc, dict) or doc.get("status") != "success":
            err = doc.get("error") if isinstance(doc, dict) else None
            raise PromError(f"{where}: query failed: {err or 'no reason given'}", "query")
        return doc.get("data")

    def query(self, expr: str, t: float | None = None) -> list[tuple[Labels, float]]:
        params = {"query": expr}
        if t is not None:
            params["time"] = repr(t)
        data = self._get("/api/v1/query", params)
        out = []
        for r in (data or {}).get("result") or []:
            value = _float(r.get("value", [None, None])[1])
            if value is not None:
                out.append((dict(r.get("metric") or {}), value))
        return out

    def query_range(
        self, expr: str, start: float, end: float, step: float
    ) -> list[tuple[Labels, list[tuple[float, float]]]]:
        params = {"query": expr, "start": repr(start), "end": repr(end), "step": repr(step)}
        data = self._get("/api/v1/query_range", params)
        out = []
        for r in (data or {}).get("result") or []:
            pts = []
            for ts, v in r.get("values") or []:
                f = _float(v)
                if f is not None:
                    pts.append((float(ts), f))
            out.append((dict(r.get("metric") or {}), pts))
        return out


def _float(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _error_text(body: bytes) -> str:
    try:
        doc = json.loads(body)
        return str(doc.get("error") or doc)[:200]
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:200] or "no detail"


# --- mapping DCGM series back to protocol messages -----------------------------------------

COLUMNS: Final = protocol.COLUMN_NAMES
_POS: Final = {c: i for i, c in enumerate(COLUMNS)}
# metric name -> (column index or nominal key, scale)
_BY_METRIC_COL: Final = {f.name: (_POS[f.key], f.scale) for f in pn.COLUMN_FAMILY.values()}
_BY_METRIC_NOM: Final = {f.name: (f.key, f.scale) for f in pn.NOMINAL_FAMILY.values()}
SELECTOR: Final = (
    '{__name__=~"' + "|".join(sorted(set(_BY_METRIC_COL) | set(_BY_METRIC_NOM))) + '"}'
)


def host_key(labels: Mapping[str, str]) -> str | None:
    """The instance a series belongs to: its Hostname (dcgm-exporter, both gpufleet
    exporters), else Prometheus' ``instance``."""
    return labels.get(pn.HOSTNAME_LABEL) or labels.get("hostname") or labels.get("instance")


def _gpu_index(labels: Mapping[str, str]) -> int | None:
    try:
        return int(labels.get("gpu", ""))
    except ValueError:
        return None


@dataclass
class _Inst:
    gpus: dict[int, Labels] = field(default_factory=dict)
    nominal: dict[int, dict[str, Value]] = field(default_factory=dict)
    present: dict[int, set[int]] = field(default_factory=dict)  # gpu -> column indexes seen


class PromSource:
    """Discovery, latest values and history of one Prometheus server, as messages."""

    def __init__(
        self, client: PromClient, name: str = "prometheus", interval_s: float = 1.0
    ) -> None:
        self.client = client
        self.name = name
        # The step of history and polling: hello says it, so plots draw gaps only where
        # points are missing, not between two polls.
        self.interval_s = interval_s
        self._hellos: dict[str, Hello] = {}
        self._seq = 0

    def discover(self) -> dict[str, Hello]:
        """One Hello per instance that has ``DCGM_FI_DEV_GPU_TEMP`` series."""
        inst: dict[str, _Inst] = {}
        for labels, _v in self.client.query(DISCOVERY_METRIC):
            key, gpu = host_key(labels), _gpu_index(labels)
            if key is None or gpu is None:
                continue
            inst.setdefault(key, _Inst()).gpus.setdefault(gpu, labels)
        if not inst:
            return {}
        for labels, v in self.client.query(SELECTOR):
            key, gpu = host_key(labels), _gpu_index(labels)
            if key not in inst or gpu is None:
                continue
            name = labels.get("__name__", "")
            i = inst[key]
            if name in _BY_METRIC_NOM:
                nkey, scale = _BY_METRIC_NOM[name]
                i.nominal.setdefault(gpu, {})[nkey] = _unscale(v, scale)
            if name in _BY_METRIC_COL:
                i.present.setdefault(gpu, set()).add(_BY_METRIC_COL[name][0])
        hellos = {key: self._hello(key, i) for key, i in inst.items()}
        self._hellos = hellos
        return dict(hellos)

    @property
    def known(self) -> Mapping[str, Hello]:
        """The instances found by the latest ``discover``."""
        return self._hellos

    def _hello(self, key: str, inst: _Inst) -> Hello:
        gpus = []
        for idx in sorted(inst.gpus):
            labels = inst.gpus[idx]
            present = inst.present.get(idx, set())
            unsupported = {
                c: f"not in Prometheus: no {pn.COLUMN_FAMILY[c].name} series for this GPU"
                for c in COLUMNS
                if c in pn.COLUMN_FAMILY and _POS[c] not in present
            }
            gpus.append(
                GpuInfo(
                    index=idx,
                    uuid=labels.get("UUID", ""),
                    name=labels.get("modelName", "GPU"),
                    pci_bus_id=labels.get("pci_bus_id", ""),
                    nominal=inst.nominal.get(idx, {}),
                    unsupported=unsupported,
                    extra={"instance": labels.get("instance", "")},
                )
            )
        host = {
            "hostname": key,
            "source": self.client.url,
            "driver_version": next(
                (g.get("DCGM_FI_DRIVER_VERSION") for g in inst.gpus.values() if g), None
            ),
        }
        raw = {"kind": "hello", "backend": "prometheus", "sampler_version": "prometheus"}
        return Hello(
            protocol=protocol.PROTOCOL_VERSION,
            sampler_version="prometheus",
            run_id=f"prometheus:{self.client.url}:{key}",
            backend="prometheus",
            interval_s=self.interval_s,
            columns=COLUMNS,
            host=host,
            gpus=tuple(gpus),
            raw=raw,
        )

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def latest(self, t: float | None = None) -> dict[str, Sample]:
        """The current values of every discovered instance (one Sample each)."""
        rows: dict[str, dict[int, list[Value]]] = {}
        stamp: dict[str, float] = {}
        for labels, v in self.client.query(SELECTOR, t):
            self._put(rows, labels, v)
        now = time.time() if t is None else t
        for key in rows:
            stamp[key] = now
        return {key: self._sample(key, by_gpu, stamp[key]) for key, by_gpu in rows.items()}

    def history(self, t0: float, t1: float, step: float) -> dict[str, list[Sample]]:
        """Samples every ``step`` seconds from t0 to t1 (the server's own resolution at
        best), per instance, oldest first."""
        step = max(step, (t1 - t0) / MAX_POINTS, 0.001)
        per_t: dict[str, dict[float, dict[int, list[Value]]]] = {}
        for labels, pts in self.client.query_range(SELECTOR, t0, t1, step):
            key = host_key(labels)
            if key is None:
                continue
            by_t = per_t.setdefault(key, {})
            for ts, v in pts:
                self._put_one(by_t.setdefault(ts, {}), labels, v)
        out: dict[str, list[Sample]] = {}
        for key, by_t in per_t.items():
            out[key] = [self._sample(key, by_t[ts], ts) for ts in sorted(by_t)]
        return out

    def _put(self, rows: dict[str, dict[int, list[Value]]], labels: Labels, v: float) -> None:
        key = host_key(labels)
        if key is not None:
            self._put_one(rows.setdefault(key, {}), labels, v)

    @staticmethod
    def _put_one(by_gpu: dict[int, list[Value]], labels: Labels, v: float) -> None:
        hit = _BY_METRIC_COL.get(labels.get("__name__", ""))
        gpu = _gpu_index(labels)
        if hit is None or gpu is None:
            return
        row = by_gpu.get(gpu)
        if row is None:
            row = by_gpu[gpu] = [None] * len(COLUMNS)
        pos, scale = hit
        if row[pos] is None:  # two exporters with the same GPU: the first one wins
            row[pos] = _unscale(v, scale)

    def _sample(self, key: str, by_gpu: Mapping[int, list[Value]], t: float) -> Sample:
        rows = tuple((gpu, *by_gpu[gpu]) for gpu in sorted(by_gpu))
        return Sample(seq=self._next_seq(), t=t, mono=t, columns=COLUMNS, rows=rows)


def _unscale(v: float, scale: float) -> Value:
    if scale == 1.0:
        return int(v) if v.is_integer() else v
    return v / scale


# --- the poller (a Fleet-like event source) ------------------------------------------------


class PromPoller:
    """Polls one Prometheus server on its own thread and publishes Fleet events: a
    ``HostStatus`` and a ``Hello`` per instance, the history of the last ``backfill_s``
    seconds, then a ``Sample`` per instance every ``interval_s``. Failures become
    ``HostStatus(state="reconnecting", reason=...)`` for the group's pseudo-host
    (``<name>``) and every instance, and polling goes on with a capped backoff."""

    def __init__(
        self,
        cfg: PromSourceConfig,
        publish: Callable[[FleetEvent], None],
        *,
        client: PromClient | None = None,
    ) -> None:
        self.cfg = cfg
        self.publish = publish
        self._client = client
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.hosts: dict[str, str] = {}  # app host name -> Hostname
        self.last_error: str | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"prometheus-{self.cfg.name}", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _status(
        self, host: str, state: SessionState, reason: str | None, kind: ErrorKind | None
    ) -> None:
        self.publish(HostStatus(host, state, reason, time.time(), kind))

    def _run(self) -> None:
        cfg = self.cfg
        self._status(cfg.name, CONNECTING, f"querying {cfg.url}", None)
        source: PromSource | None = None
        last_t: dict[str, float] = {}
        delay = 1.0
        while not self._stop.is_set():
            try:
                if source is None:
                    client = self._client
                    if client is None:
                        token, basic = credentials(cfg)
                        client = PromClient(
                            cfg.url, token=token, basic=basic, timeout=cfg.timeout_s
                        )
                    src = PromSource(client, cfg.name, cfg.interval_s)
                    hellos = src.discover()
                    now = time.time()
                    history = src.history(now - cfg.backfill_s, now, cfg.interval_s)
                    self._status(cfg.name, STREAMING, f"{len(hellos)} instances", None)
                    for key, hello in hellos.items():
                        name = cfg.host_name(key)
                        self.hosts[name] = key
                        self._status(name, STREAMING, None, None)
                        self.publish(HostMessage(name, hello))
                        for s in history.get(key, ()):
                            self.publish(HostMessage(name, s))
                            last_t[key] = s.t
                    source = src
                else:
                    for key, s in source.latest().items():
                        if key in source.known and s.t > last_t.get(key, 0.0):
                            last_t[key] = s.t
                            self.publish(HostMessage(cfg.host_name(key), s))
                self.last_error = None
                delay = 1.0
                self._stop.wait(cfg.interval_s)
            except PromError as e:
                if self.last_error != str(e):
                    self.last_error = str(e)
                    for name in [cfg.name, *self.hosts]:
                        self._status(name, RECONNECTING, str(e), e.kind)
                self._stop.wait(delay)
                delay = min(delay * 2.0, 30.0)
            except Exception as e:  # a surprise must not kill the data source silently
                self.last_error = f"{cfg.name}: {type(e).__name__}: {e}"
                self._status(cfg.name, RECONNECTING, self.last_error, "error")
                self._stop.wait(delay)
                delay = min(delay * 2.0, 30.0)


def series_names() -> Sequence[str]:
    """Every metric name the data source reads (for docs and tests)."""
    return sorted(set(_BY_METRIC_COL) | set(_BY_METRIC_NOM))
