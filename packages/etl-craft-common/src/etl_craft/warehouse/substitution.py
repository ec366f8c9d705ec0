"""`$$token` substitution in SQL text, only outside string literals, quoted names and comments.

The tokens a run has values for: its ids (numbers), `$$run_date`, `$$pipeline_code`, `$$run_key`
and `$$param.NAME` for each parameter its pipeline declares in CFG_PIPELINE_PARAMETERS. Every
value but the ids and the row filter is written as a literal sqlglot renders for the warehouse's
dialect (warehouse.literals), so it lands in the statement as data. `$$ident.NAME` reads a
parameter of type IDENTIFIER as a name instead: checked to be a plain name, then quoted by
sqlglot, so it can stand for a table, schema or column and still never reads as SQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from types import MappingProxyType

from etl_craft.warehouse.literals import (
    JsonText,
    ParameterKind,
    Value,
    placeholder,
    read_value,
    sql_identifier,
    sql_literal,
)

TOKEN_NAMES = (
    "pipeline_id_filter",
    "pipeline_id",
    "pipeline_run_id",
    "task_run_id",
    "run_date",
    "pipeline_code",
    "run_key",
)
PARAMETER_PREFIX = "param."
IDENTIFIER_PREFIX = "ident."
_TOKEN = re.compile(
    r"\$\$("
    + "|".join(TOKEN_NAMES)
    + r"|(?:param|ident)\.[A-Za-z][A-Za-z0-9_]{0,127})(?![A-Za-z0-9_$])"
)
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z0-9_$]")
# A string literal right after a word or another literal would read differently (E'..' and
# U&'..' escape, '..''..' continues), so a space keeps it apart.
_FUSES = re.compile(r"[A-Za-z0-9_$&'\"]")


@dataclass(frozen=True)
class PipelineParameter:
    """One CFG_PIPELINE_PARAMETERS row, as `$$param.NAME` reads it."""

    name: str
    kind: ParameterKind
    text: str | None

    def value(self) -> Value | JsonText:
        """The typed value; ValueError when the text doesn't read as the kind."""
        return read_value(self.kind, self.text)


@dataclass(frozen=True)
class TokenValues:
    pipeline_id: int
    pipeline_run_id: int
    task_run_id: int
    run_date: date
    full_refresh: bool
    pipeline_code: str | None = None
    run_key: str | None = None
    parameters: Mapping[str, PipelineParameter] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def as_sql(self, dialect: str = "") -> dict[str, str]:
        """Each token's replacement; ValueError when a parameter's value doesn't fit its type."""
        # A FULL refresh reads every pipeline's rows; an incremental one only this pipeline's.
        row_filter = "1 = 1" if self.full_refresh else f"pipeline_id = {self.pipeline_id}"
        values = {
            "pipeline_id": str(int(self.pipeline_id)),
            "pipeline_id_filter": row_filter,
            "pipeline_run_id": str(int(self.pipeline_run_id)),
            "task_run_id": str(int(self.task_run_id)),
            "run_date": sql_literal(ParameterKind.DATE, self.run_date, dialect),
        }
        for name, text in (("pipeline_code", self.pipeline_code), ("run_key", self.run_key)):
            if text is not None:
                values[name] = sql_literal(ParameterKind.STRING, text, dialect)
        for parameter in self.parameters.values():
            literal = sql_literal(parameter.kind, parameter.value(), dialect)
            values[PARAMETER_PREFIX + parameter.name] = literal
            if parameter.kind is ParameterKind.IDENTIFIER and parameter.text is not None:
                values[IDENTIFIER_PREFIX + parameter.name] = sql_identifier(parameter.text, dialect)
        return values


def placeholders(
    dialect: str,
    parameters: Mapping[str, ParameterKind],
    identifiers: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Replacements that make SQL parse the way a run's would, for checks and lineage: each
    token becomes a literal of its type, whatever a run's value will be; `$$ident.NAME` becomes
    the name in ``identifiers``, since a name decides which table the SQL reads."""
    text = sql_literal(ParameterKind.STRING, "", dialect)
    values = {
        "pipeline_id": "0",
        "pipeline_id_filter": "1 = 1",
        "pipeline_run_id": "0",
        "task_run_id": "0",
        "run_date": placeholder(ParameterKind.DATE, dialect),
        "pipeline_code": text,
        "run_key": text,
    }
    for name, kind in parameters.items():
        values[PARAMETER_PREFIX + name] = placeholder(kind, dialect)
    for name, value in (identifiers or {}).items():
        values[IDENTIFIER_PREFIX + name] = sql_identifier(value, dialect)
    return values


def parameters_used(sql: str, prefix: str = PARAMETER_PREFIX) -> tuple[str, ...]:
    """The names of the pipeline parameters the SQL's code reads as `$$param.NAME` (or
    `$$ident.NAME` with that ``prefix``), in order."""
    found: dict[str, None] = {}
    for span in spans(sql):
        if span.code:
            for match in _TOKEN.finditer(sql, span.start, span.end):
                if match.group(1).startswith(prefix):
                    found[match.group(1).removeprefix(prefix)] = None
    return tuple(found)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    code: bool  # False inside a string literal, quoted identifier, comment or dollar quote


def spans(sql: str) -> Iterator[Span]:
    """Split SQL into code and non-code spans, by PostgreSQL's lexical rules (DuckDB's subset)."""
    position, code_start = 0, 0
    while position < len(sql):
        end = _skip(sql, position)
        if end is None:
            position += 1
            continue
        if code_start < position:
            yield Span(code_start, position, code=True)
        yield Span(position, end, code=False)
        position = code_start = end
    if code_start < len(sql):
        yield Span(code_start, len(sql), code=True)


def _skip(sql: str, position: int) -> int | None:
    """The end of the literal or comment starting at position, or None when code starts there."""
    char, pair = sql[position], sql[position : position + 2]
    if pair == "--":
        newline = sql.find("\n", position)
        return len(sql) if newline < 0 else newline
    if pair == "/*":
        return _block_comment_end(sql, position)
    if char == "'":
        escaped = position > 0 and sql[position - 1] in "eE" and not _word_before(sql, position - 1)
        return _quoted_end(sql, position, "'", backslash=escaped)
    if char == '"':
        return _quoted_end(sql, position, '"', backslash=False)
    if char == "$" and not _word_before(sql, position) and not _TOKEN.match(sql, position):
        tag = _DOLLAR_TAG.match(sql, position)
        if tag:
            close = sql.find(tag.group(0), tag.end())
            return len(sql) if close < 0 else close + len(tag.group(0))
    return None


def _word_before(sql: str, position: int) -> bool:
    return position > 0 and _WORD.match(sql[position - 1]) is not None


def _block_comment_end(sql: str, position: int) -> int:
    depth, index = 0, position
    while index < len(sql):
        pair = sql[index : index + 2]
        if pair == "/*":
            depth, index = depth + 1, index + 2
        elif pair == "*/":
            depth, index = depth - 1, index + 2
            if depth == 0:
                return index
        else:
            index += 1
    return len(sql)


def _quoted_end(sql: str, position: int, quote: str, *, backslash: bool) -> int:
    index = position + 1
    while index < len(sql):
        char = sql[index]
        if (backslash and char == "\\") or (char == quote and sql[index + 1 : index + 2] == quote):
            index += 2
        elif char == quote:
            return index + 1
        else:
            index += 1
    return len(sql)


def substitute(sql: str, values: TokenValues | Mapping[str, str]) -> str:
    """Replace `$$token`s in code; the same text inside quotes or comments stays as written."""
    replacements = values.as_sql() if isinstance(values, TokenValues) else dict(values)
    parts, position = [], 0
    for span in spans(sql):
        if not span.code:
            continue
        for match in _TOKEN.finditer(sql, span.start, span.end):
            value = replacements.get(match.group(1))
            if value is None:
                continue
            fused = value.startswith("'") and _FUSES.fullmatch(
                sql[match.start() - 1 : match.start()]
            )
            parts += [sql[position : match.start()], " " + value if fused else value]
            position = match.end()
    return "".join([*parts, sql[position:]])


def without_terminator(sql: str) -> str:
    """The statement without its `;` terminators, so it can be embedded as a subquery."""
    parts = []
    for span in spans(sql):
        text = sql[span.start : span.end]
        parts.append(text.replace(";", "") if span.code else text)
    return "".join(parts).strip()
