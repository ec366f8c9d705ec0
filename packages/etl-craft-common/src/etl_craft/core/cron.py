"""Five-field cron expressions and the instants at which they fire in a time zone.

An expression is read in the wall-clock time of the schedule's time zone; every tick it produces
is an aware UTC datetime. Daylight saving is resolved as cronie and Airflow resolve it:

* A schedule whose hour field leaves out some hours (daily at 02:30, `0 9-17 * * *`) follows the
  wall clock. A local time the clocks skip fires at the next valid minute (02:30 on New York's
  spring-forward day fires at 03:00 EDT); a local time the clocks show twice fires once, at its
  first occurrence.
* A schedule that covers every hour (`*`, `*/1`, `0-23` in the hour field: hourly, `*/15`) follows
  elapsed time: each instant whose local time matches fires. During a fall-back `*/15` fires at
  all eight quarters of the repeated hour and `@hourly` fires every real hour; during a
  spring-forward the skipped quarters do not fire. Otherwise an hourly pipeline would pause for
  two hours in autumn, or run twice within minutes in spring.

Day of month and day of week: when both are restricted, a day matches if either matches. A field
is restricted when it leaves out some value, so `*/1` and `1-31` count as unrestricted like `*`.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}

# The rarest schedule that fires at all is 29 February, and 2100 is not a leap year, so two ticks
# can lie 8 years apart (2096-02-29, 2104-02-29). Searching 8 calendar years past the start year
# finds every tick that exists and still ends quickly for one that never fires.
SEARCH_YEARS = 8

_LONGEST_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    expected: str
    names: dict[str, int]


_FIELDS = (
    _Field("minute", 0, 59, "0-59", {}),
    _Field("hour", 0, 23, "0-23", {}),
    _Field("day-of-month", 1, 31, "1-31", {}),
    _Field("month", 1, 12, "1-12 or JAN-DEC", {n: i + 1 for i, n in enumerate(_MONTH_NAMES)}),
    _Field(
        "day-of-week",
        0,
        7,
        "0-7 or SUN-SAT (0 and 7 are Sunday)",
        {n: i for i, n in enumerate(_DAY_NAMES)},
    ),
)


@dataclass(frozen=True)
class CronExpression:
    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]  # 0 = Sunday

    @classmethod
    def parse(cls, text: str) -> CronExpression:
        fields = _expand_macro(text).split()
        if len(fields) != 5:
            raise ValueError(
                f"cron expression {text!r} has {len(fields)} fields; expected 5 (minute hour "
                "day-of-month month day-of-week) or a macro such as @daily"
            )
        try:
            values = [
                _parse_field(spec, field) for spec, field in zip(_FIELDS, fields, strict=True)
            ]
        except ValueError as error:
            raise ValueError(f"cron expression {text!r}: {error}") from None
        minutes, hours, days, months, weekdays = values
        weekdays = tuple(sorted({day % 7 for day in weekdays}))
        return cls(text, minutes, hours, days, months, weekdays)

    @property
    def follows_elapsed_time(self) -> bool:
        return len(self.hours) == 24

    def matches_day(self, day: date) -> bool:
        weekday = day.isoweekday() % 7
        in_month, in_week = day.day in self.days_of_month, weekday in self.days_of_week
        if len(self.days_of_month) < 31 and len(self.days_of_week) < 7:
            return in_month or in_week
        return in_month and in_week

    def matches(self, wall: datetime) -> bool:
        """Whether a local wall-clock time matches every field (DST is not considered here)."""
        return (
            wall.minute in self.minutes
            and wall.hour in self.hours
            and wall.month in self.months
            and self.matches_day(wall.date())
        )

    def never_fires_reason(self) -> str | None:
        if len(self.days_of_week) < 7 and len(self.days_of_month) < 31:
            return None  # the day-of-week alternative occurs in every month
        if any(day <= _LONGEST_MONTH[m - 1] for m in self.months for day in self.days_of_month):
            return None
        return (
            f"cron expression {self.text!r} never fires: day of month "
            f"{_listing(self.days_of_month)} does not occur in {_month_listing(self.months)}; "
            "expected a day that exists in the chosen months"
        )


def cron_problem(text: str) -> str | None:
    try:
        return CronExpression.parse(text).never_fires_reason()
    except ValueError as error:
        return str(error)


def next_after(expression: CronExpression | str, instant: datetime, tz: ZoneInfo | str) -> datetime:
    """The first tick strictly after `instant`, as an aware UTC datetime."""
    cron = _as_expression(expression)
    zone = _zone(tz)
    if instant.tzinfo is None:
        raise ValueError(f"instant {instant.isoformat()} has no time zone; expected an aware one")
    best: datetime | None = None
    for wall in _walls(cron, _first_wall(instant, zone)):
        earliest, ticks = _place(wall, zone, follow_elapsed_time=cron.follows_elapsed_time)
        if best is not None and earliest >= best:
            break  # later wall times only map to later instants
        for tick in ticks:
            if tick > instant and (best is None or tick < best):
                best = tick
    if best is None:
        raise ValueError(
            f"cron expression {cron.text!r} never fires: no tick within {SEARCH_YEARS} years "
            f"after {instant.isoformat()} in {zone.key}; expected days that exist in its months"
        )
    return best


def ticks_between(
    expression: CronExpression | str, start: datetime, end: datetime, tz: ZoneInfo | str
) -> Iterator[datetime]:
    """Every tick after `start` up to and including `end`, oldest first."""
    cron = _as_expression(expression)
    zone = _zone(tz)
    tick = next_after(cron, start, zone)
    while tick <= end:
        yield tick
        tick = next_after(cron, tick, zone)


def _as_expression(expression: CronExpression | str) -> CronExpression:
    if isinstance(expression, CronExpression):
        return expression
    return CronExpression.parse(expression)


def _zone(tz: ZoneInfo | str) -> ZoneInfo:
    if isinstance(tz, ZoneInfo):
        return tz
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"time zone {tz!r} is unknown; expected an IANA name such as Europe/London"
        ) from None


def _expand_macro(text: str) -> str:
    if not text.strip().startswith("@"):
        return text
    if text.strip().lower() not in MACROS:
        raise ValueError(
            f"cron expression {text!r} is an unknown macro; expected one of {', '.join(MACROS)}"
        )
    return MACROS[text.strip().lower()]


def _listing(values: tuple[int, ...]) -> str:
    return ",".join(str(value) for value in values)


def _month_listing(months: tuple[int, ...]) -> str:
    return ",".join(_MONTH_NAMES[month - 1] for month in months)


def _parse_field(spec: _Field, field: str) -> tuple[int, ...]:
    values: set[int] = set()
    for item in field.split(","):
        values.update(_parse_item(spec, field, item))
    return tuple(sorted(values))


def _parse_item(spec: _Field, field: str, item: str) -> range:
    where = f"{spec.name} field {field!r}"
    body, slash, step_text = item.partition("/")
    step = _parse_step(where, step_text) if slash else 1
    if body == "*":
        return range(spec.low, spec.high + 1, step)
    if "-" not in body:
        value = _parse_value(spec, where, body)
        if slash:
            raise ValueError(
                f"{where}: step {item!r} needs a range before the slash; "
                f"expected for example {body}-{spec.high}/{step_text}"
            )
        return range(value, value + 1)
    low_text, _, high_text = body.partition("-")
    low, high = _parse_value(spec, where, low_text), _parse_value(spec, where, high_text)
    if low > high:
        raise ValueError(
            f"{where}: range {body!r} runs backwards; expected low-high within {spec.expected}"
        )
    return range(low, high + 1, step)


def _parse_step(where: str, text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise ValueError(f"{where}: step {text!r} is not a whole number of at least 1")
    return int(text)


def _parse_value(spec: _Field, where: str, text: str) -> int:
    if text.upper() in spec.names:
        return spec.names[text.upper()]
    if not text.isdigit():
        what = "a value is empty" if not text else f"{text!r} is not a number or a name"
        raise ValueError(f"{where}: {what}; expected {spec.expected}")
    if not spec.low <= int(text) <= spec.high:
        raise ValueError(f"{where}: {text} is out of range; expected {spec.expected}")
    return int(text)


def _first_wall(instant: datetime, zone: ZoneInfo) -> datetime:
    """The earliest wall time whose instant could still lie after `instant`.

    When the clocks go back soon after `instant`, wall times before its own come round again,
    so start from the smallest UTC offset in force over the next day.
    """
    utc = instant.astimezone(UTC)
    offsets = [(utc + timedelta(days=ahead)).astimezone(zone).utcoffset() for ahead in (0, 1)]
    smallest = min(offset for offset in offsets if offset is not None)
    return (utc.replace(tzinfo=None) + smallest).replace(second=0, microsecond=0)


def _walls(cron: CronExpression, start: datetime) -> Iterator[datetime]:
    """Matching wall-clock minutes from `start` on, in order, stepping month, day, hour, minute."""
    for day in _days(cron, start.date()):
        earliest = start.time() if day == start.date() else time.min
        for hour in cron.hours:
            if hour < earliest.hour:
                continue
            for minute in cron.minutes:
                if (hour, minute) >= (earliest.hour, earliest.minute):
                    yield datetime.combine(day, time(hour, minute))


def _days(cron: CronExpression, first: date) -> Iterator[date]:
    for year in range(first.year, first.year + SEARCH_YEARS + 1):
        for month in cron.months:
            if (year, month) < (first.year, first.month):
                continue
            start = first.day if (year, month) == (first.year, first.month) else 1
            for day_number in range(start, calendar.monthrange(year, month)[1] + 1):
                day = date(year, month, day_number)
                if cron.matches_day(day):
                    yield day


def _place(
    wall: datetime, zone: ZoneInfo, *, follow_elapsed_time: bool
) -> tuple[datetime, list[datetime]]:
    """The earliest instant near a wall time (for ordering), and the ticks it fires."""
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    if first == second:
        return first, [first]
    if first < second:  # shown twice: fold=0 is the first occurrence
        return first, [first, second] if follow_elapsed_time else [first]
    # Skipped: fold=1 reads the wall time with the later offset, fold=0 with the earlier, and
    # the transition lies between them.
    return second, [] if follow_elapsed_time else [_transition(second, first, zone)]


def _transition(before: datetime, after: datetime, zone: ZoneInfo) -> datetime:
    """The first whole minute after `before` whose UTC offset is the one in force at `after`."""
    old_offset = before.astimezone(zone).utcoffset()
    low, high = 0, (after - before) // timedelta(minutes=1)
    while high - low > 1:
        middle = (low + high) // 2
        moment = before + timedelta(minutes=middle)
        if moment.astimezone(zone).utcoffset() == old_offset:
            low = middle
        else:
            high = middle
    return before + timedelta(minutes=high)
