"""The demo set up from its specs (plan --write, migrate) runs to the same warehouse rows as the
demo set up from its hand-written migrations."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb

from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import OperationContext
from etl_craft.operations.demo.project import DemoRequest, demo_source, prepare_folder, run_demo
from etl_craft.operations.setup import init_db
from etl_craft.operations.specs.plan import write_plan
from tests.fixtures.metadata import TESTER

# Columns whose values name a run, a time or an id the Engine DB gave: they differ between
# any two runs of the same data, whatever their metadata.
RUN_COLUMNS = {
    "pipeline_id",
    "pipeline_run_id",
    "task_run_id",
    "row_id",
    "create_date",
    "update_date",
    "created_by",
    "updated_by",
    "valid_from",
    "valid_to",
}


def specs_only_source(root: Path) -> Path:
    """The demo project without its migrations: the specs are its metadata."""
    source = root / "etl-craft"
    shutil.copytree(demo_source(), source, ignore=shutil.ignore_patterns("data", "logs"))
    shutil.rmtree(source / "migrations")
    return source


def write_spec_migration(folder: Path, source: Path) -> None:
    project = prepare_folder(source, folder)
    connector = load_connector(project / "craft-connector.yml", profile=None)
    ctx = OperationContext(connector.project, connector, EngineDB(connector.engine_url), TESTER)
    try:
        init_db(ctx)
        assert write_plan(ctx).written is not None
    finally:
        ctx.close()


def warehouse_rows(project: Path) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(project / "data" / "warehouse.duckdb"), read_only=True) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
            " WHERE table_schema NOT IN ('etl_craft', 'information_schema', 'main')"
            " ORDER BY 1, 2"
        ).fetchall()
        found = {}
        for schema, table in tables:
            columns = [
                name
                for (name,) in conn.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                    [schema, table],
                ).fetchall()
                if name.lower() not in RUN_COLUMNS
            ]
            listed = ", ".join(f'"{c}"' for c in columns)
            rows = conn.execute(f'SELECT {listed} FROM "{schema}"."{table}"').fetchall()
            found[f"{schema}.{table}"] = sorted(rows, key=repr)
    return found


def test_the_demo_from_specs_writes_the_rows_of_the_demo_from_migrations(tmp_path: Path) -> None:
    by_migrations = run_demo(DemoRequest(tmp_path / "migrations"))
    source = specs_only_source(tmp_path / "source")
    write_spec_migration(tmp_path / "specs", source)
    by_specs = run_demo(DemoRequest(tmp_path / "specs", source=source))

    assert by_migrations.succeeded
    assert by_specs.succeeded
    expected = warehouse_rows(by_migrations.project_folder)
    found = warehouse_rows(by_specs.project_folder)
    assert sorted(found) == sorted(expected)
    assert sum(len(rows) for rows in expected.values()) > 100
    for table, rows in expected.items():
        assert found[table] == rows, table
