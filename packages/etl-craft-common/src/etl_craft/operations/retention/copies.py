"""Copies of Engine DB history tables in a warehouse schema: purge's archive and the clone's mirror.

A copy takes its table's name in lower case and its columns, typed portably from what the
Engine DB declares (timestamps of an SQLite Engine DB stay its text). It is created when
missing and never dropped; a column an upgrade adds to the Engine DB table is added to it, and
one an upgrade removes stays, NULL from then on. Rows are replaced by key: the rows under the
keys are deleted and inserted again, many rows per INSERT, so copying a row twice leaves one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.retention import table_types
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import add_column, bound, create_schema, create_table
from etl_craft.warehouse.targets import TargetObject, is_identifier

# Rows per INSERT: a few dozen columns each stay well within every driver's parameter limit.
ROWS_PER_INSERT = 200


class HistoryCopies:
    def __init__(
        self,
        warehouse: WarehouseConnection,
        schema: str,
        setting: str,
        columns: dict[str, tuple[Column, ...]] | None = None,
    ) -> None:
        if not is_identifier(schema):
            raise ConfigurationError(
                f"{setting} {schema!r} is not a plain identifier; expected a warehouse "
                "schema name of letters, digits and underscores, such as etl_archive"
            )
        self.warehouse, self.schema = warehouse, schema
        # Each Engine DB table's copy columns, read once: shared by the copies of one clone.
        self.columns = {} if columns is None else columns
        self.prepared: set[str] = set()

    def target(self, table: str) -> TargetObject:
        return TargetObject(self.schema, table.lower())

    def table_columns(self, conn: EngineConnection, table: str) -> tuple[Column, ...]:
        return copy_columns(conn, table, self.columns)

    def prepare(self, table: str, columns: tuple[Column, ...]) -> None:
        """Inside the copy's mutation: create it when missing, add the columns it lacks."""
        if table in self.prepared:
            return
        target = self.target(table)
        found = {column.key for column in self.warehouse.columns(target)}
        if not found:
            self.warehouse.lock_schema(self.schema)
            self.warehouse.execute(
                f"create the schema {self.schema}", create_schema(self.schema).sql
            )
            self.warehouse.execute(f"create {target}", create_table(target.sql, columns).sql)
        for column in columns:
            if found and column.key not in found:
                self.warehouse.execute(
                    f"add {column.name} to {target}", add_column(target.sql, column).sql
                )
        self.prepared.add(table)

    def delete(self, target: TargetObject, key: Column, ids: Sequence[object]) -> int:
        dialect, deleted = self.warehouse.dialect, 0
        for start in range(0, len(ids), ROWS_PER_INSERT):
            chunk = ids[start : start + ROWS_PER_INSERT]
            marks = ", ".join(dialect.placeholder for _ in chunk)
            deleted += self.warehouse.execute(
                f"delete {len(chunk)} row(s) by key from {target}",
                f"DELETE FROM {target.sql} WHERE {key.name} IN ({marks})",
                chunk,
            )
        return deleted

    def replace(
        self,
        target: TargetObject,
        columns: tuple[Column, ...],
        key: Column,
        rows: Sequence[dict[str, Any]],
    ) -> None:
        self.delete(target, key, [row[key.key] for row in rows])
        dialect, names = self.warehouse.dialect, ", ".join(column.name for column in columns)
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start : start + ROWS_PER_INSERT]
            values = [[bound(dialect, row[c.key], c.type) for c in columns] for row in chunk]
            tuples = ",\n".join(f"({', '.join(v.sql for v in row)})" for row in values)
            self.warehouse.execute(
                f"copy {len(chunk)} row(s) into {target}",
                f"INSERT INTO {target.sql} ({names})\nVALUES {tuples}",
                [v.param for row in values for v in row],
            )


def copy_columns(
    conn: EngineConnection, table: str, known: dict[str, tuple[Column, ...]]
) -> tuple[Column, ...]:
    """The copy's columns of Engine DB ``table``, in its order, typed portably; read once into
    ``known``."""
    if table not in known:
        known[table] = tuple(
            Column(name, _portable_type(declared)) for name, declared in table_types(conn, table)
        )
    return known[table]


def _portable_type(declared: str) -> str:
    lowered = declared.lower()
    if "int" in lowered:
        return "BIGINT"
    if lowered.startswith("timestamp"):
        return "TIMESTAMP WITH TIME ZONE"
    if lowered == "date":
        return "DATE"
    return "VARCHAR"
