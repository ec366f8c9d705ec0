"""The daily purge's slot is Retention.daily_at in the project's time zone."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

from etl_craft.config.sections import build_retention
from etl_craft.operations.retention.daily import DailyPurge


def test_the_purge_is_due_from_daily_at_in_the_project_time_zone() -> None:
    retention = replace(build_retention(None), daily_at=time(3, 0))
    daily = DailyPurge(retention, ZoneInfo("Europe/Paris"), None)
    # 01:30 UTC is 02:30 in Paris in winter; 02:30 UTC is 03:30.
    assert not daily.due(datetime(2026, 1, 15, 1, 30, tzinfo=UTC))
    assert daily.due(datetime(2026, 1, 15, 2, 30, tzinfo=UTC))
    daily.done_slot = daily.slot(datetime(2026, 1, 15, 2, 30, tzinfo=UTC))
    assert not daily.due(datetime(2026, 1, 15, 23, 0, tzinfo=UTC))  # done for the day
    assert daily.due(datetime(2026, 1, 16, 2, 30, tzinfo=UTC))
