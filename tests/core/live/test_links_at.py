"""``LinkBuffers.at``: the per-link values at a crosshair's moment (the message whose interval
holds it), the newest after the last message, none before the live window; ``latest`` stays
the newest. Fed with the real sampler loop over the sim's ecc-xid scenario (GPU 1 link 5 down)."""

from __future__ import annotations

from gpufleet.core.live.links import LinkBuffers
from gpufleet.core.wire.messages import Hello, Links, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler

T0 = 1.7e9


def fed(ticks: int) -> tuple[LinkBuffers, list[Links]]:
    b = SimBackend("ecc-xid", seed=0, interval=1.0)
    try:
        s = Sampler(b, 1.0, procs_interval=1e9)
        dec = StreamDecoder()
        lines = [protocol.encode(s.hello())]
        for k in range(ticks):
            lines += [protocol.encode(m) for m in s.step(float(k), T0 + k)]
    finally:
        b.close()
    msgs = dec.feed_many([line.encode() for line in lines])
    hello = msgs[0]
    assert isinstance(hello, Hello)
    buf = LinkBuffers(window_s=3600.0)
    links = [m for m in msgs if isinstance(m, Links)]
    for m in links:
        buf.feed("h", m, hello)
    return buf, links


def test_at_picks_the_message_whose_interval_holds_the_moment() -> None:
    buf, links = fed(31)
    times = [m.t for m in links]
    assert times == [T0 + k for k in (0, 5, 10, 15, 20, 25, 30)]
    for t, want in ((T0 + 7, T0 + 10), (T0 + 10, T0 + 10), (T0 + 10.5, T0 + 15), (T0, T0)):
        snap = buf.at("h", t)
        assert snap is not None and snap.t == want, t
    seqs = {m.t: m.seq for m in links}
    snap = buf.at("h", T0 + 12)
    assert snap is not None and snap.seq == seqs[T0 + 15]
    # After the newest: the newest; long before the first: nothing (live only).
    late = buf.at("h", T0 + 999)
    latest = buf.latest("h")
    assert late is not None and latest is not None and late.t == latest.t == T0 + 30
    assert buf.at("h", T0 - 4) is not None  # within the first message's interval
    assert buf.at("h", T0 - 60) is None
    assert buf.at("nobody", T0) is None and buf.at(None, T0) is None
    # Each moment's values: GPU 1 link 5 down, the nominal speed filled in from hello.
    row = snap.gpus.index(1)
    assert snap.up[row, 5] == 0 and (snap.up[row] == 1).sum() == 11
    assert (snap.speed == 25e9).all()


def test_at_follows_the_ring_once_it_wrapped() -> None:
    buf = LinkBuffers(window_s=30.0)  # 10 slots of 5 s: 61 ticks wrap it
    _, links = fed(61)
    for m in links:
        buf.feed("h", m, None)
    kept = links[-10:]
    for m in kept[1:]:
        snap = buf.at("h", m.t - 2.0)
        assert snap is not None and snap.t == m.t and snap.seq == m.seq
    assert buf.at("h", kept[0].t - 60) is None
