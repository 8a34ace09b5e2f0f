"""What gpufleet says when a provider action (a rule's stop or terminate through the
provider's API) did not happen: the instance keeps billing, so it is a critical alert that
names the host, says what failed and what to do. Translated like the alert catalogue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpufleet.core.text.alerts import OWN_TEXT
from gpufleet.core.text.sanitize import clean
from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

_TITLE = QT_TRANSLATE_NOOP("Alerts", "{host}: the provider did not {action} the instance")
_SENTENCE = QT_TRANSLATE_NOOP(
    "Alerts",
    "gpufleet asked the provider to {action} the instance of {host}, and it did not happen: "
    "{error}. The instance is still billed. Stop it in the provider's console now, then check "
    "the rule's provider action.",
)
_DRIFT_TODO = QT_TRANSLATE_NOOP(
    "Alerts",
    "The provider's API changed under gpufleet: until gpufleet is updated, its provider "
    "actions and billing sync cannot work for this provider.",
)


def _fill(template: str, values: Mapping[str, Any]) -> str:
    safe = {k: clean(v) for k, v in values.items()}
    text = translated("Alerts", template)
    try:
        return text.format_map(safe)
    except (KeyError, ValueError, IndexError):  # a bad translation: use the source
        return template.format_map(safe)


def _values(host: str, evidence: Mapping[str, Any]) -> dict[str, Any]:
    v: Mapping[str, Any] = evidence.get("values") or {}
    return {
        "host": host,
        "action": str(v.get("action") or "stop"),
        "error": str(v.get("error") or "?").rstrip("."),
    }


def title(host: str, evidence: Mapping[str, Any]) -> str:
    return _fill(_TITLE, _values(host, evidence))


def sentence(host: str, evidence: Mapping[str, Any]) -> str:
    values = _values(host, evidence)
    out = _fill(_SENTENCE, values)
    if "API changed" in values["error"]:
        out += " " + translated("Alerts", _DRIFT_TODO)
    return out


OWN_TEXT["provider_action"] = (title, sentence)
