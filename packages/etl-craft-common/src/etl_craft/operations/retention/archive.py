"""--archive-to: purged rows copied into a warehouse schema, one table per purged table.

The archive tables take the purged table's name in lower case and its columns, typed as the
Engine DB declares them (timestamps of an SQLite Engine DB stay its text). A batch replaces
any rows it archived before under the same ids, so a batch archived twice (its Engine DB
transaction failed after the archive committed) is archived once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.retention import table_types
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import bound, create_schema, create_table
from etl_craft.warehouse.targets import TargetObject, is_identifier

# Rows per INSERT: a few dozen columns each stay well within every driver's parameter limit.
ROWS_PER_INSERT = 200


class Archive:
    def __init__(self, warehouse: WarehouseConnection, schema: str) -> None:
        if not is_identifier(schema):
            raise ConfigurationError(
                f"--archive-to {schema!r} is not a plain identifier; expected a warehouse "
                "schema name of letters, digits and underscores, such as etl_archive"
            )
        self.warehouse, self.schema = warehouse, schema
        self.columns: dict[str, tuple[Column, ...]] = {}

    def target(self, table: str) -> TargetObject:
        return TargetObject(self.schema, table.lower())

    def keep(self, conn: EngineConnection, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Copy ``rows`` of ``table`` into the archive, committed when this returns."""
        if not rows:
            return
        columns = self._columns(conn, table)
        target = self.target(table)
        with self.warehouse.mutation(target):
            if not self.warehouse.exists(target):
                self.warehouse.lock_schema(self.schema)
                self.warehouse.execute(
                    f"create the archive schema {self.schema}", create_schema(self.schema).sql
                )
                self.warehouse.execute(
                    f"create the archive {target}", create_table(target.sql, columns).sql
                )
            self._replace(target, columns, rows)

    def _replace(
        self, target: TargetObject, columns: tuple[Column, ...], rows: Sequence[dict[str, Any]]
    ) -> None:
        dialect, key = self.warehouse.dialect, columns[0]
        ids = [row[key.key] for row in rows]
        marks = ", ".join(dialect.placeholder for _ in ids)
        self.warehouse.execute(
            f"drop rows archived before from {target}",
            f"DELETE FROM {target.sql} WHERE {key.name} IN ({marks})",
            ids,
        )
        names = ", ".join(column.name for column in columns)
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start : start + ROWS_PER_INSERT]
            values = [[bound(dialect, row[c.key], c.type) for c in columns] for row in chunk]
            tuples = ",\n".join(f"({', '.join(v.sql for v in row)})" for row in values)
            self.warehouse.execute(
                f"archive {len(chunk)} row(s) into {target}",
                f"INSERT INTO {target.sql} ({names})\nVALUES {tuples}",
                [v.param for row in values for v in row],
            )

    def _columns(self, conn: EngineConnection, table: str) -> tuple[Column, ...]:
        if table not in self.columns:
            self.columns[table] = tuple(
                Column(name, _archive_type(declared)) for name, declared in table_types(conn, table)
            )
        return self.columns[table]


def _archive_type(declared: str) -> str:
    lowered = declared.lower()
    if "int" in lowered:
        return "BIGINT"
    if lowered.startswith("timestamp"):
        return "TIMESTAMP WITH TIME ZONE"
    if lowered == "date":
        return "DATE"
    return "VARCHAR"
