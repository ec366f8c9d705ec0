"""etl-craft purge --archive-to: the purged rows land in a warehouse schema, equal to what the
Engine DB held, before they leave it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from etl_craft.config.sections import build_retention
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.retention.archive import Archive
from etl_craft.operations.retention.purge import PurgeRequest, purge
from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.metadata import TESTER, execute
from tests.integration.retention.history import build_history

SCHEMA = "etl_archive"


def _engine_rows(engine: EngineDB, table: str, key: str, ids: tuple[int, ...]) -> list[Any]:
    with engine.read() as conn:
        rows = execute(conn, f"SELECT * FROM {table} ORDER BY {key}").mappings().all()
    lowered = [{str(k).lower(): v for k, v in row.items()} for row in rows]
    return [row for row in lowered if row[key.lower()] in ids]


def _archived(warehouse: WarehouseConnection, table: str, key: str) -> list[dict[str, Any]]:
    columns = [column.key for column in warehouse.columns(Archive(warehouse, SCHEMA).target(table))]
    rows = warehouse.fetch_all("read the archive", f"SELECT * FROM {SCHEMA}.{table} ORDER BY {key}")
    return [dict(zip(columns, row, strict=True)) for row in rows]


def test_archived_rows_equal_the_purged_rows(
    engine: EngineDB, warehouse: WarehouseConnection, tmp_path: Path
) -> None:
    history = build_history(engine, tmp_path)
    attempts = _engine_rows(engine, "AUD_TASK_ATTEMPTS", "ATTEMPT_ID", history.expired_attempts)
    runs = _engine_rows(engine, "AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID", (history.expired,))
    request = PurgeRequest(replace(build_retention(None), batch_rows=1), utc_now())

    view = purge(engine, TESTER, request, tmp_path, Archive(warehouse, SCHEMA))

    assert view.archive_to == SCHEMA
    assert _archived(warehouse, "aud_task_attempts", "attempt_id") == attempts
    assert _archived(warehouse, "aud_pipelines_run_log", "pipeline_run_id") == runs
    assert len(attempts) == 2
    assert len(runs) == 1
