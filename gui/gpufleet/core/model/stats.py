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
