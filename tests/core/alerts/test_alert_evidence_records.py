"""Each built-in condition's evidence ``values`` is the record ``core.model.evidence``
declares for it: the faulty hosts of the false-alarm corpus (``bench/alerts_corpus.py``)
fire most conditions; every alert's values have its record's keys, no other, and survive
the JSON of the history store and the bundles (``to_json`` / ``alert_from_json``) with the
same sentences. A record written before the records existed reads as it did."""

from __future__ import annotations

import json
from typing import Any

from gpufleet.core.alerts.conditions import CONDITIONS
from gpufleet.core.model import evidence as rec
from gpufleet.core.model.alert import Alert, alert_from_json
from gpufleet.core.text.alerts import alert_sentence, alert_title

from tests.support.corpus_runs import faulty_names, faulty_run


def _fired() -> list[Alert]:
    out: list[Alert] = []
    for name in faulty_names(0.4, 3):
        out += faulty_run(0.4, 3, name)[1]
    return out


def _key_problems(a: Alert) -> list[str]:
    record: Any = rec.RECORDS[a.condition]
    keys = set(rec.raw_values(a))
    required, optional = set(record.__required_keys__), set(record.__optional_keys__)
    optional.discard("_severity")  # the engine takes it out
    out = [f"{a.condition}: {k} missing" for k in sorted(required - keys)]
    out += [f"{a.condition}: {k} not in its record" for k in sorted(keys - required - optional)]
    return out


def test_every_fired_alert_says_its_record_and_survives_json() -> None:
    fired = _fired()
    declared = [a for a in fired if a.condition in rec.RECORDS]
    assert {a.condition for a in declared} >= {
        "thermal_throttle", "hw_slowdown", "power_limit_low", "mem_unaccounted",
        "mem_temp_high", "nvlink_slow", "gpu_lost", "ecc_dbe_increase", "idle_billed",
        "sampler_stalled", "miner_process", "pcie_replays", "pcie_downtrained",
    }  # fmt: skip
    assert [p for a in declared for p in _key_problems(a)] == []
    for a in fired:
        back = alert_from_json(json.loads(json.dumps(a.to_json())))
        assert back.evidence == a.to_json()["evidence"]
        assert (alert_title(back), alert_sentence(back)) == (alert_title(a), alert_sentence(a))


def test_every_built_in_condition_declares_a_record() -> None:
    assert sorted(set(CONDITIONS) - set(rec.RECORDS)) == []


def test_an_old_stored_record_reads_as_before() -> None:
    # As the lifecycle table and bundles held a power_limit_low and a mem_temp_high alert.
    old = {
        "id": "h:power_limit_low:gpu1@100.000", "rule_id": "power_limit_low",
        "severity": "warning", "host": "h", "gpu": 1, "state": "firing", "started_t": 100.0,
        "ended_t": None, "condition": "power_limit_low", "key": "", "acked": False,
        "snoozed_until": None,
        "evidence": {
            "values": {"power_limit_w": 300.0, "power_default_w": 700.0, "limit_pct": 42.9,
                       "power_w": 295.0, "power_cap_active": True, "binding": True,
                       "sm_clock_mhz": 1410, "sm_clock_max_mhz": 1980, "clock_pct": 71.2},
            "thresholds": {"below_frac": 0.95}, "since_t": 40.0, "window_s": 60.0,
            "for_s": 60.0, "price_per_hour": 4.0, "currency": "USD",
        },
    }  # fmt: skip
    a = alert_from_json(old)
    text = alert_sentence(a)
    assert "300" in text and "700" in text and "43 %" in text, text
    mem = dict(old, condition="mem_temp_high", rule_id="mem_temp_high")
    mem["evidence"] = {"values": {"temp_mem_c": 97, "limit_c": 95, "above_c": 95.0,
                                  "own_limit": True, "util_gpu_pct": 90}}  # fmt: skip
    text = alert_sentence(alert_from_json(mem))
    assert "97" in text and "95" in text, text
    # A record missing a key its condition now declares still reads (the "?" placeholder).
    del old["evidence"]["values"]["power_default_w"]  # type: ignore[index]
    assert "300" in alert_sentence(alert_from_json(old))
