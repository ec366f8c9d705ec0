"""SQL tasks of every write action over one source, and the ways tests preview and run them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import inspect

from tests.fixtures.metadata import execute
from tests.integration.rehash.rehash_site import Site, pipelines_sql

SELECT = "SELECT id, name, amount FROM src.customers"
# Newest id first, so the first rows of a preview are not the first inserted.
EVENTS = "SELECT id, name, amount, $$run_date AS run_day\nFROM src.customers\nORDER BY id DESC;\n"
BROKEN = "SELECT id,\n       no_such_column\nFROM src.customers\n"
SQL_FILES = {"events.sql": EVENTS, "broken.sql": BROKEN}
RUN_DATE = "2026-11-30"  # what ProjectOnDisk.new_run gives a run
COUNTS = ("source", "target", "inserted", "updated", "deleted", "duplicates", "rows_written")


def _task(action: str, target: str, **more: str) -> dict[str, str]:
    return {"ACTION": action, "TARGET_OBJECT": target, "SOURCE_SQL": SELECT} | more


_EVENTS = {"SOURCE_SQL_FILE": "events.sql", "PIPELINE_ID_SUBSTITUTION": "Y"}
_GONE = {"SOURCE_SQL": "SELECT id FROM src.gone"}
_BROKEN = {"ACTION": "APPEND_TABLE", "TARGET_OBJECT": "dm.events", "SOURCE_SQL_FILE": "broken.sql"}
_KEYED = {"MERGE_KEY": "id", "MERGE_DEDUPE_ORDER": "amount DESC NULLS LAST"}
_SNAPSHOT = {"SCD2_MISSING_KEYS": "NEW_RECORD"}
# Never run: a task preview refuses.
PYTHON_TASK = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'scripts' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'script', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'scripts';
"""
PROJECT_TASKS = (
    pipelines_sql(
        ("setup", "c1", _task("SETUP_TABLE", "dm.c1")),
        ("setup", "c2", _task("SETUP_TABLE", "dm.c2")),
        ("setup", "events", {"ACTION": "SETUP_TABLE", "TARGET_OBJECT": "dm.events"} | _EVENTS),
        ("scd1", "merge", _task("SCD1_MERGE", "dm.c1", **_KEYED)),
        ("scd2", "merge", _task("SCD2_MERGE", "dm.c2", **_KEYED)),
        ("snapshot", "snapshot", _task("SCD2_MERGE", "dm.c2", **_KEYED, **_SNAPSHOT)),
        ("ties", "merge", _task("SCD1_MERGE", "dm.c1", MERGE_KEY="id")),
        ("append", "append", {"ACTION": "APPEND_TABLE", "TARGET_OBJECT": "dm.events"} | _EVENTS),
        ("delete", "delete", _task("DELETE_ROWS", "dm.c1", MERGE_KEY="id") | _GONE),
        ("broken", "broken", _BROKEN),
    )
    + PYTHON_TASK
)


def load_sources(site: Site) -> None:
    site.sql(
        "CREATE SCHEMA src",
        "CREATE TABLE src.customers (id INTEGER, name VARCHAR(20), amount DECIMAL(12,2))",
        "INSERT INTO src.customers VALUES (1, 'Ann', 10.50), (2, 'Bob', 20.00), (3, 'Cid', NULL), "
        "(4, '', 4.00)",
        "CREATE TABLE src.gone (id INTEGER)",
        "INSERT INTO src.gone VALUES (3)",
    )


def run_pipeline(site: Site, pipeline: str, run_key: str) -> tuple[str, dict[str, Any]]:
    """One real run of the pipeline: the run's status, and what each task run recorded."""
    project = site.project
    run_id = project.new_run(pipeline, run_key)
    status = project.supervisor(poll_seconds=0.3).supervise(run_id).status.value
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT k.TASK_CODE, l.SOURCE_COUNT, l.TARGET_COUNT, l.INSERT_COUNT, l.UPDATE_COUNT, "
            "l.DELETE_COUNT, l.DUPLICATE_COUNT, l.ROWS_WRITTEN, l.ERROR_MESSAGE "
            "FROM AUD_TASK_RUN_LOG l JOIN CFG_TASKS k ON k.TASK_ID = l.TASK_ID "
            "WHERE l.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    recorded = {
        row[0]: dict(zip(COUNTS, row[1:8], strict=True)) | {"error": row[8]} for row in rows
    }
    return status, recorded


def load_targets(site: Site) -> None:
    """The targets created and merged once from the first source rows."""
    for pipeline in ("setup", "scd1", "scd2"):
        assert run_pipeline(site, pipeline, f"manual:first-{pipeline}")[0] == "SUCCESS"


def engine_rows(site: Site) -> dict[str, int]:
    """The row count of every AUD_ table of the Engine DB."""
    names = inspect(site.project.engine.engine).get_table_names()
    with site.project.engine.read() as conn:
        return {
            name: int(execute(conn, f"SELECT COUNT(*) FROM {name}").scalar_one())
            for name in names
            if name.upper().startswith("AUD_")
        }


def warehouse_state(site: Site) -> dict[str, Any]:
    """Every table of the warehouse: its columns, and its rows in a stable order."""
    columns = site.rows(
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema NOT IN ('information_schema', 'pg_catalog') "
        "ORDER BY table_schema, table_name, ordinal_position"
    )
    tables = sorted({(schema, table) for schema, table, _, _ in columns})
    rows = {
        f"{schema}.{table}": sorted(
            repr(row) for row in site.rows(f"SELECT * FROM {schema}.{table}")
        )
        for schema, table in tables
    }
    return {"columns": columns, "rows": rows}


def preview(
    site: Site, capsys: pytest.CaptureFixture[str], *args: str, json_format: bool = True
) -> tuple[int, Any, str]:
    """`etl-craft preview ARGS`: its exit code, its document (or text) and stderr; checking that
    it left the Engine DB's AUD_ tables and every warehouse table as they were."""
    engine_before, warehouse_before = engine_rows(site), warehouse_state(site)
    options = ("--format", "json") if json_format else ()
    code, out, err = site.cli(*options, "preview", *args, capsys=capsys)
    assert engine_rows(site) == engine_before
    assert warehouse_state(site) == warehouse_before
    return code, json.loads(out) if json_format and out else out, err
