"""What gpufleet says on a host whose provider's API changed under it (an endpoint the
adapter relies on answers 404/410, or an answer lacks what it reads): not a refused key nor
an outage, and only an update helps. Shown on the host (the fleet list's tooltip, the Cost
tab's billing cell) until a later call to the provider for that host succeeds; translated
like the alert catalogue."""

from __future__ import annotations

from gpufleet.core.text.catalogue import QT_TRANSLATE_NOOP, translated
from gpufleet.core.text.sanitize import clean

_ON_HOST = QT_TRANSLATE_NOOP(
    "ProviderDrift",
    "{provider}'s API changed ({endpoint}: {said}); gpufleet needs an update. Until then "
    "this host's billing is not synced from {provider} and provider actions on it cannot run.",
)
_UNPARTED = QT_TRANSLATE_NOOP(
    "ProviderDrift",
    "{error}. Until gpufleet is updated, this host's billing is not synced from its provider "
    "and provider actions on it cannot run.",
)
_SHORT = QT_TRANSLATE_NOOP("ProviderDrift", "provider API changed: update gpufleet")


def drift_sentence(provider: str, endpoint: str, said: str) -> str:
    """The host's line: which provider, which endpoint, what it answered, what to do."""
    text = translated("ProviderDrift", _ON_HOST)
    values = {"provider": clean(provider), "endpoint": clean(endpoint), "said": clean(said)}
    try:
        return text.format(**values)
    except (KeyError, ValueError, IndexError):  # a bad translation: use the source
        return _ON_HOST.format(**values)


def drift_error_sentence(error: str) -> str:
    """The same for a drift error that came without its parts (its English line)."""
    text = translated("ProviderDrift", _UNPARTED)
    try:
        return text.format(error=clean(error).rstrip("."))
    except (KeyError, ValueError, IndexError):
        return _UNPARTED.format(error=clean(error).rstrip("."))


def drift_word() -> str:
    """A few words for a table cell (the sentence is its tooltip)."""
    return translated("ProviderDrift", _SHORT)
