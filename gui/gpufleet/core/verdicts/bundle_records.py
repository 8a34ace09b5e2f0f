"""What happened to a host in a bundle's window besides its samples: kills, the actions run
for its alerts, and what its watchdog said.

Kills and actions reach the audit log (``history/audit``: every GUI and CLI kill, every rule
and provider action, fsync'd) whether or not a history store was open at the time, so the
bundle reads them from there as well as from the store's ``kills`` table and keeps each once.
The watchdog's events come from the store's events (the sampler streams them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpufleet.core.history.timeparse import format_utc

# The fields of a kill as a reader of the bundle asks for them: who, what, when, the result.
_KILL_FIELDS = (
    "by",
    "host",
    "pid",
    "host_pid",
    "gpu",
    "user",
    "name",
    "cmd",
    "signal",
    "tree",
    "sudo",
    "result",
    "message",
    "memory",
)


def _in_window(entry: Mapping[str, Any], host: str, t0: float, t1: float) -> bool:
    t = entry.get("t")
    return entry.get("host") == host and isinstance(t, (int, float)) and t0 <= t <= t1


def _kill_record(entry: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"t": float(entry["t"]), "when": format_utc(float(entry["t"]))}
    out.update({k: entry[k] for k in _KILL_FIELDS if k in entry})
    return out


def kills_in_window(
    stored: Iterable[Mapping[str, Any]],
    audit: Sequence[Mapping[str, Any]],
    host: str,
    t0: float,
    t1: float,
) -> list[dict[str, Any]]:
    """Every kill of ``host`` in [t0, t1], oldest first: the store's and the audit log's,
    each once (the same PID and start time at the same moment is one kill)."""
    seen: set[tuple[Any, ...]] = set()
    out: list[dict[str, Any]] = []
    from_audit = (e for e in audit if e.get("action") == "kill")
    for e in [*stored, *from_audit]:
        if not _in_window(e, host, t0, t1):
            continue
        key = (e.get("pid"), e.get("start_ticks"), round(float(e["t"]), 1))
        if key in seen:
            continue
        seen.add(key)
        out.append(_kill_record(e))
    out.sort(key=lambda r: float(r["t"]))
    return out


def actions_in_window(
    audit: Sequence[Mapping[str, Any]], host: str, t0: float, t1: float
) -> list[dict[str, Any]]:
    """The rule and provider actions the app ran for ``host`` in [t0, t1] (not kills)."""
    out = [
        {"when": format_utc(float(e["t"])), **e}
        for e in audit
        if e.get("action") != "kill" and _in_window(e, host, t0, t1)
    ]
    out.sort(key=lambda r: float(r["t"]))
    return out


def watchdog_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The watchdog's own events (armed checks, warnings, actions, stand-downs)."""
    return [
        {"when": format_utc(float(e.get("t") or 0.0)), **e}
        for e in events
        if e.get("type") == "watchdog"
    ]


def record_lines(
    kills: Sequence[Mapping[str, Any]],
    actions: Sequence[Mapping[str, Any]],
    watchdog: Sequence[Mapping[str, Any]],
) -> list[str]:
    """The summary's part on them: one line each."""
    lines = [f"Kills: {len(kills)}" + (":" if kills else "")]
    for k in kills:
        lines.append(
            f"  {k['when']} {k.get('by') or '?'} sent {k.get('signal') or '?'} to PID "
            f"{k.get('pid')} ({k.get('name') or '?'}, GPU {k.get('gpu')}): {k.get('result')}"
        )
    lines.append(f"Actions: {len(actions)}" + (":" if actions else ""))
    for a in actions:
        what = a.get("type") or a.get("action") or "?"
        lines.append(f"  {a['when']} {what} for {a.get('rule_id') or '?'}: {a.get('result')}")
    lines.append(f"Watchdog events: {len(watchdog)}" + (":" if watchdog else ""))
    for w in watchdog:
        lines.append(f"  {w['when']} [{w.get('phase')}] {w.get('message')}")
    return lines
