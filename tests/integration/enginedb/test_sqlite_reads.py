"""Reads through the standard library's sqlite3 (``EngineDB.read_only`` on an SQLite file) give
what the same reads give through SQLAlchemy: the same rows and values, IN lists expanded the
same way (an empty one included), dates and times bound as the Engine DB stores them, and the
same errors for a file with no schema or none at all."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import Histogram

from etl_craft.core.errors import EngineDBError, MigrationError
from etl_craft.core.time import SQLITE_TIMESTAMP_FORMAT, utc_now
from etl_craft.enginedb import connection
from etl_craft.enginedb.attempts import attempt_record, latest_attempt_id
from etl_craft.enginedb.connection import EngineConnection, EngineDB, EngineReads, Row, SqliteReads
from etl_craft.enginedb.grid import (
    GridQuery,
    read_grid_runs,
    read_grid_task_runs,
    read_grid_tasks,
    read_run_attempts,
)
from etl_craft.enginedb.metadata import read_last_runs, read_project_metadata
from etl_craft.enginedb.run_lists import newest_runs
from etl_craft.operations.explain.past import read_explain_records_at
from etl_craft.operations.explain.snapshot import read_explain_snapshot
from etl_craft.operations.runs.views import read_run_view
from tests.fixtures.projects import ProjectOnDisk, make_project

QUICK = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=3)
"""
PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'reads' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'first', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'reads';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'second', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'reads';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS;
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS' FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'second' AND u.TASK_CODE = 'first';
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProjectOnDisk, int, int]]:
    """A project on an SQLite file with two finished runs of 'reads' and an unfinished one."""
    project = make_project(tmp_path_factory.mktemp("sqlite-reads") / "etl-craft")
    (project.root / "ingestion_scripts").mkdir()
    (project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    project.migrate("0001_reads.sql", PIPELINE)
    runs = [project.new_run("reads", run_key=f"key-{n}") for n in range(2)]
    for run_id in runs:
        assert project.supervisor().supervise(run_id).status.value == "SUCCESS"
    project.new_run("reads", run_key="waiting")
    with project.engine.read() as conn:
        pipeline_id = read_project_metadata(conn, "default").pipelines[0].pipeline_id
    yield project, runs[-1], pipeline_id
    project.engine.dispose()


READS: dict[str, Callable[[EngineReads, int, int], Any]] = {
    "project metadata": lambda conn, run, _: read_project_metadata(conn, "default"),
    "last runs": lambda conn, run, _: read_last_runs(
        conn, read_project_metadata(conn, "default").project_id
    ),
    "newest runs": lambda conn, run, pipeline: newest_runs(conn, pipeline, 10, None),
    "run view": lambda conn, run, _: read_run_view(conn, run),
    "grid task runs": lambda conn, run, _: read_grid_task_runs(conn, [run - 1, run, run + 1]),
    "grid tasks": lambda conn, run, pipeline: read_grid_tasks(conn, [pipeline]),
    "attempts": lambda conn, run, _: read_run_attempts(conn, run),
    "latest attempt": lambda conn, run, _: latest_attempt_id(conn, run, "second", "default"),
    "attempt record": lambda conn, run, _: attempt_record(conn, 1, "default"),
    "explain": lambda conn, run, _: read_explain_snapshot(conn, run, "second", default_retries=0),
    "explain at": lambda conn, run, _: read_explain_records_at(
        conn, run, "second", utc_now(), default_retries=0
    ),
    # Dates bound as parameters: the runs of a window of run dates.
    "grid runs": lambda conn, run, _: read_grid_runs(
        conn,
        GridQuery("default", 10, None, date(2026, 11, 1), date(2026, 12, 31), None, None, None),
    ),
    # Times bound as parameters: the attempts written after the first one.
    "attempts written": lambda conn, run, _: written_after_first(conn),
}


def written_after_first(conn: EngineReads) -> list[Row]:
    first = conn.all(
        "clone_task_attempts_changed",
        after_at=datetime(2000, 1, 1, tzinfo=UTC),
        after_key=0,
        until_at=utc_now(),
        batch=1,
    )[0]
    # The moment given in another time zone: the Engine DB stores UTC text, so the bound
    # value must be the same instant in UTC, not that zone's wall clock.
    at = (
        datetime.strptime(first["UPDATED_AT"], SQLITE_TIMESTAMP_FORMAT)
        .replace(tzinfo=UTC)
        .astimezone(timezone(timedelta(hours=5)))
    )
    return conn.all(
        "clone_task_attempts_changed",
        after_at=at,
        after_key=first["ATTEMPT_ID"],
        until_at=utc_now(),
        batch=100,
    )


@pytest.mark.parametrize("read", list(READS))
def test_a_read_through_sqlite3_gives_what_sqlalchemy_gives(
    finished: tuple[ProjectOnDisk, int, int], read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, run_id, pipeline_id = finished
    # As in a command's own process: an API started in this one would have it time statements.
    monkeypatch.setattr(connection._timing, "family", None)
    with project.engine.read() as through_sqlalchemy:
        expected = READS[read](through_sqlalchemy, run_id, pipeline_id)
    with project.engine.read_only() as through_sqlite3:
        assert isinstance(through_sqlite3, SqliteReads)
        got = READS[read](through_sqlite3, run_id, pipeline_id)

    assert expected  # each read finds something, or it compares nothing
    if read == "attempts written":
        assert len(expected) == 3
    assert got == expected


def test_an_empty_in_list_matches_no_row(
    finished: tuple[ProjectOnDisk, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _, _ = finished
    monkeypatch.setattr(connection._timing, "family", None)
    with project.engine.read_only() as conn:
        assert conn.all("grid_task_runs", run_id_list=[]) == []
        assert len(conn.all("grid_task_runs", run_id_list=[1, 2])) == 4


def test_a_file_with_no_schema_is_refused_as_sqlalchemy_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection._timing, "family", None)
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    for read in (EngineDB(url).read, EngineDB(url).read_only):
        with pytest.raises(MigrationError, match="has no table CFG_PROJECTS.*init-db"):
            with read() as conn:
                conn.all("metadata_active_projects")


def test_a_file_that_can_not_be_opened_is_an_engine_db_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection._timing, "family", None)
    url = f"sqlite:///{tmp_path / 'no-such-folder' / 'engine.db'}"
    for read in (EngineDB(url).read, EngineDB(url).read_only):
        with pytest.raises(EngineDBError, match="unable to open database file"):
            with read() as conn:
                conn.all("metadata_active_projects")


def test_a_process_that_times_its_statements_reads_through_its_engine(
    finished: tuple[ProjectOnDisk, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _, _ = finished
    family = Histogram("statements", "Engine DB statements", ["statement"], registry=None)
    monkeypatch.setattr(connection._timing, "family", family)
    monkeypatch.setattr(connection._timing, "timers", {})

    with project.engine.read_only() as conn:
        assert isinstance(conn, EngineConnection)
        codes = conn.all("metadata_active_projects")

    assert [row["project_code"] for row in codes] == ["default"]
    timed = {sample.labels["statement"] for metric in family.collect() for sample in metric.samples}
    assert "metadata_active_projects" in timed
