"""A container's process snapshot keeps its mapping through the history store: the PID here,
NVML's host PID and how sure the match was (a replay must not show a tenant's entry as ours)."""

from __future__ import annotations

import time
from pathlib import Path

from gpufleet.core.history.store import Store
from gpufleet.core.wire.messages import Proc, Procs
from gpufleet_sampler import protocol

from tests.support import synth


def test_mapping_survives_the_store(tmp_path: Path) -> None:
    now = time.time()
    procs = (
        Proc(0, 7, 5000, "root", "python3", "python3 train.py", 1 << 30, 90.0, "C", 412345,
             protocol.MAP_PROBABLE, True, False),
        Proc(1, 31, None, None, None, None, 5 << 30, None, "C", 31, protocol.MAP_NOT_HERE,
             False, False),
        Proc(1, 12, 5100, "root", "pt_worker", "python3 -c w", None, None, None, None,
             protocol.MAP_NO_MEMORY, True, True),
    )  # fmt: skip
    with Store(tmp_path / "h.sqlite") as st:
        st.write("h", synth.make_hello("h", 2))
        st.write("h", Procs(seq=5, t=now - 10, procs=procs))
        st.flush()
        (snap,) = st.procs("h", now - 60, now)
    assert snap.procs == procs
    assert [p.here for p in snap.procs] == [True, False, True]
    assert not snap.procs[1].killable
