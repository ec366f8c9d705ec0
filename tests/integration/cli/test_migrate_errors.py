"""A migration the Engine DB refuses is reported in the file's terms: its line, the statement,
what was expected and what to do; the raw driver message alone never reaches the user."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.cli.conftest import PIPELINE_MIGRATION, Site

DUPLICATE = """\
-- the same task once more

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
"""
BAD_HANDLER = """\
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'ok', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'odd', 'SHELL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
"""
UNKNOWN_COLUMN = """\
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'ok', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';

INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_KODE, HANDLER)
SELECT PIPELINE_ID, 'odd', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
"""


def migrated(site: Site, name: str, sql: str) -> str:
    assert site.run("init-db").returncode == 0
    site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)
    assert site.run("migrate").returncode == 0
    site.write_migration(name, sql)
    done = site.run("migrate")
    assert done.returncode == ExitCode.MIGRATION, done.stderr
    tasks = site.query("SELECT TASK_CODE AS task FROM CFG_TASKS")
    assert tasks == [{"task": "load_orders"}]  # the failed file left nothing behind
    return done.stderr


def test_a_unique_failure_names_line_statement_and_remedy(sqlite_site: Site) -> None:
    said = migrated(sqlite_site, "0002_again.sql", DUPLICATE)
    assert "migration 0002_again.sql line 3 failed in `INSERT INTO CFG_TASKS" in said
    assert "UNIQUE constraint failed: CFG_TASKS.PIPELINE_ID, CFG_TASKS.TASK_CODE" in said
    assert "expected a new value for CFG_TASKS.PIPELINE_ID, CFG_TASKS.TASK_CODE" in said
    assert "change the key, or update that row instead of inserting it" in said
    assert "The file was rolled back" in said


def test_a_check_failure_names_its_line_and_the_check(sqlite_site: Site) -> None:
    said = migrated(sqlite_site, "0002_handler.sql", BAD_HANDLER)
    assert "migration 0002_handler.sql line 3 failed in `INSERT INTO CFG_TASKS" in said
    assert "'odd', 'SHELL'" in said
    assert "expected a value the check CK_CFG_TASKS_HANDLER allows" in said


@pytest.mark.postgres
def test_a_postgresql_error_with_a_position_names_its_line(pg_site: Site) -> None:
    said = migrated(pg_site, "0002_column.sql", UNKNOWN_COLUMN)
    assert "migration 0002_column.sql line 4 failed in `INSERT INTO CFG_TASKS" in said
    assert 'column "task_kode" of relation "cfg_tasks" does not exist' in said
