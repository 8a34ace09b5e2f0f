"""Billing that follows the instance: paused time, per-currency totals, a remote clock that
jumps, budget alerts, and the persisted billing ledger."""

from __future__ import annotations

import dataclasses
import json

import pytest
from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.cost.billing import (
    BillingFileError,
    BillingLedger,
    billing_file,
    record_and_apply,
)
from gpufleet.core.cost.rental import CostTracker
from gpufleet.core.cost.totals import fleet_totals, parse_rates
from gpufleet.core.wire.messages import Sample

from tests.support.rules_support import T0, Stream


def test_paused_ten_minutes_of_an_hour_bills_fifty() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=6.0, storage_per_hour=0.6)])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 3601):
        if t == 1200:
            ct.set_billing("h", "storage")  # stopped in the console at minute 20
        if t == 1800:
            ct.set_billing("h", "running")  # started again at minute 30
        ct.feed("h", s.sample(t))
    sm = ct.summary("h")
    assert sm.billed_s == 3000.0 and sm.storage_s == 600.0
    assert sm.total == pytest.approx(6.0 * 50 / 60 + 0.6 * 10 / 60)
    assert sm.busy_s == 3000.0  # the paused time is neither busy nor idle


def test_paused_without_a_storage_price_bills_only_the_gpu_time() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=6.0)])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 3601):
        if t == 1200:
            ct.set_billing("h", "storage")
        if t == 1800:
            ct.set_billing("h", "running")
        ct.feed("h", s.sample(t))
    assert ct.summary("h").total == pytest.approx(5.0)  # 50 minutes at 6/h


def test_ended_bills_nothing_more_and_projects_nothing() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=6.0)])
    s = Stream()
    ct.feed("h", s.hello)
    for t in range(0, 1801):
        ct.feed("h", s.sample(t))
        if t == 600:
            ct.set_billing("h", "ended")  # returned at minute 10
    sm = ct.summary("h")
    assert sm.total == pytest.approx(1.0) and sm.billing == "ended"
    assert sm.rate_per_h == 0.0 and sm.projection_24h == pytest.approx(1.0)


def _sample(s: Stream, wall: float, mono: float) -> Sample:
    """A busy sample whose wall and monotonic clocks are given apart."""
    msg = s.sample(0)
    assert isinstance(msg, Sample)
    return dataclasses.replace(msg, t=wall, mono=mono)


def test_a_remote_clock_jumped_a_day_forward_and_back_bills_the_real_time() -> None:
    host = HostConfig(name="h", price_per_hour=1.0, budget=5.0)
    engine = RuleEngine(load_rules(None, include_user=False), [host])
    s = Stream()
    engine.feed("h", s.hello)
    fired = []
    for i in range(0, 3601):
        # The instance's wall clock is set a day ahead for ten minutes (NTP gone wrong),
        # then corrected; its monotonic clock runs on as real time does.
        jump = 86400.0 if 1200 <= i < 1800 else 0.0
        for a in engine.feed("h", _sample(s, T0 + i + jump, 5000.0 + i)):
            if a.rule_id.startswith("budget") and a.state == "firing":
                fired.append(a)
    sm = engine.cost.summary("h")
    assert sm.billed_s == pytest.approx(3600.0)
    assert sm.total == pytest.approx(1.0)  # not the $24 a day-long jump would bill
    assert sm.now_t == T0 + 3600  # the corrected clock
    assert fired == []  # $1 of a $5 budget: no budget alert fired, none stays firing


def test_budget_alert_resolves_when_the_host_ends() -> None:
    host = HostConfig(name="h", price_per_hour=10.0, budget=1.0)
    engine = RuleEngine(load_rules(None, include_user=False), [host])
    s = Stream()
    engine.feed("h", s.hello)
    states: dict[str, str] = {}
    for t in range(0, 601):  # 10 min at 10/h = 1.67: both budget rules fire
        for a in engine.feed("h", s.sample(t)):
            states[a.rule_id] = a.state
    assert states.get("budget_100") == "firing"
    # Nothing more is billed once ended, so a raised budget puts it below the line again.
    engine.cost.set_billing("h", "ended")
    engine.set_host(HostConfig(name="h", price_per_hour=10.0, budget=10.0))
    for t in range(601, 700):
        for a in engine.feed("h", s.sample(t)):
            states[a.rule_id] = a.state
    assert states["budget_100"] != "firing" and states["budget_80"] != "firing"


def test_a_reboot_restarting_the_monotonic_clock_is_not_billed_backwards() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=3.6)])
    s = Stream()
    ct.feed("h", s.hello)
    for i in range(0, 601):
        ct.feed("h", _sample(s, T0 + i, 9000.0 + i))
    for i in range(0, 601):  # rebooted: monotonic from 20 s again
        ct.feed("h", _sample(s, T0 + 700 + i, 20.0 + i))
    assert ct.summary("h").billed_s == pytest.approx(1200.0)


def test_two_usd_hosts_and_one_eur_host_show_two_totals() -> None:
    hosts = [
        HostConfig(name="a", price_per_hour=2.0, currency="USD"),
        HostConfig(name="b", price_per_hour=1.0, currency="USD"),
        HostConfig(name="c", price_per_hour=3.0, currency="EUR"),
    ]
    ct = CostTracker(hosts)
    for h in hosts:
        s = Stream()
        ct.feed(h.name, s.hello)
        for t in range(0, 3601):
            ct.feed(h.name, s.sample(t))
    summaries = [ct.summary(h.name) for h in hosts]
    totals = fleet_totals(summaries)
    assert list(totals.by_currency) == ["EUR", "USD"]
    assert totals.by_currency["USD"].total == pytest.approx(3.0)
    assert totals.by_currency["USD"].hosts == 2
    assert totals.by_currency["EUR"].total == pytest.approx(3.0)
    assert totals.single is None and totals.converted is None
    base, rates = parse_rates({"exchange_rates": {"eur": 1.1}})
    conv = fleet_totals(summaries, rates, base).converted
    assert conv is not None and conv.currency == "USD"
    assert conv.total == pytest.approx(3.0 + 3.0 * 1.1)
    assert conv.label == "converted at your rates (1 EUR = 1.1 USD)"
    conv = fleet_totals([*summaries, _cny(ct)], rates, base).converted
    assert conv is not None and conv.missing == ("CNY",)
    with pytest.raises(ValueError, match=r"exchange_rates\.EUR must be a positive number"):
        parse_rates({"exchange_rates": {"EUR": -1}})


def _cny(ct: CostTracker) -> object:
    ct.set_host(HostConfig(name="d", price_per_hour=10.0, currency="CNY"))
    s = Stream()
    ct.feed("d", s.hello)
    for t in range(0, 61):
        ct.feed("d", s.sample(t))
    return ct.summary("d")


def test_ledger_persists_and_reports_a_damaged_file() -> None:
    ledger = BillingLedger.load()
    assert ledger.state("x") == "running"
    assert not ledger.record("x", "running", 1.0, "hand")  # implicit: nothing to record
    assert ledger.record("x", "storage", 2.0, "provider", "stopped")
    assert not ledger.record("x", "storage", 3.0, "provider")
    ledger.save()
    again = BillingLedger.load()
    assert again.state("x") == "storage" and again.history("x")[0].note == "stopped"
    billing_file().write_text("{not json")
    with pytest.raises(BillingFileError, match=r"billing\.json: not valid JSON"):
        BillingLedger.load()
    billing_file().write_text(json.dumps({"version": 1, "hosts": {"x": [{"state": "gone"}]}}))
    with pytest.raises(BillingFileError, match="each change needs a `state`"):
        BillingLedger.load()


def test_record_and_apply_persists_and_feeds_the_tracker() -> None:
    ct = CostTracker([HostConfig(name="h", price_per_hour=1.0)])
    change = record_and_apply(ct.set_billing)
    change("h", "storage")
    assert ct.billing("h") == "storage"
    assert BillingLedger.load().history("h")[-1].source == "action"
    fresh = CostTracker([HostConfig(name="h", price_per_hour=1.0)])
    BillingLedger.load().apply(fresh.set_billing)  # the app starts again
    assert fresh.billing("h") == "storage"
