"""A cancelled attempt stops its statement in the warehouse, not only its own process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.control.conftest import cli_process, finished, rows

# Long enough that only a cancel ends it within the test.
SLEEPY = "SELECT s.id FROM (SELECT 1 AS id) s CROSS JOIN pg_sleep(600)"


@pytest.fixture
def warehouse_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_cancel")
    url = create_database(pg_admin_url, name)
    yield url
    drop_database(pg_admin_url, name)


@pytest.fixture
def sleepy(tmp_path: Path, warehouse_url: str) -> ProjectOnDisk:
    project = make_project(tmp_path / "etl-craft")
    connector = project.root / "craft-connector.yml"
    connector.write_text(
        "Engine:\n  path: engine.db\nWarehouse:\n  type: postgresql\n  url: ${TEST_WAREHOUSE_URL}\n"
    )
    (project.root / ".env").write_text(f"TEST_WAREHOUSE_URL={warehouse_url}\n")
    (project.root / "sql_files").mkdir(exist_ok=True)
    (project.root / "sql_files" / "sleepy.sql").write_text(SLEEPY)
    project.migrate(
        "0001_sleepy.sql",
        """
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'sleepy' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'wait', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'sleepy';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
          SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V
          UNION ALL SELECT 'SOURCE_SQL_FILE', 'sleepy.sql'
          UNION ALL SELECT 'TARGET_OBJECT', 'dm.sleepy') x
         WHERE TASK_CODE = 'wait';
        """,
    )
    return project


def _sleeping(warehouse_url: str) -> list[tuple[int, str]]:
    with psycopg.connect(warehouse_url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT pid, state FROM pg_stat_activity "
            "WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid() AND state = 'active'"
        ).fetchall()
    return [(int(pid), str(state)) for pid, state in found]


def test_a_cancel_stops_the_running_postgresql_statement(
    sleepy: ProjectOnDisk, warehouse_url: str
) -> None:
    owner = cli_process(sleepy, "run", "--pipeline_code", "sleepy")
    try:
        wait_for(lambda: _sleeping(warehouse_url), "the task's statement to run in PostgreSQL")
        canceller = finished(
            cli_process(sleepy, "cancel", "--pipeline_code", "sleepy", "--reason", "too slow")
        )
        assert canceller.code == 0, canceller.err
        # Within a heartbeat or so, never the statement's ten minutes.
        wait_for(lambda: not _sleeping(warehouse_url), "the statement to leave PostgreSQL", 30)
        ran = finished(owner)
    finally:
        if owner.poll() is None:
            owner.kill()
    assert ran.code != 0
    (attempt,) = rows(sleepy, "SELECT STATUS AS status, LOG_PATH AS log FROM AUD_TASK_ATTEMPTS")
    assert attempt["status"] == "CANCELLED"
    log = Path(str(attempt["log"]))
    log = log if log.is_absolute() else sleepy.root / log
    assert "asked PostgreSQL to cancel the statement of backend" in log.read_text()
