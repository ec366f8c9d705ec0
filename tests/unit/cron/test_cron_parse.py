"""Every cron syntax form is read into its value sets; every malformed one is refused by name."""

from __future__ import annotations

import pytest

from etl_craft.core.cron import CronExpression, cron_problem

EVERY_MINUTE = tuple(range(60))


def fields(text: str) -> tuple[tuple[int, ...], ...]:
    cron = CronExpression.parse(text)
    return (cron.minutes, cron.hours, cron.days_of_month, cron.months, cron.days_of_week)


def test_stars_cover_every_value_of_every_field() -> None:
    assert fields("* * * * *") == (
        EVERY_MINUTE,
        tuple(range(24)),
        tuple(range(1, 32)),
        tuple(range(1, 13)),
        tuple(range(7)),
    )


@pytest.mark.parametrize(
    ("minute_field", "minutes"),
    [
        ("7", (7,)),
        ("5,1,3", (1, 3, 5)),
        ("10-13", (10, 11, 12, 13)),
        ("*/15", (0, 15, 30, 45)),
        ("1-10/2", (1, 3, 5, 7, 9)),
        ("50-59/4,0", (0, 50, 54, 58)),
        ("0-59/60", (0,)),
        ("3,3,3", (3,)),
    ],
)
def test_lists_ranges_and_steps(minute_field: str, minutes: tuple[int, ...]) -> None:
    assert CronExpression.parse(f"{minute_field} * * * *").minutes == minutes


def test_hour_day_and_month_ranges_use_their_own_bounds() -> None:
    cron = CronExpression.parse("0 */6 */10 */4 *")
    assert (cron.hours, cron.days_of_month, cron.months) == (
        (0, 6, 12, 18),
        (1, 11, 21, 31),
        (1, 5, 9),
    )


@pytest.mark.parametrize(
    ("month_field", "months"),
    [
        ("JAN", (1,)),
        ("dec", (12,)),
        ("Mar-May", (3, 4, 5)),
        ("JAN-DEC/6", (1, 7)),
        ("FEB,8", (2, 8)),
    ],
)
def test_month_names_in_any_case(month_field: str, months: tuple[int, ...]) -> None:
    assert CronExpression.parse(f"0 0 1 {month_field} *").months == months


@pytest.mark.parametrize(
    ("week_field", "weekdays"),
    [
        ("SUN", (0,)),
        ("sat", (6,)),
        ("mon-FRI", (1, 2, 3, 4, 5)),
        ("7", (0,)),
        ("5-7", (0, 5, 6)),
        ("SUN,7,0", (0,)),
        ("0-7", tuple(range(7))),
    ],
)
def test_weekday_names_and_seven_as_sunday(week_field: str, weekdays: tuple[int, ...]) -> None:
    assert CronExpression.parse(f"0 0 * * {week_field}").days_of_week == weekdays


@pytest.mark.parametrize(
    ("macro", "equivalent"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@midnight", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@annually", "0 0 1 1 *"),
        (" @Daily ", "0 0 * * *"),
    ],
)
def test_macros_expand_to_their_five_fields(macro: str, equivalent: str) -> None:
    assert fields(macro) == fields(equivalent)


def test_the_text_is_kept_as_written() -> None:
    assert CronExpression.parse("@daily").text == "@daily"


def test_surrounding_and_repeated_whitespace_is_ignored() -> None:
    assert fields("  0   12\t* *  * ") == fields("0 12 * * *")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has 0 fields; expected 5 (minute hour day-of-month month day-of-week)"),
        ("* * * *", "has 4 fields; expected 5"),
        ("* * * * * *", "has 6 fields; expected 5"),
        ("@reboot", "'@reboot' is an unknown macro; expected one of @hourly, @daily"),
        ("60 * * * *", "minute field '60': 60 is out of range; expected 0-59"),
        ("0 24 * * *", "hour field '24': 24 is out of range; expected 0-23"),
        ("0 0 32 * *", "day-of-month field '32': 32 is out of range; expected 1-31"),
        ("0 0 0 * *", "day-of-month field '0': 0 is out of range; expected 1-31"),
        ("0 0 * 13 *", "month field '13': 13 is out of range; expected 1-12 or JAN-DEC"),
        ("0 0 * * 8", "day-of-week field '8': 8 is out of range; expected 0-7 or SUN-SAT"),
        ("0 0 1,32 * *", "day-of-month field '1,32': 32 is out of range"),
        ("x * * * *", "minute field 'x': 'x' is not a number or a name; expected 0-59"),
        ("0 0 * * MONDAY", "'MONDAY' is not a number or a name; expected 0-7 or SUN-SAT"),
        ("0 0 MON * *", "day-of-month field 'MON': 'MON' is not a number or a name"),
        ("0 0 * JAN-FOO *", "month field 'JAN-FOO': 'FOO' is not a number or a name"),
        ("-5 * * * *", "minute field '-5': a value is empty; expected 0-59"),
        ("0 0 1,,2 * *", "day-of-month field '1,,2': a value is empty; expected 1-31"),
        ("30-10 * * * *", "minute field '30-10': range '30-10' runs backwards; expected low-high"),
        ("0 0 * * FRI-MON", "range 'FRI-MON' runs backwards; expected low-high within 0-7"),
        ("*/0 * * * *", "minute field '*/0': step '0' is not a whole number of at least 1"),
        ("*/x * * * *", "step 'x' is not a whole number of at least 1"),
        ("1-5/ * * * *", "step '' is not a whole number of at least 1"),
        (
            "5/15 * * * *",
            "step '5/15' needs a range before the slash; expected for example 5-59/15",
        ),
        ("/5 * * * *", "minute field '/5': a value is empty"),
    ],
)
def test_malformed_expressions_are_refused_with_field_value_and_form(
    text: str, message: str
) -> None:
    with pytest.raises(ValueError, match="cron expression") as caught:
        CronExpression.parse(text)
    assert message in str(caught.value)
    assert cron_problem(text) == str(caught.value)


@pytest.mark.parametrize("text", ["*/15 9-17 * * MON-FRI", "@weekly", "0 0 29 2 *", "0 0 31 * *"])
def test_cron_problem_accepts_expressions_that_fire(text: str) -> None:
    assert cron_problem(text) is None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("0 0 30 2 *", "day of month 30 does not occur in FEB"),
        ("0 0 31 4,6,9,11 *", "day of month 31 does not occur in APR,JUN,SEP,NOV"),
        ("0 0 30,31 FEB *", "day of month 30,31 does not occur in FEB"),
    ],
)
def test_cron_problem_reports_expressions_that_never_fire(text: str, where: str) -> None:
    problem = cron_problem(text)
    assert problem is not None
    assert f"cron expression {text!r} never fires: {where}" in problem


def test_a_weekday_alternative_makes_an_impossible_date_fire() -> None:
    # Both day fields restricted: the day of week alone is enough, and every month has Mondays.
    assert cron_problem("0 0 30 2 MON") is None
