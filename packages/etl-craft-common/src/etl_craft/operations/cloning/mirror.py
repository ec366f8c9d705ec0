"""The mirror: history copies of the AUD_ tables in the Cloning schema, and each table's
watermark, kept in the same schema so that it commits with the rows it stands for.

A mirror without its watermarks table is cloned from the start, so dropping the schema by hand
is how an operator has the next clone copy everything again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.errors import CloningError
from etl_craft.core.time import as_utc, utc_now
from etl_craft.operations.retention.copies import HistoryCopies
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import bound
from etl_craft.warehouse.targets import TargetObject

WATERMARKS = "clone_watermarks"
WATERMARK_COLUMNS = (
    Column("table_name", "VARCHAR"),
    Column("watermark_at", "VARCHAR"),  # as the Engine DB returned it, as text
    Column("watermark_key", "BIGINT"),
    Column("cloned_at", "TIMESTAMP WITH TIME ZONE"),
)
# Tables only an Engine DB has: a schema holding them is the Engine DB's own.
ENGINE_TABLES = ("schema_migrations", "cfg_projects")


@dataclass(frozen=True)
class Watermark:
    at: datetime
    key: int


class Mirror:
    def __init__(
        self,
        warehouse: WarehouseConnection,
        schema: str,
        columns: dict[str, tuple[Column, ...]] | None = None,
    ) -> None:
        self.copies = HistoryCopies(warehouse, schema, "Cloning.schema", columns)
        self.warehouse, self.schema = warehouse, schema
        self.watermarks_target = TargetObject(schema, WATERMARKS)

    def refuse_engine_schema(self) -> None:
        """A mirror in the Engine DB's own schema would write beside (and over) its tables."""
        found = [t for t in ENGINE_TABLES if self.warehouse.exists(TargetObject(self.schema, t))]
        if found:
            raise CloningError(
                f"Cloning.schema {self.schema} holds {', '.join(found)}: it is the Engine DB's "
                "own schema, and a mirror there would write beside its tables; set "
                "Cloning.schema in craft-connector.yml to a schema of its own, such as aud_mirror"
            )

    def watermarks(self) -> dict[str, Watermark]:
        if not self.warehouse.exists(self.watermarks_target):
            return {}
        rows = self.warehouse.fetch_all(
            f"read the clone's watermarks from {self.watermarks_target}",
            f"SELECT table_name, watermark_at, watermark_key FROM {self.watermarks_target.sql}",
        )
        found: dict[str, Watermark] = {}
        for table, at, key in rows:
            stamp = as_utc(str(at))
            assert stamp is not None
            found[str(table)] = Watermark(stamp, int(key))
        return found

    def save_watermark(self, table: str, at: datetime | str, key: int) -> None:
        """Inside the mutation that copied the rows up to (``at``, ``key``)."""
        self.copies.prepare(WATERMARKS, WATERMARK_COLUMNS)
        target, name = self.watermarks_target, WATERMARK_COLUMNS[0]
        self.copies.delete(target, name, [table])
        stamp = at.isoformat() if isinstance(at, datetime) else at
        dialect = self.warehouse.dialect
        values = [
            bound(dialect, value, column.type)
            for value, column in zip((table, stamp, key, utc_now()), WATERMARK_COLUMNS, strict=True)
        ]
        self.warehouse.execute(
            f"record the watermark of {table} in {target}",
            f"INSERT INTO {target.sql} ({', '.join(c.name for c in WATERMARK_COLUMNS)})\n"
            f"VALUES ({', '.join(v.sql for v in values)})",
            [v.param for v in values],
        )
