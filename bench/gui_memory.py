"""Where the GUI's memory goes: the RSS of each stage of bench/gui.py's setup, taken apart.

bench/gui.py measures the window under load over a run of many minutes; this script builds
the same state synchronously (no timers, no threads racing), one stage at a time, and prints
the RSS after each (after ``gc.collect()`` and ``malloc_trim(0)``, as the app trims every
minute) with what the stage holds:

1. the imports (Python, NumPy, Qt, pyqtgraph, gpufleet), and the QApplication;
2. an hour of data (``--minutes``) through the real pipeline hub's stages: the live ring
   buffers, the rule engine with cost, the history store on disk;
3. the main window built and shown, then every tab drawn for every one of a few hosts;
4. more data fed while the tabs are redrawn in turn (``--steady`` rounds): flat after
   warm-up means these stay level.

``--trace`` adds tracemalloc's largest Python allocations (NumPy's arrays included) by file
and line at the end of stages 2 and 3 and their growth in stage 4; ``--hosts 0`` is the
baseline of an empty window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui_memory.py --hosts 32 [--trace]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "gui"), str(ROOT / "remote")]

from bench.gui import Feed, rss_mib  # noqa: E402

TRACE_FRAMES = 1


def trimmer() -> Callable[[], None]:
    """gc.collect() and glibc's malloc_trim(0): what the app's trimmer does every minute."""
    import ctypes
    import ctypes.util

    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        fn = None

    def settle() -> None:
        gc.collect()
        if fn is not None:
            fn(0)

    return settle


class Stages:
    """Prints each stage's RSS, its growth, and (with tracing) the lines that grew most."""

    def __init__(self, trace: bool, top: int) -> None:
        self.settle = trimmer()
        self.trace = trace
        self.top = top
        self.last = rss_mib()
        self.snap: tracemalloc.Snapshot | None = None
        self.first = self.last
        print(f"{'stage':<58}{'RSS MiB':>9}{'+MiB':>8}")

    def mark(self, name: str, detail: str = "", show_top: bool = False) -> float:
        self.settle()
        r = rss_mib()
        print(f"{name:<58}{r:>9.1f}{r - self.last:>+8.1f}")
        if detail:
            print("    " + detail)
        self.last = r
        if self.trace:
            snap = tracemalloc.take_snapshot().filter_traces(
                (tracemalloc.Filter(False, tracemalloc.__file__),)
            )
            if show_top:
                self.print_top(snap)
            self.snap = snap
        return r

    def print_top(self, snap: tracemalloc.Snapshot) -> None:
        stats = snap.compare_to(self.snap, "lineno") if self.snap is not None else []
        total = sum(s.size for s in snap.statistics("filename"))
        print(f"    traced Python + NumPy allocations: {total / 2**20:.1f} MiB; largest lines:")
        for st in sorted(snap.statistics("lineno"), key=lambda s: -s.size)[: self.top]:
            print(f"      {st.size / 2**20:8.2f} MiB {st.count:>8} blocks  {where(st.traceback)}")
        grown = [s for s in stats if s.size_diff > 256 * 1024][: self.top]
        if grown:
            print("    grown most in this stage:")
            for st in grown:
                print(f"      {st.size_diff / 2**20:+8.2f} MiB  {where(st.traceback)}")


def where(tb: tracemalloc.Traceback) -> str:
    fr = tb[0]
    name = fr.filename
    for root in (str(ROOT) + "/", sys.prefix + "/"):
        name = name.replace(root, "")
    return f"{name}:{fr.lineno}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--minutes", type=int, default=60, help="simulated minutes fed first")
    ap.add_argument("--steady", type=int, default=3, help="rounds of 5 more minutes + redraws")
    ap.add_argument("--select", type=int, default=4, help="hosts selected in turn per tab")
    ap.add_argument("--trace", action="store_true", help="tracemalloc by file and line")
    ap.add_argument("--top", type=int, default=14)
    args = ap.parse_args()
    if args.trace:
        tracemalloc.start(TRACE_FRAMES)
    stages = Stages(args.trace, args.top)
    stages.mark("python, before the app's imports")
    import numpy  # noqa: F401
    from gpufleet.core.fleet.events import HostMessage, HostStatus
    from gpufleet.core.history.store import Store
    from gpufleet.core.live.buffers import LiveBuffers
    from gpufleet.core.pipeline.alerting import Alerting
    from gpufleet.core.pipeline.build import load_rule_engine
    from gpufleet.core.pipeline.hub import PipelineHub
    from gpufleet.ui.app import make_qapp, setup_theme
    from gpufleet.ui.controllers.bridge import FleetBridge
    from gpufleet.ui.window.main_window import MainWindow

    from tests.support.synth import make_procs

    stages.mark("imports: NumPy, PySide6, pyqtgraph, gpufleet")
    qapp = make_qapp()
    theme = setup_theme(qapp, dark=True)
    stages.mark("QApplication and theme")

    from gpufleet.core.config.hostconfig import HostConfig

    feed = Feed(args.hosts, args.gpus)
    cfgs = [HostConfig(name=h, price_per_hour=2.0 + i % 7) for i, h in enumerate(feed.hosts)]
    stages.mark("the benchmark's own feed (an hour of rows, shared)")
    live = LiveBuffers(window_s=3600)
    store = Store(Path(tempfile.mkdtemp(prefix="gpufleet-bench-mem-")) / "history.sqlite")
    rules = load_rule_engine(cfgs, strict=False)
    hub = PipelineHub(None, live=live, store=store, alerting=Alerting(rules))  # type: ignore[arg-type]
    t0 = time.time() - (args.minutes + 5 * args.steady) * 60
    clock = [t0]
    k = [0]

    def feed_minutes(minutes: int) -> None:
        for _ in range(minutes * 60):
            t = t0 + k[0]
            clock[0] = t
            batch = [HostMessage(h, feed.sample(h, t, k[0])) for h in feed.hosts]
            if k[0] % 10 == 0:
                batch += [
                    HostMessage(h, make_procs(t, feed.seq[h] + 1, args.gpus)) for h in feed.hosts
                ]
            hub._handle(batch)
            if k[0] % 2 == 0:
                hub._tick()
            k[0] += 1
        store.flush()

    hub._handle([HostMessage(h, feed.hellos[h]) for h in feed.hosts])
    hub._handle([HostStatus(h, "streaming", None, t0) for h in feed.hosts])
    stages.mark("hellos: the live rings allocated", ring_detail(live))
    feed_minutes(args.minutes)
    stages.mark(
        f"{args.minutes} min of data: live, rules, cost, store", rules_detail(rules), show_top=True
    )

    bridge = FleetBridge(hub)
    hub.outputs = bridge
    w = MainWindow(live, cfgs, theme, clock=lambda: clock[0], remember=False)
    bridge.status_changed.connect(w.on_status)
    bridge.alerts_snapshot.connect(w.on_alerts)
    bridge.cost_updated.connect(w.on_cost)
    bridge.stats.connect(w.on_stats)
    w._timer.stop()
    for h in feed.hosts:
        w.on_status(HostStatus(h, "streaming", None, clock[0]))
    w.resize(1600, 1000)
    w.show()
    w.update_summaries()
    qapp.processEvents()
    stages.mark("window built and shown (first tab)")

    def every_tab() -> None:
        for i in range(len(w.tab_list)):
            w.tabs.setCurrentIndex(i)
            for j in range(max(1, min(args.select, len(feed.hosts)))):
                if feed.hosts:
                    w.select_host(feed.hosts[(i * 7 + j) % len(feed.hosts)])
                w.update_summaries()
                w.redraw()
                qapp.processEvents()

    every_tab()
    stages.mark("every tab drawn (hosts selected in turn)", pixmap_detail(w), show_top=True)
    for r in range(args.steady):
        feed_minutes(5)
        every_tab()
        stages.mark(
            f"steady {r + 1}: 5 more min fed, every tab redrawn",
            pixmap_detail(w),
            show_top=r == 0,
        )
    print(f"growth from the first stage: {stages.last - stages.first:+.1f} MiB")
    w.close()
    store.close()
    return 0


def ring_detail(live: object) -> str:
    """What the live buffers' NumPy arrays hold, by type."""
    import collections

    import numpy as np

    rings = getattr(live, "_rings", {})
    by_type: collections.Counter[str] = collections.Counter()
    for r in rings.values():
        arrays = [a for a in vars(r).values() if isinstance(a, np.ndarray)]
        arrays += list(getattr(getattr(r, "cols", None), "blocks", []))
        for a in arrays:
            by_type[str(a.dtype)] += a.nbytes
    total = sum(by_type.values())
    kinds = ", ".join(f"{k} {v / 2**20:.1f}" for k, v in by_type.most_common())
    return f"live rings: {len(rings)} hosts, {total / 2**20:.1f} MiB of arrays ({kinds})"


def pixmap_detail(w: object) -> str:
    """The cell pixmaps the window's tables keep (4 bytes a pixel)."""
    from gpufleet.ui.widgets.fast_table import FastTableView

    parts = []
    for view in w.findChildren(FastTableView):  # type: ignore[attr-defined]
        cached = [*view._new.values(), *view._old.values()]
        pms = [c[0] if isinstance(c, tuple) else c for c in cached]
        size = sum(pm.width() * pm.height() * 4 for pm in pms)
        parts.append(f"{len(pms)} pixmaps {size / 2**20:.1f} MiB")
    return "table cell caches: " + "; ".join(parts)


def rules_detail(rules: object) -> str:
    """What the rule engine's per-GPU clock histories hold."""
    import numpy as np

    total = 0
    n = 0
    for hr in getattr(rules, "_hosts", {}).values():
        for hist in hr.state.clock_hist.values():
            n += 1
            arrays = [getattr(hist, k, None) for k in getattr(hist, "__slots__", ())]
            total += sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
    return f"rule engine clock histories: {n} GPUs, {total / 2**20:.1f} MiB of arrays"


if __name__ == "__main__":
    sys.exit(main())
