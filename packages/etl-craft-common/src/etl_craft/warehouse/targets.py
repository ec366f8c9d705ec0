"""TARGET_OBJECT: `schema.table` or `database.schema.table`, each part a plain identifier."""

from __future__ import annotations

import re
from dataclasses import dataclass

from etl_craft.core.errors import MetadataError

# The warehouse schema of the write ledger and fence tables (etl_craft.warehouse.ledger); here,
# light to import, for the specs that name it.
DEFAULT_LEDGER_SCHEMA = "etl_craft"

# Plain identifiers need no quoting on any warehouse, so SQL can name them as written.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TARGET_FORM = "schema.table or database.schema.table, such as sales.customers"


def is_identifier(name: str) -> bool:
    return IDENTIFIER.fullmatch(name) is not None


@dataclass(frozen=True)
class TargetObject:
    schema: str
    table: str
    database: str | None = None

    @classmethod
    def parse(cls, text: str) -> TargetObject:
        parts = text.strip().split(".")
        if len(parts) == 1:
            raise MetadataError(
                f"TARGET_OBJECT {text!r} is a bare table name; expected {TARGET_FORM}: "
                "name the schema so the task can't write wherever the session points"
            )
        if len(parts) > 3:
            raise MetadataError(
                f"TARGET_OBJECT {text!r} has {len(parts)} parts; expected {TARGET_FORM}"
            )
        bad = [part for part in parts if not is_identifier(part)]
        if bad:
            raise MetadataError(
                f"TARGET_OBJECT {text!r} has the part {bad[0]!r}, which is not a plain identifier; "
                f"expected {TARGET_FORM} made of letters, digits and underscores"
            )
        if len(parts) == 3:
            return cls(database=parts[0], schema=parts[1], table=parts[2])
        return cls(schema=parts[0], table=parts[1])

    @property
    def sql(self) -> str:
        """The name as SQL: safe to embed because every part is a plain identifier."""
        return ".".join(part for part in (self.database, self.schema, self.table) if part)

    def __str__(self) -> str:
        return self.sql
