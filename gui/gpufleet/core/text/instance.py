"""What gpufleet says when it does not start because another instance already uses the data
dir (``core/config/instance_lock``): who holds it, why two would be harmful, what to do."""

from __future__ import annotations

from gpufleet.core.text.sanitize import clean
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

ROLE_WINDOW = QT_TRANSLATE_NOOP("Instance", "the gpufleet window")
ROLE_SERVE = QT_TRANSLATE_NOOP("Instance", "gpufleet serve")
_ANOTHER = QT_TRANSLATE_NOOP("Instance", "another gpufleet")
_PID_SINCE = QT_TRANSLATE_NOOP("Instance", "{who} (pid {pid}, since {since})")
_BUSY = QT_TRANSLATE_NOOP(
    "Instance",
    "{who} already uses the data dir {path}: a second gpufleet on it would send every "
    "notification and run every action and provider stop twice, so this one does not start. "
    "Use the one that is open (or quit it first), or give this one a data dir of its own with "
    "GPUFLEET_DATA_DIR.",
)
_TITLE = QT_TRANSLATE_NOOP("Instance", "gpufleet is already running")


def _fill(template: str, **values: object) -> str:
    text = translated("Instance", template)
    try:
        return text.format(**values)
    except (KeyError, ValueError, IndexError):  # a bad translation: the source
        return template.format(**values)


def busy_title() -> str:
    return translated("Instance", _TITLE)


def holder_name(role: str | None, pid: object, since: str | None) -> str:
    """Who holds a data dir: "the gpufleet window (pid 4242, since 2026-12-01 09:14)".
    ``role`` is one of the ROLE_* sources (translated here) or None when unknown."""
    who = translated("Instance", role) if role in (ROLE_WINDOW, ROLE_SERVE) else None
    who = who or translated("Instance", _ANOTHER)
    if isinstance(pid, int) and since:
        who = _fill(_PID_SINCE, who=who, pid=pid, since=since)
    return who


def busy_message(path: str, who: str) -> str:
    """Why this instance does not start; ``who`` from holder_name."""
    return _fill(_BUSY, who=who, path=clean(path))
