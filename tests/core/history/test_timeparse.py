"""Command-line times: ISO 8601 with and without a zone, durations ago, now, bad input."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from gpufleet.core.history.timeparse import TimeParseError, format_utc, parse_duration, parse_time

NOW = 1_714_567_890.5


@pytest.mark.parametrize(
    ("text", "ago"),
    [
        ("30m", 1800),
        ("-30m", 1800),
        ("2h", 7200),
        ("1d", 86400),
        ("90s", 90),
        ("1h30m", 5400),
        ("1w", 604800),
        ("0.5h", 1800),
        (" 10M ", 600),
        ("now", 0),
        ("NOW", 0),
    ],
)
def test_durations_mean_ago(text: str, ago: float) -> None:
    assert parse_time(text, NOW) == NOW - ago


def test_iso_with_zone() -> None:
    assert parse_time("2024-05-01T12:00:00Z", NOW) == 1714564800.0
    assert parse_time("2024-05-01T14:00:00+02:00", NOW) == 1714564800.0
    assert parse_time("2024-05-01T12:00:00.250z", NOW) == 1714564800.25


def test_naive_iso_is_local_time() -> None:
    want = datetime(2024, 5, 1, 14, 30).timestamp()  # local, whatever TZ the test runs in
    assert parse_time("2024-05-01T14:30", NOW) == want
    assert parse_time("2024-05-01 14:30:00", NOW) == want
    assert parse_time("2024-05-01", NOW) == datetime(2024, 5, 1).timestamp()


def test_epoch_seconds_and_default_now() -> None:
    assert parse_time("1714564800", NOW) == 1714564800.0
    assert abs(parse_time("now") - time.time()) < 5


@pytest.mark.parametrize("text", ["", "yesterday", "30", "30x", "--30m", "2024-13-01", "m30"])
def test_bad_input_says_what_is_accepted(text: str) -> None:
    with pytest.raises(TimeParseError) as e:
        parse_time(text, NOW)
    msg = str(e.value)
    assert "\n" not in msg and ("ISO 8601" in msg or "unit" in msg)


def test_parse_duration_and_format() -> None:
    assert parse_duration("45m") == 2700
    with pytest.raises(TimeParseError):
        parse_duration("-5m")
    assert format_utc(1714564800.123) == "2024-05-01T12:00:00.123Z"
    assert datetime.fromisoformat(format_utc(NOW).replace("Z", "+00:00")) == datetime.fromtimestamp(
        NOW, timezone.utc
    )
