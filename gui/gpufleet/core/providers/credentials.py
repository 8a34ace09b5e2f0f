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
    """How to set the key, for error messages."""
    return f"set {ENV_VARS[provider]} or run `gpufleet providers login {provider}`"


def find_key(provider: str) -> ApiKey:
    """The key to use; ProviderError ``no_key`` (with what to do) when there is none."""
    var = ENV_VARS[provider]
    value = os.environ.get(var, "").strip()
    if value:
        return ApiKey(value, f"env:{var}")
    try:
        stored = secrets.get_secret(keyring_name(provider), "api-key")
    except secrets.SecretStoreUnavailable as e:
        raise ProviderError(
            f"no {provider} API key: {var} is not set and the keyring cannot be read ({e})",
            "no_key",
        ) from None
    if not stored:
        raise ProviderError(f"no {provider} API key: {hint(provider)}", "no_key")
    return ApiKey(stored, "keyring")


def store_key(provider: str, value: str) -> None:
    """Raises SecretStoreUnavailable (its message says what to do)."""
    secrets.set_secret(keyring_name(provider), "api-key", value)


def delete_key(provider: str) -> bool:
    return secrets.delete_secret(keyring_name(provider), "api-key")
