"""One test at a time holds a shared keyring entry: the run has one Secret Service (tools/
run-tests), and the pytest-xdist workers share it, so two test files that store the same entry
(the Alertmanager token) would overwrite each other's value between set and use."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def holding(entry: str) -> Iterator[None]:
    """An exclusive lock named for ``entry`` across the run's worker processes; the lock file
    lies in the run's private keyring directory (where there is one), so two runs don't wait
    on each other."""
    root = Path(os.environ.get("GPUFLEET_TEST_KEYRING_HOME") or tempfile.gettempdir())
    with open(root / f"entry-{entry}.lock", "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes
        yield
