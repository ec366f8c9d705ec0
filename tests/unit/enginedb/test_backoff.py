"""The backoff between tries of an Engine DB that does not answer: doubling, capped, and
still a number after an outage of any length."""

from __future__ import annotations

from etl_craft.enginedb.backoff import FIRST_SECONDS, MOST_SECONDS, Backoff


def test_waits_double_up_to_the_cap_with_jitter() -> None:
    backoff = Backoff()
    first, second = backoff.failed(), backoff.failed()
    assert FIRST_SECONDS / 2 <= first <= FIRST_SECONDS
    assert FIRST_SECONDS <= second <= FIRST_SECONDS * 2
    for _ in range(10):
        backoff.failed()
    assert MOST_SECONDS / 2 <= backoff.failed() <= MOST_SECONDS


def test_two_thousand_failures_in_a_row_still_wait_the_cap() -> None:
    # An outage of hours, tried every few seconds: past 1,024 failures a plain 2 ** n no
    # longer fits a float, and the loop that waits would crash instead of trying again.
    backoff = Backoff()
    waits = [backoff.failed() for _ in range(2000)]
    assert MOST_SECONDS / 2 <= waits[-1] <= MOST_SECONDS
    assert backoff.succeeded()
    assert FIRST_SECONDS / 2 <= backoff.failed() <= FIRST_SECONDS
