"""sqlglot's view of a task's SELECT: exactly one read-only query, and its output names."""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from etl_craft.core.errors import SqlGuardError
from etl_craft.warehouse.substitution import without_terminator

_WRITES: tuple[type[exp.Expr], ...] = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Copy,
    exp.Command,
    exp.Into,
    exp.Set,
)


@dataclass(frozen=True)
class ParsedSelect:
    sql: str  # the text as written, without its terminator
    output_columns: tuple[str, ...] | None  # None when a * hides them


def parse_select(sql: str, dialect: str, *, subject: str = "the SELECT") -> ParsedSelect:
    statements = _parse(sql, dialect, subject)
    if len(statements) != 1:
        raise SqlGuardError(
            f"{subject} holds {len(statements)} statements; expected exactly one SELECT: "
            "move lookups into CTEs or subqueries of one query"
        )
    query = statements[0]
    if not isinstance(query, exp.Query):
        raise SqlGuardError(
            f"{subject} is a {query.key.upper()} statement; expected one read-only SELECT: "
            "etl-craft writes the target itself through the task's ACTION"
        )
    writes = sorted({node.key.upper() for node in query.walk() if isinstance(node, _WRITES)})
    if writes:
        raise SqlGuardError(
            f"{subject} contains {', '.join(writes)}; expected a read-only SELECT: "
            "remove the data-changing part, etl-craft writes the target through the task's ACTION"
        )
    return ParsedSelect(sql=without_terminator(sql), output_columns=_output_names(query))


def _parse(sql: str, dialect: str, subject: str) -> list[exp.Expr]:
    try:
        parsed = sqlglot.parse(sql, read=dialect)
    except SqlglotError as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SqlGuardError(
            f"{subject} can't be parsed as {dialect} SQL: {reason}; fix the query"
        ) from error
    # A comment after the last `;` comes back as an empty Semicolon statement.
    return [
        statement
        for statement in parsed
        if statement is not None and not isinstance(statement, exp.Semicolon)
    ]


def _output_names(query: exp.Query) -> tuple[str, ...] | None:
    if any(isinstance(select, exp.Star) for select in query.selects):
        return None
    if any(isinstance(select, exp.Column) and select.is_star for select in query.selects):
        return None
    names = tuple(query.named_selects)
    return names if len(names) == len(query.selects) and all(names) else None
