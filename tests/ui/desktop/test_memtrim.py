"""The heap trimmer: present where glibc has malloc_trim, owned by its parent, and runs;
it empties the source lines PySide6's import hook left in linecache."""

from __future__ import annotations

import linecache
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
    assert timer.isActive()
    assert timer.interval() == int(TRIM_EVERY_S * 1000)
    assert timer.parent() is owner
    timer.timeout.emit()
    owner.deleteLater()


def test_the_trimmer_empties_linecache_at_start_and_on_each_tick(qapp: object) -> None:
    # What shiboken's import hook does for every module imported after PySide6.
    import json.decoder

    assert linecache.getlines(json.decoder.__file__)
    owner = QObject()
    timer = start_trimmer(owner)
    assert json.decoder.__file__ not in linecache.cache
    linecache.getlines(json.decoder.__file__)
    timer.timeout.emit()
    assert json.decoder.__file__ not in linecache.cache
    owner.deleteLater()
