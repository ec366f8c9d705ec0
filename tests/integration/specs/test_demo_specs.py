"""The demo's pipeline specs, through plan --write and migrate, give the CFG_ rows of the demo's
hand-written migrations, on both Engine DBs; and plan finds nothing to change in the demo."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import OperationContext
from etl_craft.operations.demo.project import demo_source
from etl_craft.operations.setup import init_db, migrate
from etl_craft.operations.specs.plan import plan_specs, write_plan
from tests.conftest import DIALECTS
from tests.fixtures.databases import postgres_copy, sqlite_copy
from tests.fixtures.metadata import TESTER, execute

CFG_TABLES = (
    "CFG_PIPELINES",
    "CFG_PIPELINE_PARAMETERS",
    "CFG_PIPELINE_DEPENDENCY",
    "CFG_TASKS",
    "CFG_TASK_PARAMETERS",
    "CFG_TASK_DEPENDENCY",
    "CFG_BUSINESS_RULES",
)
# Who wrote a row and when differs between any two Engine DBs; ids depend on insert order.
AUDIT_COLUMNS = {"CREATED_BY", "CREATE_DATE", "UPDATED_BY", "UPDATE_DATE"}


@pytest.fixture(params=DIALECTS)
def engine_urls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    with ExitStack() as stack:
        if request.param == "sqlite":
            template = request.getfixturevalue("sqlite_template")
            urls = [stack.enter_context(sqlite_copy(template, tmp_path)) for _ in range(2)]
        else:
            admin = request.getfixturevalue("pg_admin_url")
            template = request.getfixturevalue("pg_template")
            urls = [stack.enter_context(postgres_copy(admin, template)) for _ in range(2)]
        yield urls[0], urls[1]


def demo_context(root: Path, engine_url: str, *, with_migrations: bool) -> OperationContext:
    shutil.copytree(demo_source(), root, ignore=shutil.ignore_patterns("data", "logs"))
    if not with_migrations:
        shutil.rmtree(root / "migrations")
    connector = load_connector(root / "craft-connector.yml", profile=None)
    ctx = OperationContext(connector.project, connector, EngineDB(engine_url), TESTER)
    init_db(ctx)
    return ctx


def cfg_rows(db: EngineDB) -> dict[str, list[dict[str, Any]]]:
    """Every CFG_ row of the metadata, ids replaced by the codes they stand for."""
    with db.read() as conn:
        pipelines = {
            r[0]: r[1]
            for r in execute(conn, "SELECT PIPELINE_ID, PIPELINE_CODE FROM CFG_PIPELINES")
        }
        tasks = {
            r[0]: f"{pipelines[r[1]]}.{r[2]}"
            for r in execute(conn, "SELECT TASK_ID, PIPELINE_ID, TASK_CODE FROM CFG_TASKS")
        }
        codes = {
            "PIPELINE_ID": pipelines,
            "DEPENDS_ON_PIPELINE_ID": pipelines,
            "TASK_ID": tasks,
            "DEPENDS_ON_TASK_ID": tasks,
        }
        found = {}
        for table in CFG_TABLES:
            rows = [dict(r) for r in execute(conn, f"SELECT * FROM {table}").mappings()]
            found[table] = sorted((_coded(row, codes) for row in rows), key=repr)
    return found


def _coded(row: dict[str, Any], codes: dict[str, dict[Any, str]]) -> dict[str, Any]:
    coded = {}
    for column, value in row.items():
        name = column.upper()
        if name in codes:
            coded[name] = codes[name][value]
        elif not name.endswith("_ID") and name not in AUDIT_COLUMNS:
            coded[name] = value
    return coded


def test_the_demo_specs_give_the_rows_of_the_demo_migrations(
    engine_urls: tuple[str, str], tmp_path: Path
) -> None:
    by_migrations = demo_context(tmp_path / "a" / "etl-craft", engine_urls[0], with_migrations=True)
    by_specs = demo_context(tmp_path / "b" / "etl-craft", engine_urls[1], with_migrations=False)
    try:
        migrate(by_migrations)
        planned = write_plan(by_specs)
        assert planned.refusal is None
        assert planned.written is not None
        assert planned.written.is_file()
        migrate(by_specs)

        expected, found = cfg_rows(by_migrations.engine), cfg_rows(by_specs.engine)
        assert sum(len(rows) for rows in expected.values()) == 170
        for table in CFG_TABLES:
            assert found[table] == expected[table], table
        # The demo's migrations and its specs agree, so plan has nothing to write for either.
        for ctx in (by_migrations, by_specs):
            again = plan_specs(ctx)
            assert (again.changes, again.file_name) == ((), None)
    finally:
        by_migrations.engine.dispose()
        by_specs.engine.dispose()
