"""The Cost tab counts idle as the cost tracker does (one definition, core.cost.idle): on the
crashed-idle demo host, with the whole history in range, its "in range" and "of which idle"
figures equal the tracker's since-billing-start ones, which it shows beside them."""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import pytest
from gpufleet.core.fleet.demo import demo_hosts
from gpufleet.core.providers.watchdog import current_state, describe
from gpufleet.core.wire.messages import parse_object
from gpufleet.ui.offscreen.screenshots import build_window, prefill
from gpufleet.ui.tabs.cost import CostTab, accumulated
from gpufleet.ui.viewmodel.summary import money
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.support.ui_helpers import demo


def test_cost_tab_idle_is_the_cost_trackers(qtbot: QtBot) -> None:
    hosts = [h for h in demo_hosts() if h.name == "a100-eval"]
    now = time.time()
    live, rules, _ = prefill(hosts, 600.0, now)
    s = rules.cost.summary("a100-eval")
    assert s.idle_s > 300  # the job died 180 s in
    price = hosts[0].price_per_hour
    _t, c, ic = accumulated(live, "a100-eval", price, -math.inf, math.inf)
    assert c[-1] == pytest.approx(s.total) and ic[-1] == pytest.approx(s.idle)

    tab = _cost_tab(qtbot, hosts, live, rules, now)
    cols = range(tab.model.columnCount())
    headers = [tab.model.headerData(i, Qt.Orientation.Horizontal) for i in cols]
    row = [tab.model.cell(0, i) for i in cols]
    assert headers[3] == headers[5]  # "of which idle": in the range, and since billing start
    # The whole history is in range: the range's figures are the tracker's.
    assert row[5].text == money(s.idle, "USD") and row[3].sort == pytest.approx(row[5].sort)
    assert row[4].text == money(s.total, "USD") and row[2].sort == pytest.approx(row[4].sort)


def test_a_gap_is_billed_but_not_idle_in_the_tab_as_in_the_tracker() -> None:
    from gpufleet.core.cost.rental import CostTracker
    from gpufleet.core.live.buffers import LiveBuffers
    from gpufleet.core.wire.messages import Sample
    from gpufleet.ui.offscreen.simfeed import simulate

    hosts = [h for h in demo_hosts() if h.name == "a100-eval"]
    live, ct = LiveBuffers(window_s=3600), CostTracker(hosts)
    now = time.time()
    first: float | None = None
    for ev in simulate(hosts, 600.0, now):
        if isinstance(ev.msg, Sample):
            first = ev.msg.t if first is None else first
            if 400 <= ev.msg.t - first < 460:  # idle by then; a minute lost
                continue
        live.feed(ev.host, ev.msg)
        ct.feed(ev.host, ev.msg)
    s = ct.summary("a100-eval")
    assert s.unknown_s == pytest.approx(61)
    _t, c, ic = accumulated(live, "a100-eval", hosts[0].price_per_hour, -math.inf, math.inf)
    assert c[-1] == pytest.approx(s.total) and ic[-1] == pytest.approx(s.idle)


def test_cost_tab_totals_per_currency_and_billing_column(qtbot: QtBot) -> None:
    demo = {h.name: h for h in demo_hosts()}
    a, b = sorted(n for n, h in demo.items() if h.price_per_hour)[:2]
    hosts = [
        dataclasses.replace(demo[a], currency="USD"),
        dataclasses.replace(demo[b], currency="EUR"),
    ]
    now = time.time()
    live, rules, _ = prefill(hosts, 300.0, now)
    rules.cost.set_billing(b, "storage")
    w = build_window(hosts, live, rules, (1400, 900), now)
    qtbot.addWidget(w)
    w.set_range(3600.0)
    w.select_tab("cost")
    tab = w.current_tab()
    qtbot.waitUntil(lambda: (w.redraw(), tab.model.rowCount() == 2)[1], timeout=10_000)
    text = tab.sentence.text()
    usd = rules.cost.summary(a).projection_24h
    eur = rules.cost.summary(b).projection_24h
    # Two totals, one per currency, never their sum.
    assert money(usd, "USD") in text and money(eur, "EUR") in text
    assert money(usd + eur, "USD") not in text and "converted" not in text
    last = tab.model.columnCount() - 1
    assert tab.model.headerData(last, Qt.Orientation.Horizontal) == "Billing"
    billing = {tab.model.cell(r, 0).text: tab.model.cell(r, last).text for r in range(2)}
    assert billing == {a: "running", b: "stopped: storage only"}
    # The fleet header too: rates and spending per currency.
    header = w.panel.title.text()
    pa, pb = hosts[0].price_per_hour, hosts[1].price_per_hour
    assert f"{money(pb, 'EUR')}, {money(pa, 'USD')}/h" in header  # sorted by currency
    assert money(pa + pb, "USD") not in header
    tab.set_exchange_rates("USD", {"EUR": 1.5})
    w.redraw()
    text = tab.sentence.text()
    assert money(usd + 1.5 * eur, "USD") in text and "1 EUR = 1.5 USD" in text


def test_billing_set_by_hand_in_the_cost_tab_reaches_the_cost_tracker(qtbot, start_app) -> None:
    app = start_app(demo("a100-eval"))
    tab = next(t for t in app.window.tab_list if isinstance(t, CostTab))
    qtbot.waitUntil(lambda: "a100-eval" in app.window.cost, timeout=60_000)
    menu = tab.billing_menu("a100-eval")
    labels = [a.text() for a in menu.actions()]
    assert labels == [
        "Billing: running",
        "Billing: stopped, paying for storage",
        "Billing: ended (returned)",
    ]
    menu.actions()[1].trigger()
    qtbot.waitUntil(lambda: app.window.cost["a100-eval"].billing == "storage", timeout=30_000)


def _cost_tab(qtbot: QtBot, hosts: Any, live: Any, rules: Any, now: float) -> Any:
    """The Cost tab of a window built on ``live``, once it shows its one host."""
    w = build_window(hosts, live, rules, (1400, 900), now)
    qtbot.addWidget(w)
    w.set_range(3600.0)
    w.select_tab("cost")
    tab = w.current_tab()
    qtbot.waitUntil(lambda: (w.redraw(), tab.model.rowCount() == 1)[1], timeout=10_000)
    return tab


def _billing_cell(qtbot: QtBot, hosts: Any, live: Any, rules: Any, now: float) -> Any:
    """The one host's billing cell in the Cost tab of a window built on ``live``."""
    tab = _cost_tab(qtbot, hosts, live, rules, now)
    return tab.model.cell(0, tab.model.columnCount() - 1)


def test_billing_column_shows_the_instance_watchdog(qtbot: QtBot) -> None:
    hosts = [h for h in demo_hosts() if h.name == "a100-eval"]
    now = time.time()
    live, rules, _ = prefill(hosts, 120.0, now)
    hello = live.hello("a100-eval")
    ev = {
        "kind": "event",
        "seq": 10**9,
        "t": now,
        "type": "watchdog",
        "gpu": None,
        "code": None,
        "message": "idle for 900 s: will stop the instance through runpod in 300 s",
        "phase": "pending",
        "action": "provider",
        "alert": "idle_billed@1",
        "deadline_t": now + 300,
    }
    live.feed("a100-eval", parse_object(ev, hello))
    cell = _billing_cell(qtbot, hosts, live, rules, now)
    assert cell.text.startswith("running · watchdog acts at ") and "unless cancelled" in cell.text
    assert "will stop the instance through runpod" in (cell.tooltip or "")


def test_billing_column_shows_whether_the_watchdog_can_act(qtbot: QtBot) -> None:
    """Armed and ready at hello (the daemon's arm-time check), then its re-check's event
    says the action cannot run: the host's cell says so, its tooltip says why."""
    hosts = [h for h in demo_hosts() if h.name == "a100-eval"]
    now = time.time()
    live, rules, _ = prefill(hosts, 120.0, now)
    ok = "RunPod accepted the instance's key (HTTP 200)"
    hello = live.hello("a100-eval")
    assert hello is not None
    raw = dict(hello.raw, watchdog={"armed": True, "phase": "watching", "action": "provider",
               "ready": {"ok": True, "reason": ok, "t": now - 60}})  # fmt: skip
    live.feed("a100-eval", parse_object(raw))
    wd = current_state(live.hello("a100-eval"), [])
    assert wd is not None and describe("a100-eval", wd).endswith("\n  ready: " + ok)
    said = (
        "RunPod: the provider's API changed (GET /v2/pods/p: HTTP 410: Gone); update "
        "gpufleet: the stop would fail"
    )
    ev = {"kind": "event", "seq": 10**9, "t": now, "type": "watchdog", "gpu": None,
          "code": None, "message": "the action can no longer run: " + said,
          "phase": "watching", "ready": False, "outcome": said}  # fmt: skip
    live.feed("a100-eval", parse_object(ev, live.hello("a100-eval")))
    wd = current_state(live.hello("a100-eval"), live.events("a100-eval"))
    assert wd is not None and "\n  cannot act now: " + said in describe("a100-eval", wd)
    cell = _billing_cell(qtbot, hosts, live, rules, now)
    assert cell.text == "running · watchdog armed but cannot act"
    assert "Watchdog cannot act now: " + said in (cell.tooltip or "")
