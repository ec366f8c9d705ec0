"""The --backfill range is parsed strictly, and a range refused names the limit it breaks."""

from __future__ import annotations

from datetime import date

import pytest

from etl_craft.core.errors import UsageError
from etl_craft.operations.runs.backfills import MAX_DATES, backfill_dates


def test_a_range_gives_every_date_from_its_first_to_its_last() -> None:
    assert backfill_dates("2026-02-27:2026-03-01") == (
        date(2026, 2, 27),
        date(2026, 2, 28),
        date(2026, 3, 1),
    )
    assert backfill_dates("2026-01-05:2026-01-05") == (date(2026, 1, 5),)
    assert len(backfill_dates("2024-01-01:2024-12-31")) == MAX_DATES


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2026-01-01", "expected FROM:TO as YYYY-MM-DD:YYYY-MM-DD"),
        ("2026-1-1:2026-01-03", "expected FROM:TO as YYYY-MM-DD:YYYY-MM-DD"),
        ("2026-01-01..2026-01-03", "expected FROM:TO as YYYY-MM-DD:YYYY-MM-DD"),
        ("2026-02-30:2026-03-01", "names a date that does not exist"),
        ("2026-01-03:2026-01-01", "expected FROM <= TO, as in --backfill 2026-01-01:2026-01-03"),
        ("2024-01-01:2025-01-01", f"covers 367 dates; at most {MAX_DATES} are allowed"),
    ],
)
def test_a_malformed_range_is_refused_saying_what_was_expected(text: str, says: str) -> None:
    with pytest.raises(UsageError, match="--backfill") as refused:
        backfill_dates(text)
    assert says in str(refused.value)
