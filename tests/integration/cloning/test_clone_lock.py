"""One clone at a time: a clone waits for the clone lock at most Cloning.lock_wait_seconds and
then skips, while runs go on; the overlap copies what committed after the last clone read; the
Engine DB's own schema is refused."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import CloningError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.action_log import record_action
from etl_craft.enginedb.clone_reads import clone_lock
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.watermarks import MIRRORED
from etl_craft.operations.cloning.clone import clone
from etl_craft.operations.cloning.masking import row_mask
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft.operations.runs.foreground import RunRequest, run_pipeline
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.cloning.mirror_rows import cloning, mirror_rows, reuse
from tests.integration.running.test_ready_set import QUICK, tasks_sql

TEST_SETTINGS = ("ETL_CRAFT_TEST_DATABASE_URL", "ETL_CRAFT_REQUIRE_POSTGRES")


@pytest.fixture(params=("sqlite", "postgresql"))
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    with pytest.MonkeyPatch.context() as env:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            if key not in TEST_SETTINGS:
                env.delenv(key)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        made = make_project(tmp_path / "etl-craft", url)
        made.migrate("0001_solo.sql", tasks_sql("solo", [("only", "quick.py", "{}")], []))
        (made.root / "ingestion_scripts").mkdir(exist_ok=True)
        (made.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
        yield made
        made.engine.dispose()


def test_a_run_goes_on_while_a_clone_holds_the_lock_and_a_second_clone_skips(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    ctx = dataclasses.replace(
        build_context(ContextRequest(config=project.config, cwd=project.root)), actor=TESTER
    )
    engine = project.engine
    try:
        with clone_lock(engine, 0) as held, DuckDBConnection(str(tmp_path / "m.duckdb")) as wh:
            assert held
            # A run writes the AUD_ tables from start to end: nothing of it waits on the lock.
            run = run_pipeline(ctx, RunRequest("solo"))
            view = clone(engine, reuse(wh), cloning(lock_wait_seconds=1), row_mask(engine, None))

            assert run.status is RunStatus.SUCCESS
            assert view.skipped
            assert view.tables == ()
            assert not mirror_rows(wh, MIRRORED["AUD_PIPELINES_RUN_LOG"])
        with DuckDBConnection(str(tmp_path / "m.duckdb")) as wh:
            done = clone(engine, reuse(wh), cloning(lock_wait_seconds=1), row_mask(engine, None))
            assert not done.skipped
            assert mirror_rows(wh, MIRRORED["AUD_PIPELINES_RUN_LOG"]).keys() == {run.run_id}
    finally:
        ctx.close()


def _action(engine: EngineDB, command: str) -> int:
    with engine.transaction(TESTER) as conn:
        return record_action(
            conn, TESTER, command=command, arguments={}, started_at=utc_now(), project_code=None
        )


def test_the_overlap_copies_a_row_committed_after_the_last_clone_read_past_it(
    pg_fresh_url: str, tmp_path: Path
) -> None:
    engine = EngineDB(pg_fresh_url)
    actions = MIRRORED["AUD_ACTIONS"]
    try:
        with DuckDBConnection(str(tmp_path / "m.duckdb")) as wh:
            mask = row_mask(engine, None)
            with engine.transaction(TESTER) as late:
                # Stamped when its transaction began, before the row below, but committed after.
                late_id = record_action(
                    late,
                    TESTER,
                    command="late",
                    arguments={},
                    started_at=utc_now(),
                    project_code=None,
                )
                early_id = _action(engine, "early")
                clone(engine, reuse(wh), cloning(), mask)
            assert early_id in mirror_rows(wh, actions)

            clone(engine, reuse(wh), cloning(), mask)
            assert late_id not in mirror_rows(wh, actions)  # past the watermark, without overlap

            view = clone(engine, reuse(wh), cloning(overlap_seconds=600), mask)
            assert late_id in mirror_rows(wh, actions)
            assert {t.table: t.reread for t in view.tables}["AUD_ACTIONS"] >= 2
    finally:
        engine.dispose()


def test_a_mirror_in_the_engine_dbs_own_schema_is_refused(pg_fresh_url: str) -> None:
    engine = EngineDB(pg_fresh_url)
    try:
        with PostgreSQLConnection(pg_fresh_url) as wh:
            own = dataclasses.replace(cloning(), schema="public")
            with pytest.raises(CloningError, match="Engine DB's own schema"):
                clone(engine, reuse(wh), own, row_mask(engine, None))
    finally:
        engine.dispose()
