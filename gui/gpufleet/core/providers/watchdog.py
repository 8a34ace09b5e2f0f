"""The laptop's side of the watchdog on the instance: the options of an arm request and one
line describing the watchdog's state (for the CLI and the GUI); the request itself goes
through ``Fleet.watchdog`` (the sampler's ``watchdog`` subcommand over the host's
transport)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from gpufleet.core.wire.messages import Event, Hello

WATCHDOG_ACTIONS = ("provider", "shutdown", "command")


def arm_options(
    action: str, command: str | None, idle_s: float, grace_s: float, dry_run: bool
) -> list[str]:
    """The sampler's ``watchdog arm`` options; ValueError with one clear line."""
    if action not in WATCHDOG_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(WATCHDOG_ACTIONS)}, not {action!r}")
    if action == "command" and not (command or "").strip():
        raise ValueError("the command action needs a command to run")
    if idle_s < 0 or grace_s < 0:
        raise ValueError("idle and grace times must not be negative")
    opts = ["--action", action, "--idle-s", f"{idle_s:g}", "--grace-s", f"{grace_s:g}"]
    if action == "command" and command:
        opts += ["--command", command]
    if dry_run:
        opts.append("--dry-run")
    return opts


def describe(host: str, st: Mapping[str, Any], now: float | None = None) -> str:
    """``box: watchdog pending: action provider, idle 900 s, grace 300 s; acts in 120 s
    unless cancelled``, then whether its action can run (``ready: …`` or ``cannot act now:
    …``) and the last action, a line each."""
    now = time.time() if now is None else now
    phase = st.get("phase", "?")
    if not st.get("armed"):
        line = f"{host}: watchdog disarmed"
    else:
        dry = " (dry run)" if st.get("dry_run") else ""
        line = (
            f"{host}: watchdog {phase}{dry}: action {st.get('action')}, idle "
            f"{float(st.get('idle_s') or 0):g} s, grace {float(st.get('grace_s') or 0):g} s"
        )
    if phase == "pending" and st.get("deadline_t"):
        left = float(st["deadline_t"]) - now
        line += f"; acts in {max(0.0, left):.0f} s unless cancelled"
    ready = st.get("ready")
    if st.get("armed") and isinstance(ready, Mapping) and ready.get("reason"):
        head = "ready" if ready.get("ok") else "cannot act now"
        line += f"\n  {head}: {ready['reason']}"
    acted = st.get("acted")
    if isinstance(acted, Mapping):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(acted.get("t") or 0)))
        line += f"\n  last action {when}: {acted.get('action')}: {acted.get('outcome')}"
    return line


def current_state(hello: Hello | None, events: Sequence[Event]) -> dict[str, Any] | None:
    """The watchdog's state as the laptop last heard it: ``hello``'s copy (at attach), then
    every ``watchdog`` event since (warned, acted, stood down). None when it was never armed
    as far as the stream says. Its ``ready`` is hello's, then the last re-check's event."""
    st: dict[str, Any] | None = None
    base = hello.raw.get("watchdog") if hello is not None else None
    if isinstance(base, Mapping):
        st = dict(base)
    for ev in events:
        if ev.type != "watchdog":
            continue
        st = dict(st or {"armed": True})
        for key in ("phase", "action", "alert", "deadline_t", "dry_run"):
            if key in ev.raw:
                st[key] = ev.raw[key]
        if isinstance(ev.raw.get("ready"), bool):
            # The daemon's re-check: the action became impossible (or possible again).
            st["ready"] = {"ok": ev.raw["ready"], "reason": ev.raw.get("outcome"), "t": ev.t}
        if ev.raw.get("phase") == "done":
            st["acted"] = {
                "t": ev.t,
                "action": ev.raw.get("action"),
                "ok": ev.raw.get("ok"),
                "outcome": ev.raw.get("outcome"),
            }
        st["message"] = ev.message
    return st
