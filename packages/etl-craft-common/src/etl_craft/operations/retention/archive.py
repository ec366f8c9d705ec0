"""--archive-to: purged rows copied into a warehouse schema, one table per purged table.

The archive tables are history copies (operations/retention/copies.py). A batch replaces any
rows it archived before under the same ids, so a batch archived twice (its Engine DB
transaction failed after the archive committed) is archived once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from etl_craft.enginedb.connection import EngineConnection
from etl_craft.operations.retention.copies import HistoryCopies
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.targets import TargetObject


class Archive:
    def __init__(self, warehouse: WarehouseConnection, schema: str) -> None:
        self.copies = HistoryCopies(warehouse, schema, "--archive-to")
        self.warehouse, self.schema = warehouse, schema

    def target(self, table: str) -> TargetObject:
        return self.copies.target(table)

    def keep(self, conn: EngineConnection, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Copy ``rows`` of ``table`` into the archive, committed when this returns."""
        if not rows:
            return
        columns = self.copies.table_columns(conn, table)
        target = self.copies.target(table)
        with self.warehouse.mutation(target):
            self.copies.prepare(table, columns)
            self.copies.replace(target, columns, columns[0], rows)
