"""The heap trimmer: present where glibc has malloc_trim, owned by its parent, and runs."""

from __future__ import annotations

import sys

import pytest
from gpufleet.ui.desktop.memtrim import TRIM_EVERY_S, _malloc_trim, start_trimmer
from PySide6.QtCore import QObject


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trimmer_runs_every_minute_and_dies_with_its_owner(qapp: object) -> None:
    trim = _malloc_trim()
    if trim is None:
        pytest.skip("this C library has no malloc_trim (musl)")
    trim()  # returns memory; must not crash with a live Qt application
    owner = QObject()
    timer = start_trimmer(owner)
    assert timer is not None and timer.isActive()
    assert timer.interval() == int(TRIM_EVERY_S * 1000)
    assert timer.parent() is owner
    timer.timeout.emit()
    owner.deleteLater()
