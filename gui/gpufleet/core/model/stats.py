"""What the pipeline hub counts, once a second: plain data the status bar shows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HubStats:
    """What the hub counted, once a second."""

    samples_per_s: float
    samples_total: int
    history_bytes: int | None
    dropped: int  # events the fleet could not queue for us (we fell behind)
    bad_batches: int  # batches a stage failed on (logged)
    store_errors: int = 0  # batches or records the history store could not commit (logged)
    store_last_error: str | None = None
    rate_limited: int = 0  # events and errors left out of history by the per-host flood limit
