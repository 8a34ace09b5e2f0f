"""A sampler restart is an alert only when it is news: a new run after a run the app was
following is (the host rebooted, the daemon was killed), but the run the app starts itself
after feeding another run's messages (the demo's live daemon after its simulated half hour)
is not, and its first sample is not taken for a stall either. The alert says what a restart
means, and its details (the tooltip's lines) read as words and times, never as a dict."""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpufleet.core.alerts.rules import RuleEngine, load_rules
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence
from gpufleet.core.text.evidence import evidence_lines
from gpufleet.core.wire.messages import Message, parse_object

from tests.support.rules_support import T0, Stream

HOST = "h100-a"


def _hello(run_id: str) -> Message:
    obj = dict(Stream().hello.raw)
    obj["run_id"] = run_id
    return parse_object(obj)


def _two_runs(s: Stream, gap: int) -> tuple[list[Message], list[Message]]:
    first = [_hello("run-a"), *(s.sample(t) for t in range(60))]
    s.seq = 0
    second = [_hello("run-b"), *(s.sample(t) for t in range(60 + gap, 120 + gap))]
    return first, second


def _feed(eng: RuleEngine, msgs: Iterable[Message]) -> list[Alert]:
    out: list[Alert] = []
    for m in msgs:
        out.extend(eng.feed(HOST, m))
    return out


def _fired(alerts: list[Alert], rule: str) -> list[Alert]:
    return [a for a in alerts if a.rule_id == rule and a.state == "firing"]


def test_a_run_the_app_started_itself_is_not_a_restart_nor_a_stall() -> None:
    first, second = _two_runs(Stream(), gap=45)
    eng = RuleEngine(load_rules(None))
    _feed(eng, first)
    eng.expect_new_run(HOST)
    alerts = _feed(eng, second)
    assert _fired(alerts, "sampler_restarted") == []
    assert _fired(alerts, "sampler_stalled") == []
    # Expected once: a later new run is news again.
    s = Stream()
    s.seq = 500
    later = [_hello("run-c"), *(s.sample(t) for t in range(300, 330))]
    (a,) = _fired(_feed(eng, later), "sampler_restarted")
    assert a.host == HOST


def test_a_restart_of_a_followed_run_is_news_in_plain_words() -> None:
    first, second = _two_runs(Stream(), gap=45)
    eng = RuleEngine(load_rules(None))
    (a,) = _fired(_feed(eng, [*first, *second]), "sampler_restarted")
    text = alert_sentence(a)
    assert HOST in text and "rebooted" in text and "started over" in text
    assert "46 s" in text  # the gap, in words
    lines = evidence_lines(a.evidence)
    joined = "\n".join(lines)
    assert "{" not in joined and "'" not in joined, joined
    assert "previous sampler run: run-a" in lines and "new sampler run: run-b" in lines
    assert "time without samples: 46 s" in lines
    # The last sample before the gap as a clock time, not an epoch.
    (last,) = [ln for ln in lines if ln.startswith("last sample:")]
    assert re.fullmatch(r"last sample: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", last), last
    assert str(int(T0)) not in joined
