"""etl-craft purge: history past its retention goes, in batches, with its log files; what a
retained run references stays; a dry run deletes nothing and counts exactly."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from etl_craft.config.sections import build_retention
from etl_craft.core.errors import NotFoundError, WriteGuardError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.retention.purge import PurgeRequest, PurgeView, purge
from etl_craft.stores import ObjectStore, StoreSettings, open_store
from tests.fixtures.metadata import TESTER, execute
from tests.integration.retention.history import build_history, count, stored_key

# One row per transaction: every table's purge takes several batches.
RETENTION = replace(build_retention(None), batch_rows=1)


def _purge(
    engine: EngineDB, logs: Path, *, dry_run: bool = False, store: ObjectStore | None = None
) -> PurgeView:
    request = PurgeRequest(RETENTION, utc_now(), dry_run=dry_run)
    return purge(engine, TESTER, request, logs, log_store=store)


def _counts(view: PurgeView) -> dict[str, int]:
    return {table.table: table.rows for table in view.tables if table.rows}


EXPECTED = {
    "AUD_DEPENDENCY_CONSUMPTION": 1,
    "AUD_GATE_DECISIONS": 1,
    "AUD_TASK_ATTEMPTS": 2,
    "AUD_TASK_RUN_LOG": 1,
    "AUD_PIPELINES_RUN_LOG": 1,
}


def _runs(engine: EngineDB) -> set[int]:
    with engine.read() as conn:
        rows = execute(conn, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG").scalars()
        return {int(row) for row in rows}


def test_purge_removes_expired_history_and_keeps_what_retained_runs_reference(
    engine: EngineDB, tmp_path: Path
) -> None:
    history = build_history(engine, tmp_path)

    view = _purge(engine, tmp_path)

    assert _counts(view) == EXPECTED
    assert view.log_files == 2
    # Consumed by a retained run, kept by an intervention (kept for ever), recent: all stay.
    assert _runs(engine) == {history.consumed, history.intervened, history.retained}
    assert count(engine, "AUD_TASK_ATTEMPTS") == 1
    assert count(engine, "AUD_DEPENDENCY_CONSUMPTION", "PIPELINE_RUN_ID = :r", r=history.retained)
    assert count(engine, "AUD_RUN_INTERVENTIONS") == 1
    assert not any(log.exists() for log in history.expired_logs)
    assert history.retained_log.exists()
    # One transaction per row, each recorded as a purge action.
    assert len(view.action_ids) == sum(EXPECTED.values())
    assert count(engine, "AUD_ACTIONS", "COMMAND = 'purge'") == len(view.action_ids)


def test_purge_removes_the_stored_logs_of_purged_attempts(
    engine: EngineDB, tmp_path: Path, s3_store: StoreSettings
) -> None:
    store = open_store(s3_store, "Logs.store")
    history = build_history(engine, tmp_path, store)
    every = sorted(
        stored_key(log, tmp_path) for log in (*history.expired_logs, history.retained_log)
    )
    assert store.list("logs/") == every

    dry = _purge(engine, tmp_path, dry_run=True, store=store)
    assert dry.log_files == 2
    assert store.list("logs/") == every

    view = _purge(engine, tmp_path, store=store)
    assert _counts(view) == EXPECTED
    assert view.log_files == 2
    assert store.list("logs/") == [stored_key(history.retained_log, tmp_path)]


def test_a_dry_run_deletes_nothing_and_counts_what_a_purge_deletes(
    engine: EngineDB, tmp_path: Path
) -> None:
    history = build_history(engine, tmp_path)

    dry = _purge(engine, tmp_path, dry_run=True)

    assert _counts(dry) == EXPECTED
    assert dry.log_files == 2
    assert dry.action_ids == ()
    assert _runs(engine) == {
        history.expired,
        history.consumed,
        history.intervened,
        history.retained,
    }
    assert count(engine, "AUD_TASK_ATTEMPTS") == 3
    assert count(engine, "AUD_ACTIONS", "COMMAND = 'purge'") == 0
    assert all(log.exists() for log in history.expired_logs)
    assert _counts(_purge(engine, tmp_path)) == _counts(dry)


def test_attempt_logs_older_than_their_retention_go_and_their_rows_stay(
    engine: EngineDB, tmp_path: Path
) -> None:
    history = build_history(engine, tmp_path)
    old = (utc_now() - timedelta(days=RETENTION.attempt_log_days + 1)).timestamp()
    os.utime(history.retained_log, (old, old))

    view = _purge(engine, tmp_path)

    assert not history.retained_log.exists()
    assert view.log_files == 3
    assert count(engine, "AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID = :r", r=history.retained)
    assert count(engine, "AUD_TASK_ATTEMPTS") == 1


def test_interventions_past_their_retention_let_their_run_go(
    engine: EngineDB, tmp_path: Path
) -> None:
    history = build_history(engine, tmp_path)
    request = PurgeRequest(replace(RETENTION, interventions_days=30), utc_now())

    view = purge(engine, TESTER, request, tmp_path)

    assert history.intervened not in _runs(engine)
    assert _counts(view)["AUD_RUN_INTERVENTIONS"] == 1


def test_history_stays_guarded_outside_a_purge(engine: EngineDB, tmp_path: Path) -> None:
    history = build_history(engine, tmp_path)
    _purge(engine, tmp_path)
    with pytest.raises(WriteGuardError, match="append-only"):
        with engine.transaction(TESTER) as conn:
            execute(conn, "DELETE FROM AUD_RUN_INTERVENTIONS")
    assert count(engine, "AUD_RUN_INTERVENTIONS", "PIPELINE_RUN_ID = :r", r=history.intervened)


def test_an_earlier_purges_action_opens_no_guard(pg_fresh_url: str, tmp_path: Path) -> None:
    engine = EngineDB(pg_fresh_url)
    try:
        build_history(engine, tmp_path)
        _purge(engine, tmp_path)  # its actions are committed: another transaction wrote them
        with engine.read() as conn:
            stale = int(execute(conn, "SELECT max(ACTION_ID) FROM AUD_ACTIONS").scalar_one())
        with pytest.raises(WriteGuardError, match="append-only"):
            _delete_interventions_as_purge(engine, stale)
    finally:
        engine.dispose()


def test_a_purge_of_an_unknown_project_is_refused(engine: EngineDB, tmp_path: Path) -> None:
    request = PurgeRequest(RETENTION, utc_now(), project_code="nowhere")
    with pytest.raises(NotFoundError, match="'nowhere' is not an active project"):
        purge(engine, TESTER, request, tmp_path)


def _delete_interventions_as_purge(engine: EngineDB, action_id: int) -> None:
    with engine.transaction(TESTER) as conn:
        conn.mark_purge(action_id)
        execute(conn, "DELETE FROM AUD_RUN_INTERVENTIONS")
