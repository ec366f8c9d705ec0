"""ticks_between agrees with a brute-force scan of every UTC minute, around DST changes or not.

The scan states the documented rules directly: a minute fires when its local wall time matches
(only the first occurrence of a repeated wall time, unless the expression covers every hour), and
for expressions with a fixed hour, the first minute after a skipped stretch fires when any skipped
wall time matched.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from etl_craft.core.cron import CronExpression, ticks_between

MINUTE = timedelta(minutes=1)

# (zone, an instant near one of its transitions); the UTC entries are ordinary days.
TRANSITIONS = [
    ("America/New_York", datetime(2024, 3, 10, 7, tzinfo=UTC)),
    ("America/New_York", datetime(2024, 11, 3, 6, tzinfo=UTC)),
    ("Europe/London", datetime(2024, 3, 31, 1, tzinfo=UTC)),
    ("Europe/London", datetime(2024, 10, 27, 1, tzinfo=UTC)),
    ("Australia/Lord_Howe", datetime(2024, 4, 6, 15, tzinfo=UTC)),  # back 30 minutes
    ("Australia/Lord_Howe", datetime(2024, 10, 5, 15, 30, tzinfo=UTC)),  # forward 30 minutes
    ("America/Havana", datetime(2024, 3, 10, 5, tzinfo=UTC)),  # midnight is skipped
    ("UTC", datetime(2024, 2, 28, 12, tzinfo=UTC)),
    ("UTC", datetime(2025, 12, 31, 12, tzinfo=UTC)),
]

ZONES = sorted({zone for zone, _ in TRANSITIONS})

MINUTE_FIELDS = ["*", "*/15", "0", "30", "0,45", "5-20/5", "*/7", "59"]
HOUR_FIELDS = ["*", "*/1", "0-23", "0-22", "0", "1", "2", "1-3", "*/2", "23"]


def five_fields(*fields: str) -> str:
    return " ".join(fields)


# Around a transition (always a Sunday) the day fields mostly let the day through, so the draws
# exercise the hour and minute fields against skipped and repeated wall times.
dst_expressions = st.builds(
    five_fields,
    st.sampled_from(MINUTE_FIELDS),
    st.sampled_from(HOUR_FIELDS),
    st.sampled_from(["*", "*", "1-7", "*/2"]),
    st.sampled_from(["*", "*", "3,4,10,11"]),
    st.sampled_from(["*", "*", "SUN", "0-5"]),
)
any_expressions = st.builds(
    five_fields,
    st.sampled_from(MINUTE_FIELDS),
    st.sampled_from(HOUR_FIELDS),
    st.sampled_from(["*", "1", "10", "31", "1-7", "29", "*/10"]),
    st.sampled_from(["*", "3", "10,11", "*/2", "FEB-APR"]),
    st.sampled_from(["*", "0", "MON-FRI", "SUN", "6", "WED"]),
)


@st.composite
def windows_over_a_transition(draw: st.DrawFn) -> tuple[ZoneInfo, datetime, datetime]:
    zone, transition = draw(st.sampled_from(TRANSITIONS))
    before = timedelta(seconds=draw(st.integers(min_value=1, max_value=4 * 3600)))
    after = timedelta(minutes=draw(st.integers(min_value=90, max_value=6 * 60)))
    return ZoneInfo(zone), transition - before, transition + after


@st.composite
def windows_anywhere(draw: st.DrawFn) -> tuple[ZoneInfo, datetime, datetime]:
    zone = ZoneInfo(draw(st.sampled_from(ZONES)))
    moment = datetime(2020, 1, 1, tzinfo=UTC)
    start = moment + timedelta(seconds=draw(st.integers(min_value=0, max_value=10 * 366 * 86400)))
    length = timedelta(minutes=draw(st.integers(min_value=1, max_value=3 * 24 * 60)))
    return zone, start, start + length


def brute_force(
    cron: CronExpression, start: datetime, end: datetime, zone: ZoneInfo
) -> list[datetime]:
    every_hour = set(cron.hours) == set(range(24))
    minute = start.replace(second=0, microsecond=0) + MINUTE
    previous_wall = wall_of(minute - MINUTE, zone)
    found = []
    while minute <= end:
        wall = wall_of(minute, zone)
        second_occurrence = minute.astimezone(zone).fold == 1
        fires_as_shown = cron.matches(wall) and (every_hour or not second_occurrence)
        fires_for_a_skipped_time = not every_hour and skipped_wall_matched(
            cron, previous_wall, wall
        )
        if fires_as_shown or fires_for_a_skipped_time:
            found.append(minute)
        previous_wall, minute = wall, minute + MINUTE
    return found


def wall_of(instant: datetime, zone: ZoneInfo) -> datetime:
    return instant.astimezone(zone).replace(tzinfo=None, fold=0)


def skipped_wall_matched(cron: CronExpression, previous: datetime, current: datetime) -> bool:
    skipped = (current - previous) // MINUTE - 1
    return any(cron.matches(previous + MINUTE * n) for n in range(1, skipped + 1))


def is_first_minute_after_a_skip(tick: datetime, zone: ZoneInfo) -> bool:
    return wall_of(tick, zone) - wall_of(tick - MINUTE, zone) > MINUTE


def assert_ticks_match_the_scan(text: str, zone: ZoneInfo, start: datetime, end: datetime) -> None:
    cron = CronExpression.parse(text)

    found = list(ticks_between(cron, start, end, zone))

    assert all(earlier < later for earlier, later in pairwise(found))
    assert all(start < tick <= end and tick.tzinfo is UTC for tick in found)
    for tick in found:
        assert cron.matches(wall_of(tick, zone)) or is_first_minute_after_a_skip(tick, zone)
    assert found == brute_force(cron, start, end, zone)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(text=dst_expressions, window=windows_over_a_transition())
def test_ticks_around_a_transition_match_a_minute_scan(
    text: str, window: tuple[ZoneInfo, datetime, datetime]
) -> None:
    assert_ticks_match_the_scan(text, *window)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(text=any_expressions, window=windows_anywhere())
def test_ticks_on_any_days_match_a_minute_scan(
    text: str, window: tuple[ZoneInfo, datetime, datetime]
) -> None:
    assert_ticks_match_the_scan(text, *window)
