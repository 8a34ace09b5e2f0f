"""Alerts as plain immutable data: what fired, where, when, and the evidence.

The rule engine (``gpufleet.core.alerts.rules``) produces these; the UI, the CLI, the notifiers and
the actions consume them and turn them into sentences through ``gpufleet.core.text.catalogue``.
An alert never holds a sentence itself, so that it can be translated where it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

Severity = Literal["info", "warning", "critical"]
SEVERITIES: Final = ("info", "warning", "critical")
SEVERITY_RANK: Final = {"info": 0, "warning": 1, "critical": 2}

# An alert's life: firing until its clear condition held, then resolved.
AlertState = Literal["firing", "resolved"]
FIRING: Final[AlertState] = "firing"
RESOLVED: Final[AlertState] = "resolved"


@dataclass(frozen=True)
class Alert:
    """One alert, as of its latest state change.

    ``id`` is stable over the alert's life (firing → resolved) and unique per occurrence.
    ``started_t`` is when the condition had held for the rule's ``for_s`` (the firing time);
    ``evidence["since_t"]`` is when the condition first held. ``ended_t`` is when the clear
    condition first held, set once the alert resolved. All times are the samples' own
    ``t`` (epoch seconds), so replays of recorded streams give the same alerts as live.
    ``condition`` names the built-in condition (it picks the sentence); ``key`` tells apart
    several alerts of one rule on one GPU (the Xid code).
    """

    id: str
    rule_id: str
    severity: Severity
    host: str
    gpu: int | None
    state: AlertState
    started_t: float
    ended_t: float | None
    evidence: Mapping[str, Any]
    condition: str = ""
    key: str = ""
    acked: bool = False
    snoozed_until: float | None = None

    @property
    def firing(self) -> bool:
        return self.state == FIRING

    def silenced(self, t: float) -> bool:
        """True when the user acknowledged it or snoozed it past ``t`` (no notification)."""
        return self.acked or (self.snoozed_until is not None and t < self.snoozed_until)

    def to_json(self) -> dict[str, Any]:
        """A plain dict (for JSON output, webhooks and ``GPUFLEET_ALERT_JSON``)."""
        d = asdict(self)
        d["evidence"] = _plain(self.evidence)
        return d


def alert_from_json(d: Mapping[str, Any]) -> Alert:
    """The inverse of ``Alert.to_json`` (a row of the lifecycle table); ValueError when a
    field is missing or of the wrong type."""
    try:
        gpu = d.get("gpu")
        ended = d.get("ended_t")
        snoozed = d.get("snoozed_until")
        return Alert(
            id=str(d["id"]),
            rule_id=str(d["rule_id"]),
            severity=as_severity(d.get("severity")),
            host=str(d["host"]),
            gpu=None if gpu is None else int(gpu),
            state=RESOLVED if d.get("state") == RESOLVED else FIRING,
            started_t=float(d["started_t"]),
            ended_t=None if ended is None else float(ended),
            evidence=dict(d.get("evidence") or {}),
            condition=str(d.get("condition") or ""),
            key=str(d.get("key") or ""),
            acked=bool(d.get("acked")),
            snoozed_until=None if snoozed is None else float(snoozed),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"not an alert record: {e}") from None


def _plain(value: Any) -> Any:
    """Mappings and tuples turned into dicts and lists, so that json can encode them."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def severity_at_least(severity: str, minimum: str) -> bool:
    return SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK.get(minimum, 0)


def as_severity(value: object, default: Severity = "warning") -> Severity:
    """``value`` as a severity: one of ``SEVERITIES``, else ``default`` (a record or a rule
    file from elsewhere may hold anything)."""
    for s in SEVERITIES:
        if value == s:
            return s
    return default
