"""The laptop side of per-link NVLink: the ``links`` parser (round trip through the wire
format, garbage counted never raised), the live window in ``LinkBuffers`` through
``LiveBuffers.feed``, the down/slow link finder, and the app's /metrics per-link series."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
from gpufleet.core.fleet.events import HostMessage, HostStatus
from gpufleet.core.live.buffers import LiveBuffers
from gpufleet.core.live.links import LinkBuffers, link_issues
from gpufleet.core.prometheus.exporter import FleetMetrics
from gpufleet.core.wire.encode import encode_line
from gpufleet.core.wire.messages import Links, StreamDecoder
from gpufleet_sampler import protocol
from gpufleet_sampler.backends.sim import SimBackend
from gpufleet_sampler.loop import Sampler


def sim_lines(scenario: str, ticks: int, seed: int = 0) -> list[bytes]:
    b = SimBackend(scenario, seed=seed, interval=1.0)
    try:
        s = Sampler(b, 1.0, procs_interval=1e9)
        out = [protocol.encode(s.hello()).encode()]
        for k in range(ticks):
            out += [protocol.encode(m).encode() for m in s.step(float(k), 1.7e9 + k)]
        return out
    finally:
        b.close()


def test_links_parse_and_round_trip() -> None:
    dec = StreamDecoder()
    msgs = dec.feed_many(sim_lines("ecc-xid", 6))
    assert dec.bad_lines == 0, dec.last_error
    links = [m for m in msgs if isinstance(m, Links)]
    assert len(links) == 2
    r1 = links[0].row(1)
    assert r1 is not None and r1.n_links == 12 and r1.up[5] == 0 and r1.speed_bps[0] == 25e9
    # The wire format gives back the sampler's own line, which parses to the same message.
    line = encode_line(links[1])
    again = dec.feed(line)
    assert isinstance(again, Links) and again.rows == links[1].rows


def test_garbage_links_lines_are_counted_not_raised() -> None:
    dec = StreamDecoder()
    assert dec.feed(b'{"kind":"links","seq":1,"t":1,"gpus":[]}') is None  # before hello
    dec.feed(sim_lines("healthy-8xa100", 0)[0])
    bad = [
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": "x"},
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": [[0, [1], [1]]]},  # too few columns
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": [[0, [1, 2], [1], [1], [1]]]},  # ragged
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": [["0", [1], [1], [1], [1]]]},
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": [[0, 5, [1], [1], [1]]]},
        {"kind": "links", "seq": 2, "t": 1.0, "gpus": [[0, [0] * 100] + [[0] * 100] * 3]},
        {"kind": "links", "seq": "2", "t": 1.0, "gpus": []},
    ]
    for obj in bad:
        assert dec.feed(orjson.dumps(obj)) is None
    assert dec.bad_lines == 1 + len(bad)
    # Values of the wrong type become None (not reported), the message is kept.
    ok = dec.feed(b'{"kind":"links","seq":3,"t":1,"gpus":[[0,[1,"x"],[true,2],[1,0],[null,5]]]}')
    assert isinstance(ok, Links)
    assert ok.rows[0].tx_bps == (1, None) and ok.rows[0].rx_bps == (None, 2)


def test_one_value_out_of_range_costs_only_itself_whatever_the_message_looks_like() -> None:
    """The decoder checks a links message's values once for the whole message (types, min,
    max) and only a message that fails it value by value: an out-of-range number, a list
    where a number belongs, or a boolean each become None alone, on any row and column."""
    dec = StreamDecoder()
    dec.feed(sim_lines("healthy-8xa100", 0)[0])
    clean = [[g, [1, 2], [3, 4], [1, 1], [5, 6]] for g in range(2)]
    got = dec.feed(orjson.dumps({"kind": "links", "seq": 2, "t": 1.0, "gpus": clean}))
    assert isinstance(got, Links) and got.rows[1].speed_bps == (5, 6)
    for bad, where in ((1e300, (1, 3, 0)), (-(2**65), (0, 1, 1)), ([7], (1, 2, 1))):
        rows = [[g, *(list(c) for c in r[1:])] for g, r in enumerate(clean)]
        g, col, i = where
        rows[g][col][i] = bad
        # json: orjson cannot write an integer beyond 64 bits, which a hostile sampler can.
        msg = dec.feed(json.dumps({"kind": "links", "seq": 3, "t": 1.0, "gpus": rows}).encode())
        assert isinstance(msg, Links), bad
        values = [[list(v) for v in (r.tx_bps, r.rx_bps, r.up, r.speed_bps)] for r in msg.rows]
        expect = [[list(c) for c in r[1:]] for r in clean]
        expect[g][col - 1][i] = None
        assert values == expect, bad
    assert dec.bad_lines == 0


def test_two_streams_whose_hellos_order_the_link_columns_differently_keep_their_own() -> None:
    """The decoder keeps the latest hello's link layout for the next links line: two
    sessions' decoders taking turns (a sampler of another version names its link columns in
    another order) each read their rows by their own hello."""
    hello = orjson.loads(sim_lines("healthy-8xa100", 0)[0])
    other = dict(hello, link_columns=list(reversed(hello["link_columns"])))
    a, b = StreamDecoder(), StreamDecoder()
    a.feed(orjson.dumps(hello))
    b.feed(orjson.dumps(other))
    row = [0, [1, 2], [3, 4], [1, 0], [5, 6]]
    for _ in range(2):
        for dec, tx in ((a, (1, 2)), (b, (5, 6))):
            msg = dec.feed(orjson.dumps({"kind": "links", "seq": 2, "t": 1.0, "gpus": [row]}))
            assert isinstance(msg, Links) and msg.rows[0].tx_bps == tx


def test_live_feed_keeps_the_window_and_bumps_the_version() -> None:
    live = LiveBuffers(window_s=60.0)
    dec = StreamDecoder()
    for m in dec.feed_many(sim_lines("ecc-xid", 21)):
        before = live.version("h")
        live.feed("h", m)
        if isinstance(m, Links):
            assert live.version("h") > before  # a links message makes the tabs redraw
    snap = live.links.latest("h")
    assert snap is not None and snap.gpus == (0, 1, 2, 3) and snap.n_links == 12
    assert snap.up[1, 5] == 0 and not math.isnan(snap.tx[0, 0])
    assert snap.speed[0, 0] == 25e9
    t, tx, rx = live.links.series("h", 0, 3)
    assert len(t) == 5 and list(t) == sorted(t)  # ticks 0, 5, 10, 15, 20
    assert len(tx) == len(rx) == 5 and (tx >= 0).all()
    assert live.links.series("h", 9, 0)[0].size == 0
    issues = link_issues(snap)
    assert [(i.gpu, i.link, i.kind) for i in issues] == [(1, 5, "down")]


def test_slow_links_by_speed_and_by_traffic() -> None:
    buf = LinkBuffers(window_s=60.0)
    dec = StreamDecoder()
    dec.feed(sim_lines("healthy-8xa100", 0)[0])
    tx = [10e9] * 12
    tx[3] = 1e9  # far below its siblings
    speed = [25e9] * 12
    speed[7] = 12.5e9  # trained down
    line = orjson.dumps(
        {"kind": "links", "seq": 5, "t": 1.0, "gpus": [[0, tx, tx, [1] * 12, speed]]}
    )
    msg = dec.feed(line)
    assert isinstance(msg, Links)
    buf.feed("h", msg, dec.hello)
    snap = buf.latest("h")
    assert snap is not None
    got = {(i.link, i.reason) for i in link_issues(snap)}
    assert got == {(3, "traffic"), (7, "speed")}
    # An idle GPU (no traffic) has no "slow" links: nothing to compare.
    idle = dec.feed(
        orjson.dumps(
            {
                "kind": "links",
                "seq": 6,
                "t": 2.0,
                "gpus": [[0, [0] * 12] * 1 + [[0] * 12, [1] * 12, [25e9] * 12]],
            }
        )
    )
    assert isinstance(idle, Links)
    buf.feed("h", idle, dec.hello)
    snap = buf.latest("h")
    assert snap is not None and link_issues(snap) == []


def test_app_metrics_render_per_link_series() -> None:
    fm = FleetMetrics()
    dec = StreamDecoder()
    fm.feed(HostStatus("a100-ecc", "streaming", None, 1.7e9))
    for m in dec.feed_many(sim_lines("ecc-xid", 2)):
        fm.feed(HostMessage("a100-ecc", m))
    text = fm.render().decode()
    up: list[Any] = [ln for ln in text.splitlines() if ln.startswith("gpufleet_nvlink_link_up{")]
    assert len(up) == 48
    (down,) = [ln for ln in up if ln.endswith(" 0")]
    assert 'gpu="1"' in down and 'link="5"' in down and 'Hostname="a100-ecc"' in down
    assert "# TYPE gpufleet_nvlink_link_tx_bytes_per_second gauge" in text
