"""Times as users type them on the command line: ISO 8601, durations meaning "ago", ``now``.

``parse_time("-30m", now)`` and ``parse_time("30m", now)`` both mean 30 minutes before
``now``; ``2024-05-01T14:30`` without a zone is local time; ``...Z`` or ``...+02:00`` are
absolute. Durations may combine units (``1h30m``). A bare number of at least 10^9 is taken as
seconds since the epoch. Anything else is a ``TimeParseError`` whose text says what is
accepted.
"""

from __future__ import annotations

import re
import time
from datetime import datetime

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)([smhdw]))+$")
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
HELP = (
    "use ISO 8601 (2024-05-01T14:30, local time unless it ends in Z or +HH:MM), "
    "a duration ago (90s, 30m, 2h, 1d, 1h30m) or 'now'"
)


class TimeParseError(ValueError):
    """A time or duration that cannot be parsed (the message says what is accepted)."""


def parse_duration(s: str) -> float:
    """``90s``, ``30m``, ``2h``, ``1d``, ``1w``, ``1h30m`` → seconds."""
    text = s.strip().lower()
    if not text or not _DURATION.match(text):
        raise TimeParseError(f"bad duration {s!r}: use a number and a unit, like 90s, 30m, 2h, 1d")
    return sum(float(n) * _UNITS[u] for n, u in _PART.findall(text))


def parse_time(s: str, now: float | None = None) -> float:
    """Seconds since the epoch for ``s`` (see the module docstring)."""
    ref = time.time() if now is None else now
    text = s.strip()
    low = text.lower()
    if low == "now":
        return ref
    body = low[1:] if low.startswith("-") else low
    if body and _DURATION.match(body):
        return ref - parse_duration(body)
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if number >= 1e9:
            return number
        raise TimeParseError(f"bad time {s!r}: a duration needs a unit (30m); {HELP}")
    iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        raise TimeParseError(f"bad time {s!r}: {HELP}") from None
    return dt.timestamp()  # a naive datetime is local time, as the user wrote it


def format_utc(t: float, timespec: str = "milliseconds") -> str:
    """ISO 8601 in UTC with a ``Z``: ``2024-05-01T12:30:00.123Z``."""
    from datetime import timezone

    text = datetime.fromtimestamp(t, timezone.utc).isoformat(timespec=timespec)
    return text.replace("+00:00", "Z")
