"""Which hosts' providers changed their API under gpufleet, as the last calls found.

Why a board: the calls that find drift (the billing sync every 5 min, a rule's provider
action) run on worker threads and end in the log, the status line and an alert; the host
itself must say it too, and keep saying it until a later call for that host succeeds. Those
threads report here (``report``); the window reads ``sentences`` when it redraws.
"""

from __future__ import annotations

import threading

from gpufleet.core.providers.base import ProviderError
from gpufleet.core.text.provider_drift import drift_error_sentence, drift_sentence


class DriftBoard:
    """Each host's last drift error, until a call for it succeeds (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_host: dict[str, ProviderError] = {}

    def report(self, host: str, error: ProviderError | None) -> None:
        """A call to the host's provider ended: ``error`` when it found drift (other errors
        are not drift and change nothing), None when it succeeded (the note goes)."""
        with self._lock:
            if error is None:
                self._by_host.pop(host, None)
            elif error.kind == "api_changed":
                self._by_host[host] = error

    def errors(self) -> dict[str, ProviderError]:
        with self._lock:
            return dict(self._by_host)

    def sentences(self) -> dict[str, str]:
        """Host → the sentence to show on it, in the user's language."""
        return {host: host_sentence(e) for host, e in self.errors().items()}


def host_sentence(e: ProviderError) -> str:
    d = e.drift
    return drift_sentence(d.provider, d.endpoint, d.said) if d else drift_error_sentence(str(e))
