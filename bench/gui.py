"""GUI benchmark: N hosts × 8 GPUs fed at 1 Hz (simulated time, faster than real time) through
the real FleetBridge (live buffers, rule engine, cost, history store on disk) into the real
MainWindow on Qt offscreen.

Prints, per tab, the median and 99th-percentile redraw time (refresh of the visible tab from
the ring buffers plus a synchronous repaint of its view), the fleet-summary update (list, cards,
overview rows, tray; once a second), the longest GUI-thread stall (the largest lateness of a
10 ms timer) and the RSS growth over the run (after the ring buffers were allocated and a
55-minute history prefilled, so a leak shows as a slope, not the first allocation).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui.py --hosts 32 --minutes 8
    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui.py --hosts 128 --minutes 4
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import queue
import resource
import statistics
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
# The repository root: the benchmarks use the tests' own helpers (tests.support), not copies.
sys.path[:0] = [str(ROOT), str(ROOT / "gui"), str(ROOT / "remote")]

from gpufleet.core.alerts.rules import RuleEngine  # noqa: E402
from gpufleet.core.config.hostconfig import HostConfig  # noqa: E402
from gpufleet.core.fleet.events import HostMessage, HostStatus  # noqa: E402
from gpufleet.core.live.buffers import LiveBuffers  # noqa: E402
from gpufleet.core.wire.messages import Hello, Sample, Value  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEvent, QObject  # noqa: E402

from tests.support.synth import make_hello, make_procs, rows_of, sample_values  # noqa: E402

if TYPE_CHECKING:
    from gpufleet.ui.window.main_window import MainWindow

STARTUP_S = 2.0


def rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


class Feed:
    """Per host: one hour of distinct synthetic rows (values repeat hourly), served as
    Sample messages at successive simulated seconds.

    The hour is kept as one NumPy array and each second's rows are built when first asked
    for (every host gets the same rows at the same second): built all at once as Python
    tuples they held ~50 MiB, which the RSS of the GUI under test counted as its own."""

    def __init__(self, n_hosts: int, gpus: int) -> None:
        self.hosts = [f"gpu-{i:03d}" for i in range(n_hosts)]
        self.hellos: dict[str, Hello] = {h: make_hello(h, gpus) for h in self.hosts}
        # Shared by all hosts (value content is not the point).
        _, self.values = sample_values(0.0, 3600, gpus, 1.0, seed=1)
        self._rows: tuple[int, tuple[tuple[Value, ...], ...]] = (-1, ())
        self.seq = {h: 1 for h in self.hosts}
        self.gpus = gpus

    def rows(self, i: int) -> tuple[tuple[Value, ...], ...]:
        k = i % len(self.values)
        if self._rows[0] != k:
            self._rows = (k, rows_of(self.values[k : k + 1])[0])
        return self._rows[1]

    def sample(self, host: str, t: float, i: int) -> Sample:
        self.seq[host] += 1
        hello = self.hellos[host]
        return Sample(self.seq[host], t, t, hello.columns, self.rows(i))


class PaintTimer(QObject):
    """Times the paints of the views of the redraw in ``pending`` (adds them to it)."""

    def __init__(self, pending: dict[str, object]) -> None:
        super().__init__()
        self.busy = False
        self.pending = pending

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        if ev.type() != QEvent.Type.Paint or self.busy:
            return False
        self.busy = True
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            # Deliver the paint event now (still inside Qt's paint of this widget).
            QCoreApplication.sendEvent(obj, ev)
        finally:
            self.busy = False
        pending = self.pending
        if pending and obj in views_of(pending["tab"]):
            pending["ms"] = float(pending["ms"]) + (time.perf_counter() - t0) * 1000  # type: ignore[arg-type]
            pending["cpu"] = float(pending["cpu"]) + (time.thread_time() - c0) * 1000  # type: ignore[arg-type]
        return True


class RedrawTimes:
    """Each tab's redraw times: the tab's refresh plus the paints of its views that follow
    it (Qt paints in a later turn of the event loop, only what was invalidated, as in the
    app). The paints are timed by an event filter on the views' viewports; a redraw is
    recorded when the next timer tick comes."""

    def __init__(self, w: MainWindow, names: tuple[str, ...]) -> None:
        self.w = w
        self.names = names
        self.ms: dict[str, list[float]] = {n: [] for n in names}
        self.cpu: dict[str, list[float]] = {n: [] for n in names}
        self.summary_ms: list[float] = []
        self.skipped = 0
        self.pending: dict[str, object] = {}
        self.orig_redraw, self.orig_summaries = w.redraw, w.update_summaries

    def install(self) -> None:
        """Time the window's redraws and summaries from now on."""
        paint_timer = self.paint_timer = PaintTimer(self.pending)
        for tab in self.w.tab_list:
            for vp in views_of(tab):
                vp.installEventFilter(paint_timer)
        self.w.redraw = self.redraw  # type: ignore[method-assign]
        self.w.update_summaries = self.summaries  # type: ignore[method-assign]

    def flush(self) -> None:
        pending = self.pending
        if pending:
            name = str(pending["name"])
            self.ms[name].append(float(pending["ms"]))  # type: ignore[arg-type]
            self.cpu[name].append(float(pending["cpu"]))  # type: ignore[arg-type]
            pending.clear()

    def redraw(self, force: bool = True) -> bool:
        self.flush()
        t0, c0 = time.perf_counter(), time.thread_time()
        if not self.orig_redraw(force):
            # Nothing the visible tab shows changed: no refresh, and Qt repaints nothing.
            self.skipped += 1
            return False
        self.pending.update(
            name=self.names[self.w.tabs.currentIndex()],
            ms=(time.perf_counter() - t0) * 1000,
            cpu=(time.thread_time() - c0) * 1000,
            tab=self.w.current_tab(),
        )
        return True

    def summaries(self) -> None:
        t0 = time.perf_counter()
        self.orig_summaries()
        self.summary_ms.append((time.perf_counter() - t0) * 1000)


def views_of(tab: object) -> list[QObject]:
    out = []
    for attr in ("glw", "table"):
        v = getattr(tab, attr, None)
        if v is not None:
            out.append(v.viewport())
    return out


class EventGaps(QObject):
    """An application-wide filter: the gap after an event is how long its handling (and
    whatever it sent on) kept the GUI thread; the probe timer bounds idle gaps at 10 ms."""

    def __init__(self, slow_events: collections.Counter[str]) -> None:
        super().__init__()
        self.slow_events = slow_events
        self.last: tuple[float, str] = (0.0, "")
        self.recent: collections.deque[tuple[float, str]] = collections.deque(maxlen=400)

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        now = time.perf_counter()
        t, what = self.last
        if t and now - t > 0.04:
            self.slow_events[what] += 1
        self.last = (now, f"{type(obj).__name__}/{obj.objectName()}:{ev.type().name}")
        self.recent.append(self.last)
        return False

    def during(self, t0: float, t1: float) -> str:
        """The events handled between t0 and t1 with the ms to the next, the long ones."""
        evs = [e for e in self.recent if t0 <= e[0] <= t1]
        parts = []
        for (ta, wa), (tb, _) in zip(evs, [*evs[1:], (t1, "")], strict=True):
            if tb - ta > 0.005:
                parts.append(f"{wa} {1000 * (tb - ta):.0f}")
        return "; ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=32)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=8.0, help="simulated minutes fed live")
    ap.add_argument("--speed", type=float, default=4.0, help="simulated seconds per second")
    ap.add_argument("--prefill-minutes", type=float, default=55.0)
    ap.add_argument("--no-store", action="store_true", help="skip the history store")
    ap.add_argument("--profile", metavar="FILE", help="cProfile the GUI thread into FILE")
    ap.add_argument(
        "--slow-events",
        action="store_true",
        help="time the gaps between Qt events; print the events after which the GUI thread "
        "was busy over 40 ms (C++ work that has no Python stack)",
    )
    ap.add_argument(
        "--stall-trace",
        action="store_true",
        help="sample the GUI thread's Python stack while it is blocked over 40 ms; print the "
        "most frequent stacks",
    )
    args = ap.parse_args()

    from gpufleet.core.pipeline.alerting import Alerting
    from gpufleet.core.pipeline.build import load_rule_engine
    from gpufleet.core.pipeline.hub import PipelineHub
    from gpufleet.ui.app import make_qapp, setup_theme
    from gpufleet.ui.controllers.bridge import FleetBridge
    from gpufleet.ui.window.main_window import MainWindow
    from PySide6.QtCore import QTimer

    qapp = make_qapp()
    theme = setup_theme(qapp, dark=True)
    feed = Feed(args.hosts, args.gpus)
    cfgs = [HostConfig(name=h, price_per_hour=2.0 + i % 7) for i, h in enumerate(feed.hosts)]
    live = LiveBuffers(window_s=3600)
    rules = load_rule_engine(cfgs, strict=False)
    tmp = tempfile.mkdtemp(prefix="gpufleet-bench-gui-")
    store = None
    if not args.no_store:
        from gpufleet.core.history.store import Store

        store = Store(Path(tmp) / "history.sqlite")
    prefill = int(args.prefill_minutes * 60)
    live_s = int(args.minutes * 60)
    t_start = time.time() - prefill
    prefill_live(feed, live, rules, t_start, prefill, args.gpus)
    sim_now = [t_start + prefill]
    events: queue.Queue[object] = queue.Queue()
    hub = PipelineHub(
        events,  # type: ignore[arg-type]
        live=live,
        store=store,
        alerting=Alerting(rules),
        yield_between_messages=True,
    )
    bridge = FleetBridge(hub)
    w = MainWindow(live, cfgs, theme, clock=lambda: sim_now[0])
    bridge.status_changed.connect(w.on_status)
    bridge.alerts_snapshot.connect(w.on_alerts)
    bridge.cost_updated.connect(w.on_cost)
    bridge.stats.connect(w.on_stats)
    for h in feed.hosts:
        events.put(HostStatus(h, "streaming", None, sim_now[0]))
    w.resize(1600, 1000)
    w.show()
    qapp.processEvents()

    names = ("overview", "clocks", "thermal", "memory", "interconnect", "cost")
    times = RedrawTimes(w, names)
    times.install()

    # Stall probe: a 10 ms timer; its lateness is how long the GUI thread was busy.
    # A stall that began with a tab switch or host selection (the user's own action) is
    # counted apart from the ones that come of the data arriving in the background.
    stall = {"max": 0.0, "last": time.perf_counter(), "over50": 0, "action": -1.0}
    action_stalls: list[float] = []
    # The first display (every row and card built, every cell rendered once) is start-up.
    t_start_perf = [time.perf_counter()]
    startup_stall = [0.0]

    def probe() -> None:
        now = time.perf_counter()
        late = (now - stall["last"]) * 1000 - 10
        began = stall["last"]
        stall["last"] = now
        if late > 10 and began <= stall["action"] <= now:
            action_stalls.append(late)
            return
        if now - t_start_perf[0] < STARTUP_S:
            startup_stall[0] = max(startup_stall[0], late)
            return
        stall["max"] = max(stall["max"], late)
        if late > 50:
            stall["over50"] += 1
            if args.slow_events:
                at = f"at {now - t_run:.1f} s: "
                stall_log.append((late, at + event_gaps.during(now - late / 1000 - 0.012, now)))

    stall_stacks: collections.Counter[str] = collections.Counter()
    gui_ident = threading.get_ident()

    slow_events: collections.Counter[str] = collections.Counter()

    stall_log: list[tuple[float, str]] = []

    event_gaps = EventGaps(slow_events)
    if args.slow_events:
        qapp.installEventFilter(event_gaps)

    prober = QTimer()
    prober.setInterval(10)
    prober.timeout.connect(probe)

    stop = threading.Event()

    rss: list[tuple[float, float]] = []
    wall = live_s / args.speed
    per_tab = max(2.0, wall / (len(names) * 2))  # every tab visible twice
    warmup_s = per_tab * len(names) + 2

    def rotate() -> None:
        # Two separate user actions, as a user makes them: the next tab now, another host
        # a second later.
        stall["action"] = time.perf_counter()
        i = (w.tabs.currentIndex() + 1) % len(names)
        w.tabs.setCurrentIndex(i)
        QTimer.singleShot(1000, lambda: select(feed.hosts[(i * 7) % len(feed.hosts)]))

    def select(host: str) -> None:
        stall["action"] = time.perf_counter()
        w.select_host(host)

    rotator = QTimer()
    rotator.setInterval(int(per_tab * 1000))
    rotator.timeout.connect(rotate)
    sampler = QTimer()
    sampler.setInterval(2000)
    t_run = time.monotonic()
    sampler.timeout.connect(lambda: rss.append((time.monotonic() - t_run, rss_mib())))
    done = QTimer()
    done.setInterval(200)
    done.timeout.connect(lambda: qapp.quit() if stop.is_set() else None)

    # Garbage-collector pauses (any thread): a full collection stops every thread.
    gc_ms: list[tuple[int, float]] = []
    gc_t0 = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_t0[0] = time.perf_counter()
        else:
            gc_ms.append((info["generation"], (time.perf_counter() - gc_t0[0]) * 1000))

    gc.callbacks.append(on_gc)
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    rss0 = rss_mib()
    t_start_perf[0] = time.perf_counter()
    bridge.start()
    th = threading.Thread(
        target=feed_live,
        args=(feed, events, sim_now, stop, t_start + prefill, prefill, live_s, args),
        name="bench-feeder",
    )
    th.start()
    watch = None
    if args.stall_trace:
        watch = threading.Thread(
            target=watch_stalls,
            args=(stop, stall, gui_ident, stall_stacks),
            name="bench-stall-watch",
            daemon=True,
        )
        watch.start()
    for t in (prober, rotator, sampler, done):
        t.start()
    w.tabs.setCurrentIndex(0)
    qapp.exec()
    times.flush()
    if prof is not None:
        prof.disable()
        prof.dump_stats(args.profile)
    gc.callbacks.remove(on_gc)
    stop.set()
    th.join()
    bridge.stop()
    rss1 = rss_mib()
    if store is not None:
        store.close()
    w.close()

    print_redraws(args, store is not None, names, times.ms, times.cpu, times.summary_ms)
    print_stalls(times.skipped, stall, startup_stall[0], action_stalls, gc_ms)
    print_rss(args.speed, warmup_s, rss, rss0, rss1)
    print(f"samples: {live.samples_total}; hub errors: {hub.bad_batches}")
    print_hold_causes(slow_events, stall_log, stall_stacks)
    return 0


def prefill_live(
    feed: Feed, live: LiveBuffers, rules: RuleEngine | None, t_start: float, prefill: int, gpus: int
) -> None:
    """The ring buffers hold most of their hour, as after a long session."""
    for h in feed.hosts:
        live.feed(h, feed.hellos[h])
        if rules is not None:
            rules.feed(h, feed.hellos[h])
    for i in range(prefill):  # second by second, as they arrive (one set of rows a second)
        for h in feed.hosts:
            live.feed(h, feed.sample(h, t_start + i, i))
    for h in feed.hosts:
        live.feed(h, make_procs(t_start + prefill, feed.seq[h] + 1, gpus))


def feed_live(
    feed: Feed,
    events: queue.Queue[object],
    sim_now: list[float],
    stop: threading.Event,
    t0: float,
    i0: int,
    live_s: int,
    args: argparse.Namespace,
) -> None:
    """The feeder thread: one sample per host per simulated second at ``args.speed``, a
    process list every 10; sets ``stop`` when the run is over."""
    start = time.monotonic()
    for k in range(live_s):
        due = start + k / args.speed
        delay = due - time.monotonic()
        if delay > 0 and stop.wait(delay):
            return
        t = t0 + k
        sim_now[0] = t
        for h in feed.hosts:
            events.put(HostMessage(h, feed.sample(h, t, i0 + k)))
        if k % 10 == 0:
            for h in feed.hosts:
                events.put(HostMessage(h, make_procs(t, feed.seq[h] + 1, args.gpus)))
    stop.set()


def watch_stalls(
    stop: threading.Event,
    stall: dict[str, float],
    gui_ident: int,
    stall_stacks: collections.Counter[str],
) -> None:
    """While the 10 ms probe is late by over 40 ms, the GUI thread is stuck: note where."""
    while not stop.wait(0.005):
        if (time.perf_counter() - stall["last"]) * 1000 > 40:
            frame = sys._current_frames().get(gui_ident)
            if frame is not None:
                stack = traceback.extract_stack(frame, limit=8)
                stall_stacks[
                    " < ".join(f"{Path(f.filename).name}:{f.name}" for f in reversed(stack))
                ] += 1


def print_redraws(
    args: argparse.Namespace,
    store_on: bool,
    names: tuple[str, ...],
    redraw_ms: dict[str, list[float]],
    redraw_cpu: dict[str, list[float]],
    summary_ms: list[float],
) -> None:
    """The run's header and each tab's redraw times (refresh and paint)."""
    print(
        f"GUI benchmark: {args.hosts} hosts × {args.gpus} GPUs, {args.minutes:g} simulated min fed "
        f"at 1 Hz ({args.speed:g}× real time = {args.hosts * args.speed:.0f} samples/s), "
        f"{args.prefill_minutes:g} min prefilled; store {'on' if store_on else 'off'}; "
        f"redraw at 3 Hz, window 1600×1000 offscreen"
    )
    print(
        f"{'tab':<14}{'redraws':>8}{'median ms':>11}{'p99 ms':>9}{'max ms':>9}{'median CPU ms':>15}"
    )
    for n in names:
        xs = redraw_ms[n]
        if xs:
            print(
                f"{n:<14}{len(xs):>8}{statistics.median(xs):>11.1f}{pct(xs, 99):>9.1f}"
                f"{max(xs):>9.1f}{statistics.median(redraw_cpu[n]):>15.1f}"
            )
    if summary_ms:
        print(
            f"{'summaries':<14}{len(summary_ms):>8}{statistics.median(summary_ms):>11.1f}"
            f"{pct(summary_ms, 99):>9.1f}{max(summary_ms):>9.1f}   (list, cards, overview, 1 Hz)"
        )


def print_stalls(
    skipped: int,
    stall: dict[str, float],
    startup_stall: float,
    action_stalls: list[float],
    gc_ms: list[tuple[int, float]],
) -> None:
    """How long the GUI thread was held: in the background, at start-up, on the user's
    actions, and by the garbage collector."""
    print(f"redraw ticks skipped (nothing new to show): {skipped}")
    print(
        f"longest GUI-thread stall: {stall['max']:.0f} ms; stalls over 50 ms: {stall['over50']} "
        "(background: data arriving, summaries, redraws)"
    )
    print(
        f"start-up (first {STARTUP_S:g} s: first summaries and display): longest hold "
        f"{startup_stall:.0f} ms"
    )
    if action_stalls:
        print(
            f"tab switch or host selection (the user's action, {len(action_stalls)}): GUI thread "
            f"held median {statistics.median(action_stalls):.0f} ms, "
            f"max {max(action_stalls):.0f} ms"
        )
    for gen in (0, 1, 2):
        ms = [d for g, d in gc_ms if g == gen]
        if ms:
            print(f"GC generation {gen}: {len(ms)} collections, longest {max(ms):.1f} ms")


def print_rss(
    speed: float, warmup_s: float, rss: list[tuple[float, float]], rss0: float, rss1: float
) -> None:
    """Memory over the run, and its slope once every tab was shown (a leak)."""
    # Memory: every tab has been shown once after the first pass of the rotation (its items,
    # pixmap caches and the store's buffers are allocated by then); a leak is the slope of
    # RSS over the rest of the run.
    warm = [(a, b) for a, b in rss if a >= warmup_s]
    if len(warm) >= 4:
        xs_t = [a for a, _ in warm]
        ys = [b for _, b in warm]
        mt, my = statistics.mean(xs_t), statistics.mean(ys)
        slope = sum((a - mt) * (b - my) for a, b in warm) / max(
            1e-9, sum((a - mt) ** 2 for a in xs_t)
        )
        sim_slope = slope * 3600 / speed  # MiB per simulated hour
        print(
            f"RSS: {rss0:.0f} MiB after prefill, {warm[0][1]:.0f} MiB once every tab was shown "
            f"({warmup_s:.0f} s), {rss1:.0f} MiB at the end; slope after that "
            f"{sim_slope:+.1f} MiB per simulated hour; "
            f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
        )
    else:
        print(f"RSS: {rss0:.0f} → {rss1:.0f} MiB (run longer for a slope after the warm-up)")
    if os.environ.get("GPUFLEET_BENCH_RSS"):
        print("RSS series (s, MiB):", " ".join(f"{a:.0f}:{b:.0f}" for a, b in rss))


def print_hold_causes(
    slow_events: collections.Counter[str],
    stall_log: list[tuple[float, str]],
    stall_stacks: collections.Counter[str],
) -> None:
    """What held the GUI thread (--slow-events, --stall-trace)."""
    if slow_events:
        print("events followed by a GUI-thread hold over 40 ms (count):")
        for what, count in slow_events.most_common(15):
            print(f"{count:6d}  {what}")
    if stall_log:
        print("longest stalls (ms) and the events handled in them (ms to the next event):")
        for late, what in sorted(stall_log, reverse=True)[:10]:
            print(f"{late:6.0f}  {what}")
    if stall_stacks:
        print("GUI thread during stalls (5 ms samples; innermost first):")
        for stack, count in stall_stacks.most_common(12):
            print(f"{count:6d}  {stack}")


if __name__ == "__main__":
    sys.exit(main())
