"""Running the ``gpufleet`` command as a real subprocess in the test's own dirs (the
environment is the test's: its config and data dirs, its keyring)."""

from __future__ import annotations

import os
import subprocess
import sys


def gpufleet(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufleet", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
        check=False,
    )
