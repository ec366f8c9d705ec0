"""What tracing one SELECT finds: its output columns, where each comes from, and how."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

# The source "column" of COUNT(*): every row of the table, whatever its columns.
ROWS = "*"


class EdgeKind(StrEnum):
    COPY = "copy"  # the source column as it is, renamed or cast
    DERIVED = "derived"  # computed: an expression, CASE, aggregate or window


@dataclass(frozen=True)
class ColumnSource:
    table: str  # normalized as table_key does: db.schema.table, unquoted parts folded
    column: str
    kind: EdgeKind


@dataclass(frozen=True)
class OutputColumn:
    name: str
    sources: tuple[ColumnSource, ...]  # empty for a constant


@dataclass(frozen=True)
class Trace:
    """One SELECT traced; ``problem`` says why it could not be, and ``columns`` is then None."""

    reads: tuple[str, ...]  # every table the SELECT reads, CTE names excluded
    columns: tuple[OutputColumn, ...] | None
    problem: str | None = None

    def column(self, name: str) -> OutputColumn | None:
        return next((c for c in self.columns or () if c.name.lower() == name.lower()), None)

    def to_json(self) -> str:
        columns = None
        if self.columns is not None:
            columns = [
                {"name": c.name, "sources": [[s.table, s.column, s.kind.value] for s in c.sources]}
                for c in self.columns
            ]
        return json.dumps(
            {"reads": list(self.reads), "columns": columns, "problem": self.problem},
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        data = json.loads(text)
        columns = None
        if data["columns"] is not None:
            columns = tuple(
                OutputColumn(
                    c["name"],
                    tuple(ColumnSource(t, n, EdgeKind(k)) for t, n, k in c["sources"]),
                )
                for c in data["columns"]
            )
        return cls(tuple(data["reads"]), columns, data["problem"])
