"""The instance's watchdog in the alert list: it says it will act (a warning while there is
time to cancel), that it acted, or that its action failed (critical: still billed), each
alert naming the host; a watchdog that stands down (the GPUs work again) leaves nothing
behind. Streams written from the protocol, as the daemon sends them (also after a night of
the laptop asleep: the events come with the backfill)."""

from __future__ import annotations

from typing import Any

from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence, alert_title
from gpufleet.core.wire.messages import Message

from tests.support.rules_support import BUSY, IDLE, T0, Stream

GRACE_S = 300.0


def _run(msgs: list[Message], host: str = "a100-night") -> tuple[RuleEngine, list[Alert]]:
    eng = RuleEngine(load_rules(include_user=False))
    out: list[Alert] = []
    for m in msgs:
        out.extend(eng.feed(host, m))
    return eng, out


def _idle_night(s: Stream, end: dict[str, Any] | None, busy_again: bool = False) -> list[Message]:
    """Idle from t=0; at 900 s the watchdog warns (grace 300 s); at 1200 s what ``end`` says
    (None: nothing, the host works again instead)."""
    msgs: list[Message] = [s.hello]
    for t in range(0, 900):
        msgs.append(s.sample(t, **IDLE))
    msgs.append(
        s.event(
            900.0,
            "watchdog",
            gpu=None,
            message="idle for 900 s: will stop the instance through runpod in 300 s unless "
            "cancelled",
            phase="pending",
            action="provider",
            deadline_t=T0 + 900.0 + GRACE_S,
            dry_run=False,
        )
    )
    for t in range(900, 1200):
        msgs.append(s.sample(t, **(BUSY if busy_again and t >= 1000 else IDLE)))
    if busy_again:
        msgs.append(
            s.event(
                1031.0,
                "watchdog",
                gpu=None,
                message="the host is working again: nothing done",
                phase="watching",
            )
        )
    if end is not None:
        msgs.append(s.event(1200.0, "watchdog", gpu=None, phase="done", action="provider", **end))
    return msgs


def test_a_watchdog_that_warns_then_stops_the_instance() -> None:
    s = Stream(n_gpus=4)
    _eng, alerts = _run(_idle_night(s, {"ok": True, "outcome": "runpod accepted the stop (200)"}))
    by_rule = [(a.rule_id, a.state) for a in alerts if a.rule_id.startswith("watchdog")]
    assert by_rule == [
        ("watchdog_pending", "firing"),
        ("watchdog_pending", "resolved"),
        ("watchdog_acted", "firing"),
    ]
    pending = next(a for a in alerts if a.rule_id == "watchdog_pending")
    assert pending.severity == "warning"
    assert alert_title(pending).startswith("Watchdog on a100-night will act at ")
    text = alert_sentence(pending)
    assert "stop the instance through its provider" in text and "cancel" in text
    acted = next(a for a in alerts if a.rule_id == "watchdog_acted")
    assert alert_title(acted) == "Watchdog acted on a100-night"
    assert "runpod accepted the stop (200)" in alert_sentence(acted)
    # The laptop's own idle alert fired too: the same definition of idle.
    assert any(a.rule_id == "idle_billed" and a.state == "firing" for a in alerts)


def test_a_watchdog_whose_stop_failed_is_critical() -> None:
    s = Stream(n_gpus=4)
    end = {"ok": False, "outcome": "HTTP 401 from runpod: the pod key was revoked"}
    _eng, alerts = _run(_idle_night(s, end))
    failed = [a for a in alerts if a.rule_id == "watchdog_failed"]
    assert [a.state for a in failed] == ["firing"]
    assert failed[0].severity == "critical"
    assert alert_title(failed[0]) == "Watchdog on a100-night could not act"
    assert "still billed" in alert_sentence(failed[0]) and "401" in alert_sentence(failed[0])
    assert not [a for a in alerts if a.rule_id == "watchdog_acted"]


def test_a_watchdog_that_stands_down_leaves_nothing_behind() -> None:
    s = Stream(n_gpus=4)
    eng, alerts = _run(_idle_night(s, None, busy_again=True))
    states = [(a.rule_id, a.state) for a in alerts if a.rule_id.startswith("watchdog")]
    assert states == [("watchdog_pending", "firing"), ("watchdog_pending", "resolved")]
    assert not [a for a in eng.active() if a.rule_id.startswith("watchdog")]


def test_a_warning_never_followed_up_ends_after_its_deadline() -> None:
    """Cancelled from the laptop, or the instance gone with its daemon: no word after the
    deadline; the warning does not stay up for ever."""
    s = Stream(n_gpus=4)
    msgs = _idle_night(s, None)
    eng = RuleEngine(load_rules(include_user=False))
    for m in msgs:
        eng.feed("a100-night", m)
    assert [a.rule_id for a in eng.active() if a.rule_id.startswith("watchdog")] == [
        "watchdog_pending"
    ]
    eng.tick(T0 + 900.0 + GRACE_S + 301.0)
    assert not [a for a in eng.active() if a.rule_id.startswith("watchdog")]


def test_a_cancelled_warning_ends_when_the_cancel_arrives() -> None:
    s = Stream(n_gpus=4)
    msgs = _idle_night(s, None)
    eng = RuleEngine(load_rules(include_user=False))
    for m in msgs:
        eng.feed("a100-night", m)
    out = eng.feed(
        "a100-night",
        s.event(
            1100.0,
            "watchdog",
            gpu=None,
            message="cancelled: nothing will be done",
            phase="cancelled",
        ),
    )
    assert [(a.rule_id, a.state) for a in out] == [("watchdog_pending", "resolved")]


def test_an_armed_watchdog_whose_action_became_impossible_is_a_critical_alert() -> None:
    """The daemon's half-hourly re-check found the key revoked: critical while it lasts, and
    resolved by the event that says the action can run again (a new key)."""
    s = Stream(n_gpus=2)
    reason = "RunPod refused the instance's key (HTTP 403): the stop would fail"
    msgs: list[Message] = [s.hello, *(s.sample(t, **BUSY) for t in range(0, 60))]
    msgs.append(
        s.event(
            60.0,
            "watchdog",
            gpu=None,
            message="the action can no longer run: " + reason,
            phase="watching",
            ready=False,
            outcome=reason,
        )
    )
    msgs += [s.sample(t, **BUSY) for t in range(60, 120)]
    msgs.append(
        s.event(
            120.0,
            "watchdog",
            gpu=None,
            message="the action can run again: RunPod accepted the instance's key (HTTP 200)",
            phase="watching",
            ready=True,
            outcome="RunPod accepted the instance's key (HTTP 200)",
        )
    )
    msgs += [s.sample(t, **BUSY) for t in range(120, 130)]
    _eng, alerts = _run(msgs)
    mine = [a for a in alerts if a.rule_id == "watchdog_unready"]
    assert [a.state for a in mine] == ["firing", "resolved"]
    assert mine[0].severity == "critical"
    assert alert_title(mine[0]) == "Watchdog on a100-night cannot act any more"
    text = alert_sentence(mine[0])
    assert reason in text and "stay billed" in text
    assert not [a for a in alerts if a.rule_id in ("watchdog_failed", "watchdog_pending")]
