"""The wording of an alert in the window and the tray: the core's catalogue, with a plain
fallback so that a sentence that fails to format never hides the alert itself."""

from __future__ import annotations

from typing import Any

from gpufleet.core.text import catalogue


def alert_text(alert: Any, now: float | None = None) -> str:
    """The alert as a sentence (with ``now``: a firing one says how long it has held)."""
    try:
        return str(catalogue.alert_sentence(alert, now))
    except Exception:  # a formatting bug: the alert still shows, with its host and GPU
        where = f"{alert.host}" + (f" GPU {alert.gpu}" if alert.gpu is not None else "")
        ev = ", ".join(f"{k} {v}" for k, v in list(dict(alert.evidence).items())[:3])
        return f"{where} — {alert.rule_id.replace('_', ' ')}" + (f" ({ev})" if ev else "")


def alert_title(alert: Any) -> str:
    try:
        return str(catalogue.alert_title(alert))
    except Exception:  # as above
        return str(alert.rule_id).replace("_", " ")
