"""`$$token` substitution in SQL text, only outside string literals, quoted names and comments."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date

TOKEN_NAMES = ("pipeline_id_filter", "pipeline_id", "pipeline_run_id", "task_run_id", "run_date")
_TOKEN = re.compile(r"\$\$(" + "|".join(TOKEN_NAMES) + r")(?![A-Za-z0-9_$])")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z0-9_$]")


@dataclass(frozen=True)
class TokenValues:
    pipeline_id: int
    pipeline_run_id: int
    task_run_id: int
    run_date: date
    full_refresh: bool

    def as_sql(self) -> dict[str, str]:
        # A FULL refresh reads every pipeline's rows; an incremental one only this pipeline's.
        row_filter = "1 = 1" if self.full_refresh else f"pipeline_id = {self.pipeline_id}"
        return {
            "pipeline_id": str(int(self.pipeline_id)),
            "pipeline_id_filter": row_filter,
            "pipeline_run_id": str(int(self.pipeline_run_id)),
            "task_run_id": str(int(self.task_run_id)),
            "run_date": f"DATE '{self.run_date.isoformat()}'",
        }


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
    parts = []
    for span in spans(sql):
        text = sql[span.start : span.end]
        if span.code:
            text = _TOKEN.sub(lambda match: replacements.get(match.group(1), match.group(0)), text)
        parts.append(text)
    return "".join(parts)


def without_terminator(sql: str) -> str:
    """The statement without its `;` terminators, so it can be embedded as a subquery."""
    parts = []
    for span in spans(sql):
        text = sql[span.start : span.end]
        parts.append(text.replace(";", "") if span.code else text)
    return "".join(parts).strip()
