"""Schedule ticks become runs: catch-up, overlap, time zones and bad settings, on both Engine DBs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from etl_craft.core.enums import RunStatus
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.overseers import register_overseer
from etl_craft.scheduling.schedules import MISSED, TickOutcome, create_due_runs
from tests.fixtures.metadata import TESTER, execute, new_code, seed_run

LOGGER = "etl_craft.scheduling.schedules"


class Pipeline:
    def __init__(self, pipeline_id: int, code: str) -> None:
        self.pipeline_id = pipeline_id
        self.code = code


@pytest.fixture(scope="module", autouse=True)
def an_overseer_ran_long_ago(engine_db: EngineDB) -> None:
    """Ticks before an overseer first started are never missed; here one started long ago."""
    overseer_started(engine_db, at("2026-01-01T00:00:00"))


@pytest.fixture(autouse=True)
def only_this_tests_pipelines(engine_db: EngineDB) -> Iterator[None]:
    """Every call reads all scheduled pipelines, so each test switches its own off afterwards."""
    yield
    with engine_db.transaction(TESTER) as conn:
        execute(conn, "UPDATE CFG_PIPELINES SET ACTIVE_FLAG = 'N' WHERE ACTIVE_FLAG = 'Y'")


def scheduled(
    db: EngineDB,
    schedule: str,
    *,
    start: str | None,
    timezone: str | None = None,
    catchup: str = "N",
    max_catchup: int = 1,
    overlap: str = "SKIP",
    project: str = "default",
) -> Pipeline:
    code = new_code("scheduled")
    with db.transaction(TESTER) as conn:
        pipeline_id = execute(
            conn,
            "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, RUN_SCHEDULE, SCHEDULE_TIMEZONE, "
            "SCHEDULE_START_DATE, CATCHUP, MAX_CATCHUP_RUNS, OVERLAP_POLICY) SELECT PROJECT_ID, "
            ":code, :schedule, :tz, :start, :catchup, :max_catchup, :overlap FROM CFG_PROJECTS "
            "WHERE PROJECT_CODE = :project AND ACTIVE_FLAG = 'Y' RETURNING PIPELINE_ID",
            code=code,
            schedule=schedule,
            tz=timezone,
            start=start,
            catchup=catchup,
            max_catchup=max_catchup,
            overlap=overlap,
            project=project,
        ).scalar_one()
    return Pipeline(int(pipeline_id), code)


def runs(db: EngineDB, pipeline: Pipeline) -> list[tuple[Any, ...]]:
    """(run id, status, run key, run date, trigger kind, message, started by) in tick order."""
    with db.read() as conn:
        rows = execute(
            conn,
            "SELECT PIPELINE_RUN_ID, STATUS, RUN_KEY, RUN_DATE, TRIGGER_KIND, MESSAGE, STARTED_BY, "
            "STARTED_BY_KIND FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_ID = :p ORDER BY RUN_KEY",
            p=pipeline.pipeline_id,
        ).all()
    return [
        (row[0], row[1], row[2], str(row[3]), row[4], row[5], f"{row[6]}/{row[7]}") for row in rows
    ]


def overseer_started(db: EngineDB, when: datetime) -> None:
    """Record an overseer that took the lead at ``when``, as etl-craft server does."""
    with db.transaction(TESTER) as conn:
        overseer_id = f"test:{when:%Y%m%d%H%M}"
        register_overseer(conn, overseer_id, "test")
        execute(
            conn,
            "UPDATE AUD_OVERSEERS SET STARTED_AT = etl_craft_add_seconds(etl_craft_now(), :s) "
            "WHERE OVERSEER_ID = :o",
            s=-int((utc_now() - when).total_seconds()),
            o=overseer_id,
        )


def of(pipeline: Pipeline, outcomes: list[TickOutcome]) -> list[TickOutcome]:
    return [outcome for outcome in outcomes if outcome.pipeline_code == pipeline.code]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_catch_up_queues_the_newest_ticks_and_skips_older_ones(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-27", catchup="Y", max_catchup=2)
    outcomes = of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00")))
    rows = runs(engine_db, pipeline)
    by_schedule = ("SCHEDULE", "schedule/SCHEDULE")
    assert [(row[1], row[2], row[3], row[5], (row[4], row[6])) for row in rows] == [
        ("SKIPPED", "schedule:2026-11-27T05:00:00Z", "2026-11-27", MISSED, by_schedule),
        ("QUEUED", "schedule:2026-11-28T05:00:00Z", "2026-11-28", None, by_schedule),
        ("QUEUED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", None, by_schedule),
    ]
    ticks = [at("2026-11-27T05:00:00"), at("2026-11-28T05:00:00"), at("2026-11-29T05:00:00")]
    assert outcomes == [
        TickOutcome(pipeline.code, row[0], row[2], tick, RunStatus(row[1]), row[5])
        for row, tick in zip(rows, ticks, strict=True)
    ]


def test_without_catch_up_only_the_newest_tick_runs(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-27", catchup="N", max_catchup=5)
    create_due_runs(engine_db, at("2026-11-29T06:00:00"))
    assert [row[1:6] for row in runs(engine_db, pipeline)] == [
        ("SKIPPED", "schedule:2026-11-27T05:00:00Z", "2026-11-27", "SCHEDULE", MISSED),
        ("SKIPPED", "schedule:2026-11-28T05:00:00Z", "2026-11-28", "SCHEDULE", MISSED),
        ("QUEUED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", "SCHEDULE", None),
    ]


def test_a_second_call_creates_nothing_until_the_next_tick(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-28", overlap="QUEUE")
    first = of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00")))
    before = runs(engine_db, pipeline)
    assert of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00"))) == []
    assert of(pipeline, create_due_runs(engine_db, at("2026-11-30T04:59:59"))) == []
    assert runs(engine_db, pipeline) == before
    later = of(pipeline, create_due_runs(engine_db, at("2026-11-30T05:00:00")))
    assert [(o.run_key, o.outcome) for o in first + later] == [
        ("schedule:2026-11-28T05:00:00Z", RunStatus.SKIPPED),
        ("schedule:2026-11-29T05:00:00Z", RunStatus.QUEUED),
        ("schedule:2026-11-30T05:00:00Z", RunStatus.QUEUED),
    ]
    assert [row[1:3] for row in runs(engine_db, pipeline)] == [
        ("SKIPPED", "schedule:2026-11-28T05:00:00Z"),
        ("QUEUED", "schedule:2026-11-29T05:00:00Z"),
        ("QUEUED", "schedule:2026-11-30T05:00:00Z"),
    ]


def test_two_callers_at_once_create_each_tick_once(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-27", catchup="Y", max_catchup=2)
    barrier = threading.Barrier(2)
    results: list[list[TickOutcome]] = []

    def call() -> None:
        barrier.wait(timeout=10)
        results.append(of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00"))))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(results) == 2
    assert sorted(len(outcomes) for outcomes in results) == [0, 3]
    assert [row[1] for row in runs(engine_db, pipeline)] == ["SKIPPED", "QUEUED", "QUEUED"]


@pytest.mark.parametrize("live_status", ["QUEUED", "IN-PROGRESS"])
def test_overlap_skip_records_the_tick_skipped_while_a_run_is_live(
    engine_db: EngineDB, live_status: str
) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-29", overlap="SKIP")
    live = seed_run(engine_db, pipeline.pipeline_id, live_status, run_key="manual:live")
    (outcome,) = of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00")))
    message = f"previous run {live} still active"
    assert (outcome.outcome, outcome.message) == (RunStatus.SKIPPED, message)
    assert [row[1:6] for row in runs(engine_db, pipeline)] == [
        (live_status, "manual:live", "2026-01-01", "MANUAL", None),
        ("SKIPPED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", "SCHEDULE", message),
    ]


def test_overlap_queue_leaves_the_tick_queued_behind_a_live_run(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start="2026-11-29", overlap="QUEUE")
    seed_run(engine_db, pipeline.pipeline_id, "IN-PROGRESS", run_key="manual:live")
    (outcome,) = of(pipeline, create_due_runs(engine_db, at("2026-11-29T06:00:00")))
    assert (outcome.outcome, outcome.message) == (RunStatus.QUEUED, None)
    assert [row[1:6] for row in runs(engine_db, pipeline)] == [
        ("IN-PROGRESS", "manual:live", "2026-01-01", "MANUAL", None),
        ("QUEUED", "schedule:2026-11-29T05:00:00Z", "2026-11-29", "SCHEDULE", None),
    ]


def test_the_run_date_is_the_ticks_date_in_the_schedules_time_zone(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "30 23 * * *", start="2026-11-29", timezone="America/New_York")
    (outcome,) = of(pipeline, create_due_runs(engine_db, at("2026-11-30T05:00:00")))
    assert outcome.tick == at("2026-11-30T04:30:00")
    assert [row[1:5] for row in runs(engine_db, pipeline)] == [
        ("QUEUED", "schedule:2026-11-30T04:30:00Z", "2026-11-29", "SCHEDULE"),
    ]


def test_a_schedule_without_a_time_zone_uses_the_projects(engine_db: EngineDB) -> None:
    project = new_code("tokyo")
    with engine_db.transaction(TESTER) as conn:
        execute(
            conn,
            "INSERT INTO CFG_PROJECTS (PROJECT_CODE, TIMEZONE) VALUES (:c, 'Asia/Tokyo')",
            c=project,
        )
    pipeline = scheduled(engine_db, "0 1 * * *", start="2026-11-30", project=project)
    create_due_runs(engine_db, at("2026-11-29T17:00:00"))
    assert [row[1:5] for row in runs(engine_db, pipeline)] == [
        ("QUEUED", "schedule:2026-11-29T16:00:00Z", "2026-11-30", "SCHEDULE"),
    ]


def test_the_start_dates_midnight_is_a_tick_and_nothing_fires_before(
    engine_db: EngineDB,
) -> None:
    pipeline = scheduled(engine_db, "@daily", start="2026-11-29")
    assert of(pipeline, create_due_runs(engine_db, at("2026-11-28T23:59:59"))) == []
    (outcome,) = of(pipeline, create_due_runs(engine_db, at("2026-11-29T00:00:00")))
    assert (outcome.run_key, outcome.outcome) == ("schedule:2026-11-29T00:00:00Z", RunStatus.QUEUED)


def test_a_start_date_in_the_future_creates_nothing(engine_db: EngineDB) -> None:
    pipeline = scheduled(engine_db, "* * * * *", start="2026-12-05", catchup="Y", max_catchup=3)
    assert of(pipeline, create_due_runs(engine_db, at("2026-11-30T12:00:00"))) == []
    assert runs(engine_db, pipeline) == []


def test_without_a_start_date_ticks_count_from_the_pipelines_creation(
    engine_db: EngineDB,
) -> None:
    pipeline = scheduled(engine_db, "0 5 * * *", start=None)
    with engine_db.read() as conn:
        created = execute(
            conn,
            "SELECT CREATE_DATE FROM CFG_PIPELINES WHERE PIPELINE_ID = :p",
            p=pipeline.pipeline_id,
        ).scalar_one()
    created_at = created if isinstance(created, datetime) else datetime.fromisoformat(created)
    now = created_at.replace(tzinfo=UTC) + timedelta(days=3)
    outcomes = of(pipeline, create_due_runs(engine_db, now))
    assert [outcome.outcome for outcome in outcomes] == [
        RunStatus.SKIPPED,
        RunStatus.SKIPPED,
        RunStatus.QUEUED,
    ]
    assert all(created_at.replace(tzinfo=UTC) < o.tick <= now for o in outcomes)


def test_a_week_of_missed_minutes_records_a_hundred_and_counts_the_rest(
    engine_db: EngineDB,
) -> None:
    pipeline = scheduled(engine_db, "* * * * *", start="2026-11-20")
    outcomes = of(pipeline, create_due_runs(engine_db, at("2026-11-27T00:00:00")))
    rows = runs(engine_db, pipeline)
    assert len(rows) == len(outcomes) == 101
    assert [row[1] for row in rows] == ["SKIPPED"] * 100 + ["QUEUED"]
    assert rows[0][2] == "schedule:2026-11-26T22:20:00Z"
    assert rows[-1][2] == "schedule:2026-11-27T00:00:00Z"
    # 7 days of minutes and the final midnight: 10,081 ticks, 101 of them recorded.
    assert rows[0][5] == (
        f"{MISSED}; 9980 older missed ticks, 2026-11-20T00:00:00Z to 2026-11-26T22:19:00Z, "
        "were not recorded (at most 100 are)"
    )
    assert {row[5] for row in rows[1:100]} == {MISSED}


def test_a_bad_schedule_warns_once_and_does_not_stop_the_others(
    engine_db: EngineDB, caplog: pytest.LogCaptureFixture
) -> None:
    bad_cron = scheduled(engine_db, "61 * * * *", start="2026-11-29")
    bad_zone = scheduled(engine_db, "0 5 * * *", start="2026-11-29", timezone="Mars/Olympus")
    never = scheduled(engine_db, "0 0 30 2 *", start="2026-11-29")
    good = scheduled(engine_db, "0 5 * * *", start="2026-11-29")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        outcomes = create_due_runs(engine_db, at("2026-11-29T06:00:00"))
        create_due_runs(engine_db, at("2026-11-29T06:00:01"))
    assert [o.pipeline_code for o in outcomes] == [good.code]
    assert [row[1:3] for row in runs(engine_db, good)] == [
        ("QUEUED", "schedule:2026-11-29T05:00:00Z")
    ]
    warnings = {
        record.getMessage().split(" (project")[0].rsplit(" ", 1)[1]: record.getMessage()
        for record in caplog.records
        if record.name == LOGGER
    }
    assert len([r for r in caplog.records if r.name == LOGGER]) == 3
    assert "RUN_SCHEDULE '61 * * * *'" in warnings[bad_cron.code]
    assert "Set RUN_SCHEDULE in CFG_PIPELINES" in warnings[bad_cron.code]
    assert "SCHEDULE_TIMEZONE 'Mars/Olympus'" in warnings[bad_zone.code]
    assert "Fix SCHEDULE_TIMEZONE in CFG_PIPELINES" in warnings[bad_zone.code]
    assert "never fires" in warnings[never.code]
    for pipeline in (bad_cron, bad_zone, never):
        assert runs(engine_db, pipeline) == []
