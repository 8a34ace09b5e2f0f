"""Alert rules: definitions loaded from TOML, and the engine that evaluates them per message.

Rules live in ``resources/rules.toml`` (shipped defaults) and the user's
``rules.toml`` (``paths.rules_file()``), which overrides shipped rules by id, field by field,
and may add rules of its own. A rule is::

    [rules.thermal_throttle]
    condition = "thermal_throttle"   # a built-in condition (gpufleet.core.alerts.conditions)
    severity = "warning"             # info | warning | critical
    for_s = 30                       # the condition must hold this long before it fires
    clear_for_s = 10                 # the clear condition must hold this long to resolve
    cooldown_s = 300                 # after it ends, no new alert for this long
    params = { mask = 0x60 }         # thresholds, merged over the condition's defaults
    enabled = true
    notify = ["team-slack"]          # webhooks by name (gpufleet.core.notify.webhooks)
    actions = [{ type = "local", command = "...", grace_s = 60, dry_run = true }]
    [rules.thermal_throttle.hosts."4090-x2"]   # per-host overrides (same fields)
    for_s = 10

``HostConfig.rule_overrides`` (from config.toml) applies last, with the same fields.

The engine's clock is the messages' own ``t``: replays of recorded streams produce the same
alerts at the same times as the live run did. Each (rule, host, GPU, key) has a small state
machine: inactive → pending (condition held since ``since_t``) → firing (held ``for_s``, not
in cooldown) → resolved (clear condition held ``clear_for_s``). Answers that are neither
(``HOLD``: in the hysteresis band, or no data) move no timer. ``feed`` returns the alerts whose
state changed; ``active()`` lists those firing.
"""

from __future__ import annotations

import importlib.resources
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from gpufleet.core.alerts.clock_history import ClockHistory
from gpufleet.core.alerts.conditions import (
    CLEAR,
    CLOCK_CONDITIONS,
    CLOCK_HISTORY,
    CONDITIONS,
    GPU,
    NVLINK_TAU_S,
    Condition,
    GpuView,
    HostState,
    XidSeen,
    clock_window,
    stall_threshold,
)
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.rental import CostTracker
from gpufleet.core.model.alert import FIRING, RESOLVED, SEVERITIES, Alert, Severity
from gpufleet.core.wire.messages import ErrorMsg, Event, Hello, Links, Message, Procs, Sample

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

SHIPPED_NAME: Final = "rules.toml"
_RULE_KEYS: Final = frozenset(
    {
        "condition",
        "severity",
        "for_s",
        "clear_for_s",
        "cooldown_s",
        "enabled",
        "params",
        "actions",
        "notify",
        "hosts",
        "description",
    }
)
_OVERRIDE_KEYS: Final = _RULE_KEYS - {"condition", "hosts", "description"}
_ACTION_TYPES: Final = ("local", "remote", "provider")
HISTORY_LEN: Final = 2000
# Ticks further apart than this mean the laptop slept (or the app was frozen): the stall
# clock restarts instead of counting the sleep as the sampler's silence.
SUSPEND_S: Final = 120.0
# A gap between samples is a stall only when the sequence numbers moved by less than this
# share of the samples the interval should have produced.
STALL_SEQ_FRAC: Final = 0.25


class RulesError(ValueError):
    """A rules file (or a host's rule overrides) is invalid; the text names file and rule."""


@dataclass(frozen=True)
class Rule:
    id: str
    condition: str
    severity: Severity = "warning"
    for_s: float = 0.0
    clear_for_s: float = 0.0
    cooldown_s: float = 0.0
    enabled: bool = True
    params: Mapping[str, Any] = field(default_factory=dict)
    actions: tuple[Mapping[str, Any], ...] = ()
    notify: tuple[str, ...] = ()
    hosts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    description: str = ""
    source: str = ""

    @property
    def cond(self) -> Condition:
        return CONDITIONS[self.condition]

    def for_host(self, host: HostConfig | None, host_name: str | None = None) -> Rule:
        """This rule with the rules file's and the host config's overrides applied."""
        name = host.name if host is not None else host_name
        rule = self
        if name is not None and name in self.hosts:
            rule = _apply(rule, self.hosts[name], f"{self.source}: rule {self.id!r}, host {name!r}")
        if host is not None and self.id in host.rule_overrides:
            rule = _apply(
                rule,
                host.rule_overrides[self.id],
                f"config.toml: host {host.name!r}, rule {self.id!r}",
            )
        return rule


# --- loading and validation ----------------------------------------------------------------


def _num(where: str, key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise RulesError(f"{where}: {key} must be a number >= 0, got {v!r}")
    return float(v)


def _check_params(
    where: str, condition: str, params: Any, base: Mapping[str, Any]
) -> dict[str, Any]:
    if not isinstance(params, Mapping):
        raise RulesError(f"{where}: params must be a table, got {params!r}")
    defaults = CONDITIONS[condition].params
    out = dict(base)
    for k, v in params.items():
        if k not in defaults:
            known = ", ".join(sorted(defaults)) or "none"
            raise RulesError(
                f"{where}: condition {condition!r} has no parameter {k!r} (known: {known})"
            )
        d = defaults[k]
        ok = (
            (
                isinstance(d, (int, float))
                and isinstance(v, (int, float))
                and not isinstance(v, bool)
            )
            or (isinstance(d, str) and isinstance(v, str))
            or (isinstance(d, list) and isinstance(v, list))
            or (isinstance(d, bool) and isinstance(v, bool))
        )
        if not ok:
            raise RulesError(f"{where}: parameter {k!r} must be like {d!r}, got {v!r}")
        out[k] = v
    return out


def _check_actions(where: str, actions: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(actions, list):
        raise RulesError(f"{where}: actions must be a list of tables")
    for i, a in enumerate(actions):
        if not isinstance(a, Mapping):
            raise RulesError(f"{where}: action {i + 1} must be a table")
        if a.get("type") not in _ACTION_TYPES:
            raise RulesError(
                f"{where}: action {i + 1}: type must be 'local', 'remote' or 'provider'"
            )
        if not isinstance(a.get("command"), str) or not a["command"].strip():
            raise RulesError(f"{where}: action {i + 1}: command must be a non-empty string")
    return tuple(dict(a) for a in actions)


def _apply(
    rule: Rule, table: Mapping[str, Any], where: str, allowed: frozenset[str] = _OVERRIDE_KEYS
) -> Rule:
    """Return ``rule`` with the fields of ``table`` applied (validated)."""
    if not isinstance(table, Mapping):
        raise RulesError(f"{where}: must be a table")
    unknown = set(table) - allowed
    if unknown:
        raise RulesError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    changes: dict[str, Any] = {}
    if "condition" in table:
        cond = table["condition"]
        if cond not in CONDITIONS:
            raise RulesError(
                f"{where}: unknown condition {cond!r} (known: {', '.join(sorted(CONDITIONS))})"
            )
        if cond != rule.condition:
            changes["condition"] = cond
            rule = replace(rule, condition=cond, params=dict(CONDITIONS[cond].params))
    if "severity" in table:
        if table["severity"] not in SEVERITIES:
            raise RulesError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
        changes["severity"] = table["severity"]
    for key in ("for_s", "clear_for_s", "cooldown_s"):
        if key in table:
            changes[key] = _num(where, key, table[key])
    if "enabled" in table:
        if not isinstance(table["enabled"], bool):
            raise RulesError(f"{where}: enabled must be true or false")
        changes["enabled"] = table["enabled"]
    if "params" in table:
        changes["params"] = _check_params(where, rule.condition, table["params"], rule.params)
    if "actions" in table:
        changes["actions"] = _check_actions(where, table["actions"])
    if "notify" in table:
        n = table["notify"]
        if not isinstance(n, list) or not all(isinstance(x, str) for x in n):
            raise RulesError(f"{where}: notify must be a list of webhook names")
        changes["notify"] = tuple(n)
    if "description" in table:
        changes["description"] = str(table["description"])
    if "hosts" in table:
        hosts = table["hosts"]
        if not isinstance(hosts, Mapping):
            raise RulesError(f"{where}: hosts must be a table of host names")
        merged = {k: dict(v) for k, v in rule.hosts.items()}
        for hname, over in hosts.items():
            # Validate now so that a bad override is reported at load time, not on first use.
            _apply(rule, over, f"{where}, host {hname!r}")
            merged.setdefault(hname, {}).update(over)
        changes["hosts"] = merged
    return replace(rule, **changes)


def _parse_file(text: str, source: str) -> Mapping[str, Any]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RulesError(f"{source}: not valid TOML: {e}") from None
    rules = doc.get("rules", {})
    if not isinstance(rules, Mapping):
        raise RulesError(f"{source}: [rules] must be a table of rules keyed by id")
    unknown = set(doc) - {"rules", "schema", "webhooks"}
    if unknown:
        raise RulesError(f"{source}: unknown top-level key(s) {', '.join(sorted(unknown))}")
    return rules


def _merge(rules: dict[str, Rule], table: Mapping[str, Any], source: str) -> None:
    for rid, body in table.items():
        where = f"{source}: rule {rid!r}"
        if not isinstance(body, Mapping):
            raise RulesError(f"{where}: must be a table")
        if rid in rules:
            rules[rid] = _apply(rules[rid], body, where, _RULE_KEYS)
            continue
        cond = body.get("condition")
        if cond is None:
            raise RulesError(f"{where}: a new rule needs a condition")
        if cond not in CONDITIONS:
            raise RulesError(
                f"{where}: unknown condition {cond!r} (known: {', '.join(sorted(CONDITIONS))})"
            )
        base = Rule(id=rid, condition=cond, params=dict(CONDITIONS[cond].params), source=source)
        rules[rid] = _apply(base, body, where, _RULE_KEYS)


def shipped_rules_text() -> str:
    return importlib.resources.files("gpufleet.resources").joinpath(SHIPPED_NAME).read_text("utf-8")


def load_rules(user_file: Path | None = None, *, include_user: bool = True) -> list[Rule]:
    """The shipped rules, overridden by id from the user's file.

    ``user_file`` defaults to ``paths.rules_file()``; a missing user file is not an error.
    Raises ``RulesError`` naming the file and the rule on any invalid content."""
    rules: dict[str, Rule] = {}
    _merge(
        rules,
        _parse_file(shipped_rules_text(), f"(shipped) {SHIPPED_NAME}"),
        "(shipped) rules.toml",
    )
    if include_user:
        path = user_file if user_file is not None else paths.rules_file()
        if path.exists():
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise RulesError(f"{path}: cannot read: {e}") from None
            _merge(rules, _parse_file(text, str(path)), str(path))
        elif user_file is not None:
            raise RulesError(f"{path}: no such file")
    return list(rules.values())


def load_webhook_table(user_file: Path | None = None) -> dict[str, Any]:
    """The ``[webhooks]`` table of the user's rules file (names and formats; the URLs are in
    the keyring: ``gpufleet.core.notify.webhooks.load_webhooks`` reads them)."""
    path = user_file if user_file is not None else paths.rules_file()
    if not path.exists():
        return {}
    try:
        doc = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise RulesError(f"{path}: cannot read: {e}") from None
    table = doc.get("webhooks", {})
    if not isinstance(table, dict):
        raise RulesError(f"{path}: [webhooks] must be a table of webhooks keyed by name")
    return table


def load_rules_text(text: str, source: str = "rules.toml") -> list[Rule]:
    """Shipped rules overridden by the given TOML text (for tests and the rule editor)."""
    rules: dict[str, Rule] = {}
    _merge(rules, _parse_file(shipped_rules_text(), "(shipped) rules.toml"), "(shipped) rules.toml")
    _merge(rules, _parse_file(text, source), source)
    return list(rules.values())


# --- the engine ----------------------------------------------------------------------------


class _Track:
    """State of one (rule, host, GPU, key)."""

    __slots__ = (
        "alert",
        "clearing_since",
        "cooldown_until",
        "pending_since",
        "snoozed_until",
        "values",
    )

    def __init__(self) -> None:
        self.pending_since: float | None = None
        self.clearing_since: float | None = None
        self.alert: Alert | None = None
        self.cooldown_until = float("-inf")
        self.snoozed_until: float | None = None
        self.values: Mapping[str, Any] = {}


TrackKey = tuple[str, int | None, str]


@dataclass
class _HostRuntime:
    state: HostState
    rules: list[Rule]
    by_trigger: dict[tuple[str, str], list[tuple[Rule, Condition]]]
    tracks: dict[TrackKey, _Track] = field(default_factory=dict)
    columns: tuple[str, ...] = ()
    arrived: bool = False
    # The next hello's new run is this app's own doing (the demo's live daemon after its
    # simulated history): not a restart to report.
    new_run_expected: bool = False


class RuleEngine:
    """Evaluates rules on every message of every host. Not thread-safe: feed it from one
    thread (the fleet's consumer thread or the CLI)."""

    def __init__(
        self,
        rules: Sequence[Rule] | None = None,
        hosts: Sequence[HostConfig] = (),
        cost: CostTracker | None = None,
    ) -> None:
        self.rules: list[Rule] = list(rules) if rules is not None else load_rules()
        self.cost = cost if cost is not None else CostTracker(hosts)
        self._cfg: dict[str, HostConfig] = {h.name: h for h in hosts}
        self._hosts: dict[str, _HostRuntime] = {}
        self._active: dict[str, Alert] = {}
        self._track_of: dict[str, tuple[str, TrackKey]] = {}
        self.history: deque[Alert] = deque(maxlen=HISTORY_LEN)
        self._view = GpuView()
        self._last_tick: float | None = None
        for h in hosts:  # validate every override now: a bad one is a clear error at start
            self._runtime(h.name)

    # -- hosts and rules --

    def set_host(self, host: HostConfig) -> None:
        """Add or update a host (its overrides, price, allow-list); keeps alert state."""
        self._cfg[host.name] = host
        self.cost.set_host(host)
        hr = self._hosts.get(host.name)
        if hr is not None:
            hr.state.cfg = host
            hr.rules, hr.by_trigger = self._rules_for(host.name)

    def remove_host(self, name: str) -> None:
        self._cfg.pop(name, None)
        hr = self._hosts.pop(name, None)
        if hr is not None:
            for tr in hr.tracks.values():
                if tr.alert is not None:
                    self._active.pop(tr.alert.id, None)
                    self._track_of.pop(tr.alert.id, None)

    def rule(self, rule_id: str, host: str | None = None) -> Rule | None:
        """The effective rule for a host (its actions and webhooks, for the dispatcher)."""
        if host is not None:
            for r in self._runtime(host).rules:
                if r.id == rule_id:
                    return r
        for r in self.rules:
            if r.id == rule_id:
                return r
        return None

    def _rules_for(
        self, name: str
    ) -> tuple[list[Rule], dict[tuple[str, str], list[tuple[Rule, Condition]]]]:
        cfg = self._cfg.get(name)
        eff = [r.for_host(cfg, name) for r in self.rules]
        by: dict[tuple[str, str], list[tuple[Rule, Condition]]] = {}
        for r in eff:
            if not r.enabled:
                continue
            cond = r.cond
            for trig in cond.triggers:
                by.setdefault((cond.scope, trig), []).append((r, cond))
        return eff, by

    def _runtime(self, name: str) -> _HostRuntime:
        hr = self._hosts.get(name)
        if hr is None:
            rules, by = self._rules_for(name)
            cfg = self._cfg.get(name)
            state = HostState(name=name, cfg=cfg, interval_s=cfg.interval_s if cfg else 1.0)
            hr = self._hosts[name] = _HostRuntime(state=state, rules=rules, by_trigger=by)
        return hr

    # -- alerts --

    def active(self) -> list[Alert]:
        return sorted(self._active.values(), key=lambda a: (a.started_t, a.id))

    def judging(self, conditions: frozenset[str]) -> set[str]:
        """The hosts on which a rule of one of ``conditions`` holds: pending (its condition
        met, not yet for ``for_s``) or firing. The pipeline asks those hosts for the detail
        that rule is judged on (the per-link NVLink values for the link rules)."""
        out: set[str] = set()
        for name, hr in self._hosts.items():
            ids = {r.id for r in hr.rules if r.condition in conditions}
            if not ids:
                continue
            for (rule_id, _gpu, _key), tr in hr.tracks.items():
                if rule_id in ids and (
                    tr.pending_since is not None or (tr.alert is not None and tr.alert.firing)
                ):
                    out.add(name)
                    break
        return out

    def ack(self, alert_id: str) -> Alert | None:
        return self._update(alert_id, acked=True)

    def restore(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Take back the alerts of a previous run (``AlertLifecycle.restore()``): firing
        ones become active again, with their acknowledgement and snooze, so that a
        condition still true goes on as the same alert (nothing new to notify); resolved
        ones bring back their cooldown and snooze. Alerts of rules that no longer exist, or
        are disabled, are not restored. Returns the alerts made active."""
        out: list[Alert] = []
        for a in alerts:
            hr = self._runtime(a.host)
            rule = next((r for r in hr.rules if r.id == a.rule_id), None)
            if rule is None or not rule.enabled:
                continue
            tk: TrackKey = (a.rule_id, a.gpu, a.key)
            tr = hr.tracks.get(tk)
            if tr is None:
                tr = hr.tracks[tk] = _Track()
            if a.snoozed_until is not None:
                tr.snoozed_until = max(tr.snoozed_until or a.snoozed_until, a.snoozed_until)
            if a.state == FIRING:
                if tr.alert is not None and tr.alert.started_t >= a.started_t:
                    continue  # this run already has it (or a newer one)
                tr.alert = a
                tr.values = dict(a.evidence.get("values") or {})
                tr.pending_since = tr.clearing_since = None
                self._active[a.id] = a
                self._track_of[a.id] = (a.host, tk)
                out.append(a)
            elif a.ended_t is not None:
                tr.cooldown_until = max(tr.cooldown_until, a.ended_t + rule.cooldown_s)
        return out

    def snooze(self, alert_id: str, until_t: float) -> Alert | None:
        """Silence an alert until ``until_t``; a new occurrence of the same rule on the same
        GPU before then is born snoozed too."""
        ref = self._track_of.get(alert_id)
        if ref is not None:
            hr = self._hosts.get(ref[0])
            if hr is not None and ref[1] in hr.tracks:
                hr.tracks[ref[1]].snoozed_until = until_t
        return self._update(alert_id, snoozed_until=until_t)

    def _update(self, alert_id: str, **changes: Any) -> Alert | None:
        a = self._active.get(alert_id)
        if a is None:
            return None
        a = replace(a, **changes)
        self._active[alert_id] = a
        ref = self._track_of.get(alert_id)
        if ref is not None:
            hr = self._hosts.get(ref[0])
            tr = hr.tracks.get(ref[1]) if hr is not None else None
            if tr is not None and tr.alert is not None and tr.alert.id == alert_id:
                tr.alert = a
        return a

    # -- input --

    def feed(self, host: str, msg: Message) -> list[Alert]:
        """Evaluate the rules triggered by one message; returns alerts that changed state."""
        self.cost.feed(host, msg)
        hr = self._runtime(host)
        out: list[Alert] = []
        if isinstance(msg, Sample):
            self._on_sample(hr, msg, out)
        elif isinstance(msg, Procs):
            self._on_procs(hr, msg, out)
        elif isinstance(msg, Event):
            self._on_event(hr, msg, out)
        elif isinstance(msg, Hello):
            self._on_hello(hr, msg)
        elif isinstance(msg, Links):
            for r in msg.rows:
                hr.state.links[r.gpu] = r
        elif isinstance(msg, ErrorMsg):
            pass
        self._held_idle_to_cost(out)
        return out

    def _held_idle_to_cost(self, changed: Sequence[Alert]) -> None:
        """The cost counts as idle what ``idle_held`` found paid for nothing (``cost.held_idle``),
        from when the GPU went quiet until the alert resolves."""
        for a in changed:
            if a.condition != "idle_held" or a.gpu is None:
                continue
            if a.state == FIRING:
                since = (a.evidence.get("values") or {}).get("quiet_since_t", a.started_t)
                self.cost.hold_idle(a.host, a.gpu, float(since))
            else:
                self.cost.release_idle(a.host, a.gpu)

    def feed_many(self, host: str, msgs: Iterable[Message]) -> list[Alert]:
        out: list[Alert] = []
        for m in msgs:
            out.extend(self.feed(host, m))
        return out

    def host_status(
        self, host: str, state: str, t: float, reason: str | None = None
    ) -> list[Alert]:
        """The connection state of a host changed (from the fleet's HostStatus)."""
        hr = self._runtime(host)
        st = hr.state
        if state != st.status:
            st.status_since = t
        st.status, st.status_reason = state, reason
        if state == "streaming":
            st.last_arrival_t = t  # the stall clock restarts with the link
        out: list[Alert] = []
        self._eval_host(hr, "status", t, out)
        return out

    def tick(self, t: float) -> list[Alert]:
        """Evaluate time-driven rules (host unreachable for long, sampler stalled) at the
        laptop's time ``t``; the fleet calls it every few seconds."""
        out: list[Alert] = []
        slept = self._last_tick is not None and t - self._last_tick > SUSPEND_S
        self._last_tick = t
        for hr in self._hosts.values():
            if hr.arrived or slept:
                hr.state.last_arrival_t = t
                hr.arrived = False
            self._eval_host(hr, "tick", t, out)
        return out

    # -- per message kind --

    def expect_new_run(self, host: str) -> None:
        """The next sampler run of ``host`` is expected (this app starts it after feeding
        another run's messages, as the demo does after its simulated history): its hello
        is not reported as a restart."""
        self._runtime(host).new_run_expected = True

    def _on_hello(self, hr: _HostRuntime, msg: Hello) -> None:
        st = hr.state
        old = st.hello
        expected, hr.new_run_expected = hr.new_run_expected, False
        new_run = bool(old and msg.run_id and old.run_id and msg.run_id != old.run_id)
        if new_run and not expected and old is not None:
            # A new life of the sampler: the silence before it is a restart, not a stall.
            st.restart = {
                "old_run_id": old.run_id,
                "new_run_id": msg.run_id,
                "last_sample_t": st.last_sample_t,
                "first_t": None,
                "gap_s": None,
                "lost": False,
            }
        if new_run:
            st.thinned_to_seq = None
            st.nvlink_ema.clear()
            st.nvlink_ema_t = None
            if expected:  # its first sample is not judged against the other run's last
                st.last_sample_t = None
        st.hello = msg
        st.nominal = {g.index: g.nominal for g in msg.gpus}
        st.interval_s = msg.interval_s or st.interval_s
        self._set_columns(hr, msg.columns)

    def _set_columns(self, hr: _HostRuntime, columns: tuple[str, ...]) -> None:
        hr.columns = columns
        hr.state.pos = {name: i + 1 for i, name in enumerate(columns)}

    def _on_sample(self, hr: _HostRuntime, s: Sample, out: list[Alert]) -> None:
        st = hr.state
        if s.columns is not hr.columns and s.columns != hr.columns:
            self._set_columns(hr, s.columns)
        t = s.t
        rows = {int(r[0]): r for r in s.rows if r[0] is not None}
        st.row_by_gpu = rows
        pos = st.pos
        idbe = pos.get("ecc_dbe_vol")
        if idbe is not None:
            for gpu, row in rows.items():
                dbe = row[idbe]
                if dbe is None:
                    continue
                prev = st.dbe_last.get(gpu)
                if prev is not None and dbe > prev:
                    st.dbe_jump[gpu] = (t, prev, float(dbe))
                st.dbe_last[gpu] = float(dbe)
        ilost = pos.get("lost")
        if ilost is not None:
            for gpu, row in rows.items():
                if row[ilost] and gpu not in st.lost_t:
                    st.lost_t[gpu] = t
        st.budget_frac, st.budget_used = self.cost.budget_state(st.name)
        self._remember(st, s, rows)
        # A gap inside the stream: the sampler stalled, if it produced nothing meanwhile.
        last = st.last_sample_t
        restart = st.restart
        if restart is not None and restart["first_t"] is None:
            restart["first_t"] = t
            if last is not None:
                restart["gap_s"] = round(t - last, 1)
            last = None  # the silence before a restart is the restart
        thinned = st.thinned_to_seq is not None and s.seq <= st.thinned_to_seq
        if last is not None and st.status == "streaming" and not thinned:
            for rule, _cond in hr.by_trigger.get(("host", "tick"), ()):
                if rule.condition != "sampler_stalled":
                    continue
                thr = stall_threshold(st, rule.params)
                if t - last > thr and self._silent(st, s, t - last):
                    vals = {"last_sample_t": last, "gap_s": round(t - last, 1)}
                    self._step(hr, rule, None, "", last + thr, vals, out)
        st.last_sample_t = t
        st.last_seq = s.seq
        hr.arrived = True
        st.trigger = "sample"
        view = self._view
        view.pos = pos
        gpu_rules = hr.by_trigger.get((GPU, "sample"), ())
        for gpu, row in rows.items():
            view.gpu, view.row = gpu, row
            view.nominal = st.nominal.get(gpu, {})
            for rule, cond in gpu_rules:
                ans = cond.fn(st, view, t, rule.params)
                if cond.multi:
                    for key, a in ans:
                        self._step(hr, rule, gpu, key, t, a, out)
                elif ans.__class__ is not int or (rule.id, gpu, "") in hr.tracks:
                    # The common case (nothing holds, nothing tracked) skips the call.
                    self._step(hr, rule, gpu, "", t, ans, out)
        self._eval_host(hr, "sample", t, out)

    @staticmethod
    def _silent(st: HostState, s: Sample, gap: float) -> bool:
        """True when the sampler produced (almost) nothing during ``gap``: its sequence
        numbers moved by far fewer than the samples the gap should hold. Numbers that span
        the gap mean the messages existed but did not reach us (a disconnect, the daemon's
        one-a-minute day tier): not a stall."""
        if st.last_seq is None or s.seq <= st.last_seq:
            return True  # no usable numbers (or a restart): judge by time alone
        expected = gap / max(st.interval_s, 1e-3)
        return (s.seq - st.last_seq) < max(3.0, STALL_SEQ_FRAC * expected)

    @staticmethod
    def _remember(st: HostState, s: Sample, rows: Mapping[int, tuple[Any, ...]]) -> None:
        """Per GPU: the clock state (for the evidence's time per reason) and the smoothed
        NVLink traffic (to compare GPUs of one job)."""
        pos = st.pos
        ir = pos.get("clock_reasons")
        ivp, ivt = pos.get("viol_power_pct"), pos.get("viol_thermal_pct")
        itx, irx = pos.get("nvlink_tx_bps"), pos.get("nvlink_rx_bps")
        irp = pos.get("pcie_replays")
        t = s.t
        prev_t = st.nvlink_ema_t
        alpha = 1.0 if prev_t is None else min(1.0, max(0.0, t - prev_t) / NVLINK_TAU_S)
        st.nvlink_ema_t = t
        for gpu, row in rows.items():
            if irp is not None and irp < len(row) and row[irp] is not None:
                rp = float(row[irp])
                ph = st.pcie_replays.get(gpu)
                if ph is None or rp < ph[-1][1]:  # first, or the counter was reset
                    ph = st.pcie_replays[gpu] = deque(maxlen=256)
                if not ph or rp != ph[-1][1]:
                    ph.append((t, rp))
                # Keep one point older than any window a rule looks back (an hour).
                while len(ph) > 1 and ph[1][0] < t - 3600:
                    ph.popleft()
            if ir is not None:
                hist = st.clock_hist.get(gpu)
                if hist is None:
                    hist = st.clock_hist[gpu] = ClockHistory(CLOCK_HISTORY)
                n = len(row)
                hist.append(
                    t,
                    row[ir] if ir < n else None,
                    row[ivp] if ivp is not None and ivp < n else None,
                    row[ivt] if ivt is not None and ivt < n else None,
                )
            if itx is None or irx is None or not st.nominal.get(gpu, {}).get("nvlink_links"):
                continue
            tx, rx = row[itx], row[irx]
            if tx is None and rx is None:
                continue
            x = max(float(tx or 0.0), float(rx or 0.0))
            ema = st.nvlink_ema.get(gpu)
            st.nvlink_ema[gpu] = x if ema is None else ema + alpha * (x - ema)

    def _on_procs(self, hr: _HostRuntime, p: Procs, out: list[Alert]) -> None:
        st = hr.state
        st.procs_seen, st.procs_t = True, p.t
        by_gpu: dict[int, list[Any]] = {}
        for pr in p.procs:
            by_gpu.setdefault(pr.gpu, []).append(pr)
        st.procs = {g: tuple(v) for g, v in by_gpu.items()}
        gpus = set(st.gpus()) | set(by_gpu)
        self._eval_gpus(hr, "procs", sorted(gpus), p.t, out)

    def _on_event(self, hr: _HostRuntime, e: Event, out: list[Alert]) -> None:
        st = hr.state
        gpu = e.gpu
        if e.type == "xid" and gpu is not None and e.code is not None:
            seen = st.xids.setdefault(gpu, {})
            x = seen.get(e.code)
            if x is None:
                seen[e.code] = XidSeen(first_t=e.t, last_t=e.t, count=1, message=e.message)
            else:
                x.last_t, x.count, x.message = e.t, x.count + 1, e.message or x.message
        elif e.type == "ecc" and gpu is not None:
            after = _event_number(e, ("ecc_dbe_vol", "dbe", "uncorrected", "count"))
            if after is not None:
                before = st.dbe_last.get(gpu, 0.0)
                if after > before:
                    st.dbe_jump[gpu] = (e.t, before, after)
                st.dbe_last[gpu] = after
        elif e.type == "gpu_lost" and gpu is not None:
            st.lost_t.setdefault(gpu, e.t)
        elif e.type == "nvlink" and gpu is not None:
            # Link-down events carry the links still up; the others count new errors.
            if "links up" not in e.message and e.code:
                st.nvlink_errors.setdefault(gpu, deque()).append((e.t, int(e.code)))
        elif e.type == "watchdog":
            raw = e.raw
            st.watchdog = {
                "t": e.t,
                "message": e.message,
                **{
                    k: raw.get(k)
                    for k in ("phase", "action", "deadline_t", "dry_run", "ok", "ready")
                },
                "outcome": raw.get("outcome"),
            }
            self._eval_host(hr, "event", e.t, out)
            return
        elif e.type == "note":
            reason = e.raw.get("reason")
            gap_to = e.raw.get("gap_to")
            if reason == "ring" and isinstance(gap_to, int):
                st.thinned_to_seq = gap_to
            elif reason == "restart" and st.restart is not None:
                st.restart["lost"] = True
            return
        else:
            return
        if gpu is not None:
            self._eval_gpus(hr, "event", [gpu], e.t, out)

    def _eval_gpus(
        self, hr: _HostRuntime, trigger: str, gpus: Iterable[int], t: float, out: list[Alert]
    ) -> None:
        st = hr.state
        st.trigger = trigger
        rules = hr.by_trigger.get((GPU, trigger), ())
        if not rules:
            return
        view = self._view
        view.pos = st.pos
        for gpu in gpus:
            view.gpu = gpu
            view.row = st.row_by_gpu.get(gpu, ())
            view.nominal = st.nominal.get(gpu, {})
            for rule, cond in rules:
                ans = cond.fn(st, view, t, rule.params)
                if cond.multi:
                    for key, a in ans:
                        self._step(hr, rule, gpu, key, t, a, out)
                else:
                    self._step(hr, rule, gpu, "", t, ans, out)

    def _eval_host(self, hr: _HostRuntime, trigger: str, t: float, out: list[Alert]) -> None:
        st = hr.state
        st.trigger = trigger
        for rule, cond in hr.by_trigger.get(("host", trigger), ()):
            ans = cond.fn(st, self._view, t, rule.params)
            self._step(hr, rule, None, "", t, ans, out)

    # -- the state machine --

    def _step(
        self,
        hr: _HostRuntime,
        rule: Rule,
        gpu: int | None,
        key: str,
        t: float,
        ans: Any,
        out: list[Alert],
    ) -> None:
        tk: TrackKey = (rule.id, gpu, key)
        tr = hr.tracks.get(tk)
        if isinstance(ans, dict):
            if tr is None:
                tr = hr.tracks[tk] = _Track()
            tr.clearing_since = None
            if tr.alert is not None:
                tr.values = ans
                return
            if tr.pending_since is None or tr.pending_since > t:
                tr.pending_since = t
            if t - tr.pending_since >= rule.for_s and t >= tr.cooldown_until:
                self._fire(hr, rule, gpu, key, t, tr, ans, out)
        elif ans == CLEAR:
            if tr is None:
                return
            if tr.alert is not None and t < tr.alert.started_t:
                return  # back-filled data from before a restored alert fired
            tr.pending_since = None
            if tr.alert is None:
                if tr.cooldown_until <= t and (tr.snoozed_until is None or tr.snoozed_until <= t):
                    del hr.tracks[tk]  # nothing left to remember
                return
            if tr.clearing_since is None:
                tr.clearing_since = t
            if t - tr.clearing_since >= rule.clear_for_s:
                self._resolve(tr, rule, t, out)
        # HOLD: neither condition holds (hysteresis band, or no data): timers stay.

    def _fire(
        self,
        hr: _HostRuntime,
        rule: Rule,
        gpu: int | None,
        key: str,
        t: float,
        tr: _Track,
        ans: dict[str, Any],
        out: list[Alert],
    ) -> None:
        st = hr.state
        severity = ans.pop("_severity", rule.severity)
        since = tr.pending_since if tr.pending_since is not None else t
        evidence: dict[str, Any] = {
            "values": ans,
            "thresholds": {k: v for k, v in rule.params.items() if isinstance(v, (int, float))},
            "since_t": since,
            "window_s": round(t - since, 3),
            "for_s": rule.for_s,
        }
        cfg = st.cfg
        if cfg is not None and cfg.price_per_hour is not None:
            evidence["price_per_hour"] = cfg.price_per_hour
            evidence["currency"] = cfg.currency
        if gpu is not None and st.hello is not None:
            info = st.hello.gpu(gpu)
            if info is not None:
                evidence["gpu_name"] = info.name
                evidence["gpu_uuid"] = info.uuid
        if gpu is not None and rule.condition in CLOCK_CONDITIONS:
            share = clock_window(st, gpu, since, t)
            if share is not None:
                evidence["throttle"] = share.to_json()
        gpu_part = "host" if gpu is None else f"gpu{gpu}"
        key_part = f":{key}" if key else ""
        alert_id = f"{st.name}:{rule.id}:{gpu_part}{key_part}@{t:.3f}"
        snoozed = (
            tr.snoozed_until if tr.snoozed_until is not None and tr.snoozed_until > t else None
        )
        alert = Alert(
            id=alert_id,
            rule_id=rule.id,
            severity=severity,
            host=st.name,
            gpu=gpu,
            state=FIRING,
            started_t=t,
            ended_t=None,
            evidence=evidence,
            condition=rule.condition,
            key=key,
            snoozed_until=snoozed,
        )
        tr.alert, tr.values, tr.pending_since = alert, ans, None
        self._active[alert_id] = alert
        self._track_of[alert_id] = (st.name, (rule.id, gpu, key))
        self.history.append(alert)
        out.append(alert)

    def _resolve(self, tr: _Track, rule: Rule, t: float, out: list[Alert]) -> None:
        a = tr.alert
        assert a is not None
        ended = tr.clearing_since if tr.clearing_since is not None else t
        evidence = dict(a.evidence)
        evidence["last_values"] = tr.values
        evidence["duration_s"] = round(ended - float(evidence.get("since_t", a.started_t)), 3)
        if a.gpu is not None and a.condition in CLOCK_CONDITIONS:
            st = self._hosts[a.host].state if a.host in self._hosts else None
            share = (
                clock_window(st, a.gpu, float(evidence.get("since_t", a.started_t)), ended)
                if st is not None
                else None
            )
            if share is not None:
                evidence["throttle"] = share.to_json()
        done = replace(a, state=RESOLVED, ended_t=ended, evidence=evidence)
        tr.alert, tr.clearing_since = None, None
        tr.cooldown_until = ended + rule.cooldown_s
        self._active.pop(a.id, None)
        self._track_of.pop(a.id, None)
        self.history.append(done)
        out.append(done)


def _event_number(e: Event, keys: tuple[str, ...]) -> float | None:
    for k in keys:
        v = e.raw.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None
