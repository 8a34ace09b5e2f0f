"""What gpufleet says about provider-backed hosts in the window: why a stopped or ended
instance is not connected to, where a provider's API key goes (its environment variable, or
Settings ▸ Providers in the window), and how a key test came out."""

from __future__ import annotations

from gpufleet.core.text.translate import QT_TRANSLATE_NOOP, translated

_PARKED = {
    "storage": QT_TRANSLATE_NOOP(
        "ProviderHosts",
        "not connecting: the instance is stopped at the provider (billed for its storage "
        "only); gpufleet connects again when it runs",
    ),
    "ended": QT_TRANSLATE_NOOP(
        "ProviderHosts", "not connecting: the instance has ended at the provider"
    ),
}
_KEY_WHERE = QT_TRANSLATE_NOOP(
    "ProviderHosts",
    "set {var}, or enter the key in Settings ▸ Providers (or run `gpufleet providers login "
    "{provider}`)",
)
_NO_KEY = QT_TRANSLATE_NOOP("ProviderHosts", "no {label} API key: {where}")
_KEYRING_UNREADABLE = QT_TRANSLATE_NOOP(
    "ProviderHosts",
    "no {label} API key: {var} is not set and the OS keyring cannot be read ({why}); set "
    "{var}, or unlock the keyring and enter the key in Settings ▸ Providers",
)
_KEYRING_WHY = {
    "no_keyring": QT_TRANSLATE_NOOP("ProviderHosts", "no keyring service is running"),
    "locked": QT_TRANSLATE_NOOP("ProviderHosts", "it is locked"),
    "plaintext": QT_TRANSLATE_NOOP("ProviderHosts", "its backend keeps secrets in plain files"),
    "failed": QT_TRANSLATE_NOOP("ProviderHosts", "it failed"),
}


def parked_reason(state: str) -> str | None:
    """Why a host in this billing state is not connected to; None: it is (running)."""
    text = _PARKED.get(state)
    return translated("ProviderHosts", text) if text else None


def key_where(provider: str, var: str) -> str:
    return translated("ProviderHosts", _KEY_WHERE).format(var=var, provider=provider)


def no_key(label: str, provider: str, var: str) -> str:
    return translated("ProviderHosts", _NO_KEY).format(label=label, where=key_where(provider, var))


def keyring_unreadable(label: str, var: str, reason: str) -> str:
    why = translated("ProviderHosts", _KEYRING_WHY.get(reason, _KEYRING_WHY["failed"]))
    return translated("ProviderHosts", _KEYRING_UNREADABLE).format(label=label, var=var, why=why)
