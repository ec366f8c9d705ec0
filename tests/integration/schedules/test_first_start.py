"""Without catch-up, ticks before an overseer first started were never missed: no SKIPPED runs."""

from __future__ import annotations

from etl_craft.enginedb.connection import EngineDB
from etl_craft.scheduling.schedules import MISSED, create_due_runs
from tests.integration.schedules.test_schedules import at, overseer_started, runs, scheduled


def test_the_first_look_at_a_schedule_records_no_tick_before_it(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-20", catchup="N")
    create_due_runs(engine_db, at("2026-11-29T06:00:00"))
    assert [row[1:6] for row in runs(engine_db, pipeline)] == [
        ("QUEUED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", "SCHEDULE", None),
    ]


def test_ticks_missed_after_the_first_start_are_recorded_and_earlier_ones_not(
    engine_db: EngineDB,
) -> None:
    overseer_started(engine_db, at("2026-11-27T12:00:00"))
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-20", catchup="N")
    create_due_runs(engine_db, at("2026-11-30T06:00:00"))
    assert [row[1:6] for row in runs(engine_db, pipeline)] == [
        ("SKIPPED", "schedule:2026-11-28T05:00:00Z", "2026-11-28", "SCHEDULE", MISSED),
        ("SKIPPED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", "SCHEDULE", MISSED),
        ("QUEUED", "schedule:2026-11-30T05:00:00Z", "2026-11-30", "SCHEDULE", None),
    ]
