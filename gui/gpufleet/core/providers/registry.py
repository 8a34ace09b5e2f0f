"""The providers gpufleet knows, by name, and those it knows have no API.

``open_provider("vast", api_url=None)`` finds the key (environment, then keyring) and
returns the adapter; the base URL is ``api_url``, else ``GPUFLEET_VAST_API_URL`` (and so on),
else the provider's own. AutoDL and most Chinese platforms have no public API for ordinary
instances: there the bill stops by powering off, inside the instance or in the console.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from gpufleet.core.providers.base import Provider, ProviderError
from gpufleet.core.providers.credentials import find_key
from gpufleet.core.providers.http import HttpSettings
from gpufleet.core.providers.lambda_cloud import LambdaCloud
from gpufleet.core.providers.runpod import RunPod
from gpufleet.core.providers.vast import Vast

Factory = Callable[[str, str | None, HttpSettings | None], Provider]

PROVIDERS: dict[str, Factory] = {
    "vast": Vast,
    "runpod": RunPod,
    "lambda": LambdaCloud,
}

NO_API: dict[str, str] = {
    "autodl": "AutoDL has no public API for ordinary instances: power the instance off "
    "(`shutdown -h now` inside it, or 关机 in the console). GPU billing stops and the disk is "
    "kept (released after about 15 days stopped)",
}


def names() -> list[str]:
    return list(PROVIDERS)


def open_provider(
    name: str,
    api_url: str | None = None,
    settings: HttpSettings | None = None,
    key: str | None = None,
) -> Provider:
    """The adapter of ``name`` with its key (``key``, e.g. one typed in Settings to test it
    before storing it; else the environment's or the keyring's)."""
    if name in NO_API:
        raise ProviderError(NO_API[name], "not_supported")
    factory = PROVIDERS.get(name)
    if factory is None:
        raise ProviderError(
            f"unknown provider {name!r} (known: {', '.join(PROVIDERS)}; without an API: "
            f"{', '.join(NO_API)})",
            "failed",
        )
    # GPUFLEET_VAST_API_URL and the like: another base URL for the app's own requests (a
    # proxy, or a test server), where no --api-url is given.
    url = api_url or os.environ.get(f"GPUFLEET_{name.upper()}_API_URL") or None
    return factory(key or find_key(name).value, url, settings)
