"""The rule engine's state machine at its edges: for-duration, hysteresis, cooldown, ack,
snooze, per-host overrides, and rule files (shipped, user overrides, clear errors)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpufleet.core.alerts.rules import Rule, RuleEngine, RulesError, load_rules, load_rules_text
from gpufleet.core.config import paths
from gpufleet.core.config.hostconfig import HostConfig
from gpufleet.core.model.alert import Alert
from gpufleet.core.text.catalogue import alert_sentence, alert_title

from tests.support.rules_support import T0, Stream


def only(rules: list[Rule], *ids: str) -> list[Rule]:
    return [r for r in rules if r.id in ids]


def rule(rule_id: str, **changes: object) -> Rule:
    from dataclasses import replace

    (r,) = only(load_rules(include_user=False), rule_id)
    return replace(r, **changes)  # type: ignore[arg-type]


def run(engine: RuleEngine, msgs: list) -> list[Alert]:
    out: list[Alert] = []
    for m in msgs:
        out.extend(engine.feed("h", m))
    return out


HOT = 0x20  # sw_thermal


def thermal(**changes: object) -> Rule:
    """thermal_throttle without its flicker bridge (a bit seen within 10 s keeps a pending
    alert going), to test the state machine's own edges sample by sample."""
    r = rule("thermal_throttle")
    return rule("thermal_throttle", params={**r.params, "flicker_s": 0.0}, **changes)


def test_for_duration_fires_exactly_at_for_s() -> None:
    eng = RuleEngine([rule("thermal_throttle", for_s=30.0)])
    s = Stream()
    assert run(eng, [s.hello, *(s.sample(t, clock_reasons=HOT) for t in range(0, 30))]) == []
    (a,) = run(eng, [s.sample(30, clock_reasons=HOT)])
    assert a.state == "firing" and a.rule_id == "thermal_throttle" and a.gpu == 0
    assert a.started_t == T0 + 30
    assert a.evidence["since_t"] == T0 and a.evidence["window_s"] == 30
    assert a.evidence["values"]["reasons"] == ["sw_thermal"]
    assert a.evidence["thresholds"]["mask"] == 0x60
    assert eng.active() == [a]


def test_for_duration_restarts_when_the_condition_breaks() -> None:
    eng = RuleEngine([thermal(for_s=30.0)])
    s = Stream()
    msgs = [s.hello, *(s.sample(t, clock_reasons=HOT) for t in range(0, 29))]
    msgs.append(s.sample(29, clock_reasons=0))  # one clear sample: back to zero
    msgs += [s.sample(t, clock_reasons=HOT) for t in range(30, 60)]
    assert run(eng, msgs) == []
    (a,) = run(eng, [s.sample(60, clock_reasons=HOT)])
    assert a.started_t == T0 + 60 and a.evidence["since_t"] == T0 + 30


def test_clear_for_duration_and_ended_time() -> None:
    eng = RuleEngine([thermal(for_s=0.0, clear_for_s=10.0, cooldown_s=0.0)])
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, clock_reasons=HOT)])
    # Clear for 9 s, then hot again: still the same alert, nothing changes.
    assert run(eng, [s.sample(t, clock_reasons=0) for t in range(1, 10)]) == []
    assert run(eng, [s.sample(10, clock_reasons=HOT)]) == []
    assert run(eng, [s.sample(t, clock_reasons=0) for t in range(11, 21)]) == []
    (done,) = run(eng, [s.sample(21, clock_reasons=0)])
    assert done.id == a.id and done.state == "resolved"
    assert done.ended_t == T0 + 11  # when it actually stopped, not when we were sure
    assert done.evidence["duration_s"] == 11
    assert eng.active() == []


def test_hysteresis_band_holds_the_alert() -> None:
    # Fires at slowdown - 5 = 84 °C, clears at <= 81 °C; 82-83 °C is the band.
    eng = RuleEngine([rule("temp_near_slowdown", for_s=0.0, clear_for_s=0.0, cooldown_s=0.0)])
    s = Stream()
    assert run(eng, [s.hello, s.sample(0, temp_gpu_c=83)]) == []  # band: no fire
    (a,) = run(eng, [s.sample(1, temp_gpu_c=84)])
    assert a.evidence["values"] == {"temp_c": 84, "limit_c": 89, "fire_at_c": 84.0, "over": False}
    assert run(eng, [s.sample(t, temp_gpu_c=82) for t in range(2, 50)]) == []  # band: holds
    (done,) = run(eng, [s.sample(50, temp_gpu_c=81)])
    assert done.state == "resolved" and done.ended_t == T0 + 50


def test_cooldown_edges() -> None:
    eng = RuleEngine([thermal(for_s=0.0, clear_for_s=0.0, cooldown_s=60.0)])
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, clock_reasons=HOT)])
    (done,) = run(eng, [s.sample(10, clock_reasons=0)])
    assert done.ended_t == T0 + 10
    # Hot again during the cooldown (ends at 70): no alert until 70, then one at once.
    assert run(eng, [s.sample(t, clock_reasons=HOT) for t in range(11, 70)]) == []
    (b,) = run(eng, [s.sample(70, clock_reasons=HOT)])
    assert b.state == "firing" and b.id != a.id and b.started_t == T0 + 70
    assert b.evidence["since_t"] == T0 + 11


def test_ack_and_snooze() -> None:
    eng = RuleEngine([thermal(for_s=0.0, clear_for_s=0.0, cooldown_s=0.0)])
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, clock_reasons=HOT)])
    assert not a.silenced(T0)
    acked = eng.ack(a.id)
    assert acked is not None and acked.acked and eng.active()[0].acked
    snoozed = eng.snooze(a.id, T0 + 100)
    assert snoozed is not None and snoozed.silenced(T0 + 99) and snoozed.acked
    # It resolves; a new occurrence inside the snooze is born snoozed, not acked.
    (done,) = run(eng, [s.sample(1, clock_reasons=0)])
    assert done.state == "resolved"
    (b,) = run(eng, [s.sample(2, clock_reasons=HOT)])
    assert not b.acked and b.snoozed_until == T0 + 100 and b.silenced(T0 + 2)
    assert not b.silenced(T0 + 100)
    assert eng.ack("no-such-alert") is None


def test_host_overrides_from_config_and_rules_file(tmp_path: Path) -> None:
    rules = load_rules_text(
        """
        [rules.thermal_throttle]
        for_s = 5
        [rules.thermal_throttle.hosts.slow]
        for_s = 20
        """
    )
    hosts = [
        HostConfig(name="fast"),
        HostConfig(name="slow"),
        HostConfig(name="off", rule_overrides={"thermal_throttle": {"enabled": False}}),
        HostConfig(name="cfg", rule_overrides={"thermal_throttle": {"params": {"mask": 0x40}}}),
    ]
    eng = RuleEngine(only(rules, "thermal_throttle"), hosts)
    s = Stream()
    fired: dict[str, float] = {}
    for name in ("fast", "slow", "off", "cfg"):
        eng.feed(name, s.hello)
        for t in range(0, 30):
            for a in eng.feed(name, s.sample(t, clock_reasons=HOT)):
                fired[name] = a.started_t - T0
    assert fired == {"fast": 5, "slow": 20}  # "off" disabled, "cfg" watches hw_thermal only
    assert eng.rule("thermal_throttle", "slow").for_s == 20  # type: ignore[union-attr]


def test_user_rules_file_overrides_by_id_and_adds_rules() -> None:
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    paths.rules_file().write_text(
        """
        [rules.idle_billed]
        for_s = 60
        severity = "critical"
        [rules.fan_high]
        condition = "metric_above"
        params = { metric = "fan_pct", above = 90.0, clear_below = 80.0 }
        """
    )
    rules = {r.id: r for r in load_rules()}
    assert rules["idle_billed"].for_s == 60 and rules["idle_billed"].severity == "critical"
    assert rules["idle_billed"].params["util_below_pct"] == 5.0  # untouched fields stay
    eng = RuleEngine([rules["fan_high"]])
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, fan_pct=95)])
    assert a.rule_id == "fan_high" and "fan_pct" in alert_title(a)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[rules.thermal_throttle]\nfor_s = -1", "rule 'thermal_throttle': for_s must be"),
        ("[rules.thermal_throttle]\nseverity = 'loud'", "severity must be one of"),
        ("[rules.x]\nfor_s = 1", "rule 'x': a new rule needs a condition"),
        ("[rules.x]\ncondition = 'nope'", "unknown condition 'nope'"),
        ("[rules.thermal_throttle]\nparams = { masc = 1 }", "has no parameter 'masc'"),
        ("[rules.thermal_throttle]\nparams = { mask = 'x' }", "parameter 'mask' must be like"),
        ("[rules.thermal_throttle]\ncolour = 1", "unknown field(s) colour"),
        ("[rules.xid]\nactions = [{ type = 'ftp', command = 'x' }]", "type must be 'local'"),
        ("[rules.xid.hosts.h1]\nfor_s = 'soon'", "rule 'xid', host 'h1': for_s must be"),
        ("[rules.thermal_throttle\nfor_s = 1", "not valid TOML"),
    ],
)
def test_bad_rule_files_name_file_and_rule(text: str, needle: str) -> None:
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    paths.rules_file().write_text(text)
    with pytest.raises(RulesError) as info:
        load_rules()
    msg = str(info.value)
    assert needle in msg and str(paths.rules_file()) in msg
    assert "\n" not in msg.strip() or "TOML" in msg


def test_bad_host_override_is_a_clear_error() -> None:
    host = HostConfig(name="h1", rule_overrides={"idle_billed": {"for_s": "long"}})
    with pytest.raises(RulesError, match="host 'h1', rule 'idle_billed': for_s must be"):
        RuleEngine(load_rules(include_user=False), [host])


def test_shipped_rules_all_have_sentences() -> None:
    from gpufleet.core.text.catalogue import ALERT_TEXT, RULE_MEANINGS

    for r in load_rules(include_user=False):
        assert r.condition in ALERT_TEXT and r.condition in RULE_MEANINGS


def test_sentences_carry_numbers_and_cost() -> None:
    eng = RuleEngine(
        [rule("thermal_throttle", for_s=0.0)], [HostConfig(name="h", price_per_hour=3.0)]
    )
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, clock_reasons=HOT, sm_clock_mhz=1128, temp_gpu_c=88)])
    text = alert_sentence(a)
    assert "1128 MHz" in text and "80 %" in text and "88 °C" in text
    assert "$3.00/h" in text and "$0.60 an hour" in text  # 20 % of 3.00
    # Without a price, the sentence asks for one instead of inventing a cost.
    eng2 = RuleEngine([rule("thermal_throttle", for_s=0.0)])
    (b,) = run(eng2, [s.hello, s.sample(1, clock_reasons=HOT)])
    assert "price per hour" in alert_sentence(b)


def test_translator_hook_is_used() -> None:
    from gpufleet.core.text import catalogue

    eng = RuleEngine([rule("thermal_throttle", for_s=0.0)])
    s = Stream()
    (a,) = run(eng, [s.hello, s.sample(0, clock_reasons=HOT)])
    catalogue.set_translator(
        lambda ctx, text: "{host} 的 GPU {gpu} 过热降频" if text == "GPU {gpu} of {host}" else text
    )
    try:
        assert "h 的 GPU 0 过热降频" in alert_title(a)
    finally:
        catalogue.set_translator(None)
    # The title names the host: with several rentals "GPU 0" alone says nothing.
    assert alert_title(a) == "Thermal throttling on GPU 0 of h"


def test_where_capitalises_the_sentence_never_the_host() -> None:
    """{Where} opens sentences: its template's first letter is capitalised (in a language
    with case), while a host name that opens it keeps its own case."""
    from gpufleet.core.text import catalogue

    assert catalogue.where(2, start=True) == "GPU 2"
    assert catalogue.where(None, start=True) == "The host"
    assert catalogue.alert_where("a100-ecc", 2, start=True) == "GPU 2 of a100-ecc"
    assert catalogue.alert_where("a100-ecc", None, start=True) == "a100-ecc"
    words = {"GPU {gpu} of {host}": "la GPU {gpu} de {host}"}
    catalogue.set_translator(lambda ctx, text: words.get(text, text))
    try:
        assert catalogue.alert_where("a100-ecc", 2, start=True) == "La GPU 2 de a100-ecc"
        assert catalogue.alert_where("a100-ecc", 2) == "la GPU 2 de a100-ecc"
        words["GPU {gpu} of {host}"] = "{host} 的 GPU {gpu}"
        assert catalogue.alert_where("a100-ecc", 2, start=True) == "a100-ecc 的 GPU 2"
    finally:
        catalogue.set_translator(None)


def test_webhook_table_from_the_user_rules_file() -> None:
    from gpufleet.core.alerts.rules import load_webhook_table

    assert load_webhook_table() == {}
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    paths.rules_file().write_text(
        '[webhooks.team]\nformat = "slack"\n[rules.xid]\nnotify = ["team"]\n'
    )
    assert load_webhook_table() == {"team": {"format": "slack"}}
    assert {r.id: r for r in load_rules()}["xid"].notify == ("team",)
