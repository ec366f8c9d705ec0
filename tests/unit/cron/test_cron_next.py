"""next_after and ticks_between on the calendar: leap days, month ends, day rules, steps, UTC."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from etl_craft.core.cron import CronExpression, next_after, ticks_between


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)


def ticks(text: str, start: datetime, end: datetime, tz: str = "UTC") -> list[datetime]:
    return list(ticks_between(text, start, end, tz))


def test_leap_day_waits_for_the_next_leap_year() -> None:
    assert next_after("0 0 29 2 *", utc(2025, 1, 1), "UTC") == utc(2028, 2, 29)


def test_leap_day_skips_2100_which_is_not_a_leap_year() -> None:
    assert next_after("0 0 29 2 *", utc(2096, 3, 1), "UTC") == utc(2104, 2, 29)


@pytest.mark.parametrize("text", ["0 0 30 2 *", "0 0 31 4,6,9,11 *"])
def test_a_date_that_never_exists_is_refused_quickly(text: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"never fires: no tick within 8 years after 2025-01-01"):
        next_after(text, utc(2025, 1, 1), "UTC")
    assert time.perf_counter() - started < 0.5


def test_day_31_fires_only_in_months_that_have_it() -> None:
    assert ticks("0 0 31 * *", utc(2025, 1, 1), utc(2025, 12, 31)) == [
        utc(2025, month, 31) for month in (1, 3, 5, 7, 8, 10, 12)
    ]


def test_crossing_a_month_and_a_year_end() -> None:
    assert next_after("59 23 * * *", utc(2024, 12, 31, 23, 59), "UTC") == utc(2025, 1, 1, 23, 59)
    assert next_after("0 0 1 * *", utc(2025, 1, 31, 12), "UTC") == utc(2025, 2, 1)


def test_both_day_fields_restricted_means_either_day() -> None:
    # The 13th, or any Friday, in June 2025 (the 13th is itself a Friday).
    days = [t.day for t in ticks("0 0 13 * FRI", utc(2025, 6, 1), utc(2025, 6, 30))]
    assert days == [6, 13, 20, 27]
    days = [t.day for t in ticks("0 0 1,15 * MON", utc(2025, 6, 1), utc(2025, 6, 30))]
    assert days == [2, 9, 15, 16, 23, 30]


def test_one_day_field_restricted_means_that_field_alone() -> None:
    fridays = [t.day for t in ticks("0 0 * * FRI", utc(2025, 6, 1), utc(2025, 6, 30))]
    assert fridays == [6, 13, 20, 27]
    thirteenth = [t.day for t in ticks("0 0 13 * *", utc(2025, 6, 1), utc(2025, 7, 31))]
    assert thirteenth == [13, 13]


def test_a_full_range_counts_as_unrestricted() -> None:
    # 1-31 covers every day, so only the weekday decides, as with *.
    assert ticks("0 0 1-31 * SUN", utc(2025, 6, 1), utc(2025, 6, 30)) == ticks(
        "0 0 * * SUN", utc(2025, 6, 1), utc(2025, 6, 30)
    )


def test_weekdays_and_office_hours_with_a_step() -> None:
    found = ticks("*/30 9-10 * * MON-FRI", utc(2025, 6, 6), utc(2025, 6, 9, 23))
    assert found == [
        utc(2025, 6, 6, 9),
        utc(2025, 6, 6, 9, 30),
        utc(2025, 6, 6, 10),
        utc(2025, 6, 6, 10, 30),
        utc(2025, 6, 9, 9),
        utc(2025, 6, 9, 9, 30),
        utc(2025, 6, 9, 10),
        utc(2025, 6, 9, 10, 30),
    ]


def test_sunday_as_seven_and_as_zero_agree() -> None:
    start, end = utc(2025, 5, 31), utc(2025, 6, 30)
    assert ticks("0 0 * * 7", start, end) == ticks("0 0 * * 0", start, end)
    assert [t.day for t in ticks("0 0 * * 7", start, end)] == [1, 8, 15, 22, 29]


def test_next_after_is_strictly_after_the_instant() -> None:
    assert next_after("0 * * * *", utc(2025, 1, 1, 5), "UTC") == utc(2025, 1, 1, 6)
    assert next_after("0 * * * *", utc(2025, 1, 1, 4, 59, 59), "UTC") == utc(2025, 1, 1, 5)
    assert next_after("* * * * *", utc(2025, 1, 1, 5, 0, 0, 1), "UTC") == utc(2025, 1, 1, 5, 1)


def test_ticks_between_excludes_the_start_and_includes_the_end() -> None:
    assert ticks("0 * * * *", utc(2025, 1, 1, 1), utc(2025, 1, 1, 3)) == [
        utc(2025, 1, 1, 2),
        utc(2025, 1, 1, 3),
    ]
    assert ticks("0 * * * *", utc(2025, 1, 1, 1), utc(2025, 1, 1, 1, 59)) == []


def test_any_aware_instant_in_and_always_utc_out() -> None:
    tokyo = datetime(2025, 1, 1, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))  # 00:00 UTC
    fixed = datetime(2025, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=1)))  # 00:00 UTC
    for instant in (tokyo, fixed, utc(2025, 1, 1)):
        tick = next_after("30 * * * *", instant, "UTC")
        assert tick == utc(2025, 1, 1, 0, 30)
        assert tick.tzinfo is UTC


def test_the_schedule_is_read_in_its_own_time_zone() -> None:
    # 09:00 in Tokyo (UTC+9, no DST) is 00:00 UTC.
    assert next_after("0 9 * * *", utc(2025, 1, 1, 1), "Asia/Tokyo") == utc(2025, 1, 2, 0)
    assert next_after("0 9 * * *", utc(2025, 1, 1, 1), ZoneInfo("Asia/Tokyo")) == utc(2025, 1, 2)


def test_the_local_date_decides_the_day_fields() -> None:
    # Monday 00:30 in New York is still Monday; in UTC it is 05:30 the same day.
    assert next_after("30 0 * * MON", utc(2025, 6, 1), "America/New_York") == utc(2025, 6, 2, 4, 30)


def test_a_parsed_expression_and_its_text_give_the_same_ticks() -> None:
    cron = CronExpression.parse("15 4 * * *")
    assert next_after(cron, utc(2025, 1, 1), "UTC") == next_after(
        "15 4 * * *", utc(2025, 1, 1), "UTC"
    )


def test_a_naive_instant_is_refused() -> None:
    with pytest.raises(ValueError, match="has no time zone; expected an aware one"):
        next_after("* * * * *", datetime(2025, 1, 1), "UTC")


def test_an_unknown_time_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="time zone 'Mars/Olympus' is unknown; expected an IANA"):
        next_after("* * * * *", utc(2025, 1, 1), "Mars/Olympus")


def test_a_long_catch_up_is_computed_without_a_minute_scan() -> None:
    started = time.perf_counter()
    daily = ticks("0 3 * * *", utc(2015, 1, 1), utc(2025, 1, 1), "Europe/London")
    assert len(daily) == 3653
    assert time.perf_counter() - started < 2
