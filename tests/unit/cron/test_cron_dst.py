"""Daylight saving in New York and London: skipped wall times, repeated wall times, catch-up.

2024 transitions used below (UTC instants):
  New York  spring 03-10 07:00 (02:00 EST -> 03:00 EDT), fall 11-03 06:00 (02:00 EDT -> 01:00 EST)
  London    spring 03-31 01:00 (01:00 GMT -> 02:00 BST), fall 10-27 01:00 (02:00 BST -> 01:00 GMT)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from etl_craft.core.cron import next_after, ticks_between

NEW_YORK = "America/New_York"
LONDON = "Europe/London"


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=UTC)


def ticks(text: str, start: datetime, end: datetime, tz: str) -> list[datetime]:
    return list(ticks_between(text, start, end, tz))


def every(step_minutes: int, first: datetime, last: datetime) -> list[datetime]:
    count = (last - first) // timedelta(minutes=step_minutes) + 1
    return [first + timedelta(minutes=step_minutes * n) for n in range(count)]


# Skipped wall times (spring forward): schedules with a fixed hour fire at the next valid minute.


@pytest.mark.parametrize(
    ("text", "tz", "day_before", "shifted", "following_day"),
    [
        ("30 2 * * *", NEW_YORK, utc(2024, 3, 9, 12), utc(2024, 3, 10, 7), utc(2024, 3, 11, 6, 30)),
        ("30 1 * * *", LONDON, utc(2024, 3, 30, 12), utc(2024, 3, 31, 1), utc(2024, 4, 1, 0, 30)),
    ],
)
def test_a_skipped_daily_time_fires_at_the_next_valid_minute(
    text: str, tz: str, day_before: datetime, shifted: datetime, following_day: datetime
) -> None:
    assert ticks(text, day_before, following_day, tz) == [shifted, following_day]


def test_every_skipped_minute_collapses_into_one_tick() -> None:
    # All sixty minutes of 02:xx are skipped; they fire once, at 03:00 EDT.
    assert ticks("* 2 * * *", utc(2024, 3, 10), utc(2024, 3, 10, 23), NEW_YORK) == [
        utc(2024, 3, 10, 7)
    ]


def test_a_shifted_tick_and_a_real_tick_at_the_same_instant_fire_once() -> None:
    # 02:00 is skipped and moves to 03:00, which the expression also names.
    assert ticks("0 2,3 * * *", utc(2024, 3, 10), utc(2024, 3, 10, 23), NEW_YORK) == [
        utc(2024, 3, 10, 7)
    ]
    assert ticks("30 2,3 * * *", utc(2024, 3, 10), utc(2024, 3, 10, 23), NEW_YORK) == [
        utc(2024, 3, 10, 7),
        utc(2024, 3, 10, 7, 30),
    ]


# Repeated wall times (fall back): schedules with a fixed hour fire once, at the first occurrence.


@pytest.mark.parametrize(
    ("text", "tz", "day_before", "first_occurrence", "following_day"),
    [
        (
            "30 1 * * *",
            NEW_YORK,
            utc(2024, 11, 2, 12),
            utc(2024, 11, 3, 5, 30),
            utc(2024, 11, 4, 6, 30),
        ),
        (
            "30 1 * * *",
            LONDON,
            utc(2024, 10, 26, 12),
            utc(2024, 10, 27, 0, 30),
            utc(2024, 10, 28, 1, 30),
        ),
    ],
)
def test_a_repeated_daily_time_fires_once_at_its_first_occurrence(
    text: str, tz: str, day_before: datetime, first_occurrence: datetime, following_day: datetime
) -> None:
    assert ticks(text, day_before, following_day, tz) == [first_occurrence, following_day]


@pytest.mark.parametrize(
    "inside_the_repeated_hour",
    [utc(2024, 11, 3, 5, 40), utc(2024, 11, 3, 6, 10)],
    ids=["after-the-first-01:30-EDT", "during-the-second-01:xx-EST"],
)
def test_the_second_occurrence_of_a_repeated_time_never_fires(
    inside_the_repeated_hour: datetime,
) -> None:
    assert next_after("30 1 * * *", inside_the_repeated_hour, NEW_YORK) == utc(2024, 11, 4, 6, 30)


def test_a_quarter_hour_schedule_with_a_fixed_hour_runs_its_hour_once() -> None:
    assert ticks("*/15 1 * * *", utc(2024, 11, 3), utc(2024, 11, 3, 12), NEW_YORK) == every(
        15, utc(2024, 11, 3, 5), utc(2024, 11, 3, 5, 45)
    )


def test_leaving_out_one_hour_makes_a_schedule_follow_the_wall_clock() -> None:
    # 01:00 shows twice; only the EDT one fires, then 02:00 EST.
    assert ticks("0 0-22 * * *", utc(2024, 11, 3, 3, 59), utc(2024, 11, 3, 7), NEW_YORK) == [
        utc(2024, 11, 3, 4),
        utc(2024, 11, 3, 5),
        utc(2024, 11, 3, 7),
    ]


# Schedules that cover every hour follow elapsed time.


@pytest.mark.parametrize(
    ("tz", "first", "last"),
    [
        (NEW_YORK, utc(2024, 11, 3, 4), utc(2024, 11, 3, 9)),
        (NEW_YORK, utc(2024, 3, 10, 5), utc(2024, 3, 10, 9)),
        (LONDON, utc(2024, 10, 26, 23), utc(2024, 10, 27, 3)),
        (LONDON, utc(2024, 3, 30, 23), utc(2024, 3, 31, 3)),
    ],
    ids=["new-york-fall", "new-york-spring", "london-fall", "london-spring"],
)
def test_hourly_fires_every_real_hour_across_a_transition(
    tz: str, first: datetime, last: datetime
) -> None:
    assert ticks("@hourly", first - timedelta(minutes=1), last, tz) == every(60, first, last)


@pytest.mark.parametrize(
    ("tz", "first", "last"),
    [
        (NEW_YORK, utc(2024, 11, 3, 4, 30), utc(2024, 11, 3, 7, 30)),
        (NEW_YORK, utc(2024, 3, 10, 6), utc(2024, 3, 10, 8)),
        (LONDON, utc(2024, 10, 27, 0), utc(2024, 10, 27, 2, 30)),
        (LONDON, utc(2024, 3, 31, 0), utc(2024, 3, 31, 2)),
    ],
    ids=["new-york-fall", "new-york-spring", "london-fall", "london-spring"],
)
def test_every_fifteen_minutes_keeps_a_steady_beat_across_a_transition(
    tz: str, first: datetime, last: datetime
) -> None:
    # In the fall the repeated hour's quarters happen twice on the wall clock, once each in UTC.
    assert ticks("*/15 * * * *", first - timedelta(minutes=1), last, tz) == every(15, first, last)


def test_the_fall_back_hour_fires_eight_quarters() -> None:
    repeated_hour = ticks("*/15 1 * * *", utc(2024, 11, 3), utc(2024, 11, 4), NEW_YORK)
    every_hour = ticks("*/15 * * * *", utc(2024, 11, 3, 4, 59), utc(2024, 11, 3, 6, 59), NEW_YORK)
    assert len(repeated_hour) == 4
    assert len(every_hour) == 8


def test_an_every_hour_schedule_does_not_invent_the_skipped_time() -> None:
    # 02:30 never shows on the clock; elapsed time goes from 01:30 EST to 03:30 EDT in one hour.
    assert ticks("30 * * * *", utc(2024, 3, 10, 6), utc(2024, 3, 10, 8), NEW_YORK) == [
        utc(2024, 3, 10, 6, 30),
        utc(2024, 3, 10, 7, 30),
    ]


def test_next_after_inside_the_repeated_hour_finds_the_second_quarter() -> None:
    # 01:50 EDT; the next quarter is 01:00 EST, an hour earlier on the wall clock.
    assert next_after("*/15 * * * *", utc(2024, 11, 3, 5, 50), NEW_YORK) == utc(2024, 11, 3, 6)


# Catch-up across a change of offset.


def test_catch_up_over_the_spring_change_keeps_one_tick_per_day() -> None:
    found = ticks("0 9 * * *", utc(2024, 3, 29), utc(2024, 4, 2), LONDON)
    assert found == [
        utc(2024, 3, 29, 9),
        utc(2024, 3, 30, 9),
        utc(2024, 3, 31, 8),
        utc(2024, 4, 1, 8),
    ]


def test_catch_up_over_the_fall_change_fires_the_repeated_time_once() -> None:
    found = ticks("30 1 * * *", utc(2024, 11, 1), utc(2024, 11, 5), NEW_YORK)
    assert found == [
        utc(2024, 11, 1, 5, 30),
        utc(2024, 11, 2, 5, 30),
        utc(2024, 11, 3, 5, 30),
        utc(2024, 11, 4, 6, 30),
    ]


def test_midnight_that_does_not_exist_fires_at_one() -> None:
    # Havana springs forward at midnight: 00:00 CST becomes 01:00 CDT (05:00 UTC).
    assert next_after("@daily", utc(2024, 3, 9, 12), "America/Havana") == utc(2024, 3, 10, 5)
