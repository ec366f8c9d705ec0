"""The AUD_ tables as the Engine DB holds them and as the mirror holds them, comparable."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from etl_craft.config.sections import Cloning
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.watermarks import MirroredTable
from etl_craft.operations.cloning.clone import WarehouseOpener
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.targets import TargetObject
from tests.fixtures.metadata import execute

SCHEMA = "aud_mirror"


def cloning(*, overlap_seconds: int = 0, lock_wait_seconds: int = 60) -> Cloning:
    return Cloning(SCHEMA, 15, lock_wait_seconds, overlap_seconds)


def reuse(warehouse: WarehouseConnection) -> WarehouseOpener:
    """The test's own connection as the clone's opener, left open when a page is done."""
    return lambda: nullcontext(warehouse)


def engine_rows(engine: EngineDB, table: MirroredTable) -> dict[int, dict[str, Any]]:
    with engine.read() as conn:
        found = execute(conn, f"SELECT * FROM {table.name}").mappings().all()
    rows = [_comparable(row) for row in found]
    return {int(row[table.key.lower()]): row for row in rows}


def mirror_rows(warehouse: WarehouseConnection, table: MirroredTable) -> dict[int, dict[str, Any]]:
    target = TargetObject(SCHEMA, table.name.lower())
    columns = [column.key for column in warehouse.columns(target)]
    if not columns:
        return {}
    found = warehouse.fetch_all("read the mirror", f"SELECT * FROM {target.sql}")
    rows = [_comparable(dict(zip(columns, row, strict=True))) for row in found]
    return {int(row[table.key.lower()]): row for row in rows}


def _comparable(row: Any) -> dict[str, Any]:
    return {str(key).lower(): _value(value) for key, value in dict(row).items()}


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, date):
        return value.isoformat()
    return value
