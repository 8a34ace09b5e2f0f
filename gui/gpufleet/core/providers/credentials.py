"""Where a provider's API key comes from: its own environment variable, else the keyring.

The environment variable (``VAST_API_KEY``, ``RUNPOD_API_KEY``, ``LAMBDA_API_KEY``: the
names the providers' own CLIs read) wins, so scripts and CI need no keyring; otherwise the
key stored by ``gpufleet providers login NAME`` in the OS keyring under ``provider/NAME``.
Never in config.toml, logs or error messages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from gpufleet.core.config import secrets
from gpufleet.core.providers.base import ProviderError
from gpufleet.core.text import provider_hosts

ENV_VARS: dict[str, str] = {
    "vast": "VAST_API_KEY",
    "runpod": "RUNPOD_API_KEY",
    "lambda": "LAMBDA_API_KEY",
}


def keyring_name(provider: str) -> str:
    # A slash never appears in a host name, so this entry cannot collide with a host's.
    return f"provider/{provider}"


@dataclass(frozen=True)
class ApiKey:
    value: str
    source: str  # "env:VAST_API_KEY" or "keyring", for messages (never the value)

    def __repr__(self) -> str:  # a key in a traceback's locals would leak otherwise
        return f"ApiKey(source={self.source!r})"


def hint(provider: str) -> str:
    """How to set the key, for error messages: its variable, or Settings ▸ Providers."""
    return provider_hosts.key_where(provider, ENV_VARS[provider])


def find_key(provider: str) -> ApiKey:
    """The key to use; ProviderError ``no_key`` (with what to do) when there is none."""
    var = ENV_VARS[provider]
    value = os.environ.get(var, "").strip()
    if value:
        return ApiKey(value, f"env:{var}")
    try:
        stored = secrets.get_secret(keyring_name(provider), "api-key")
    except secrets.SecretStoreUnavailable as e:
        # The keyring's own advice (ssh-agent...) is about host secrets: not for an API key.
        text = provider_hosts.keyring_unreadable(provider, var, e.reason)
        raise ProviderError(text, "no_key") from None
    if not stored:
        raise ProviderError(provider_hosts.no_key(provider, provider, var), "no_key")
    return ApiKey(stored, "keyring")


def store_key(provider: str, value: str) -> None:
    """Raises SecretStoreUnavailable (its message says what to do)."""
    secrets.set_secret(keyring_name(provider), "api-key", value)


def delete_key(provider: str) -> bool:
    return secrets.delete_secret(keyring_name(provider), "api-key")
