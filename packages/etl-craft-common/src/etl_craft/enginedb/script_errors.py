"""A failed statement of a user's SQL file, said in the file's own terms.

The driver reports "UNIQUE constraint failed: CFG_TASKS.PIPELINE_ID, CFG_TASKS.TASK_CODE" or a
character position in the whole script; a person needs the line of their file, the statement,
what the database expected and what to do about it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg

from etl_craft.enginedb.connection import _split_sqlite_script

STATEMENT_SHOWN = 160

# (pattern of the driver's message, what the database expected, the remedy)
_RULES = (
    (
        re.compile(r"UNIQUE constraint failed: (?P<object>[^\n]+)|duplicate key value", re.I),
        "a new value for {object}, which must be unique",
        "a row with the same key exists already (an earlier migration or a person may have "
        "added it): change the key, or update that row instead of inserting it",
    ),
    (
        re.compile(r"CHECK constraint failed: (?P<object>\S+)|violates check constraint", re.I),
        "a value the check {object} allows",
        "correct the value; docs/reference/engine-db-schema.md lists each column's allowed values",
    ),
    (
        re.compile(r"NOT NULL constraint failed: (?P<object>\S+)|violates not-null", re.I),
        "a value for {object}, which cannot be NULL",
        "give the column a value; a SELECT that finds no matching row inserts NULLs",
    ),
    (
        re.compile(r"FOREIGN KEY constraint failed|violates foreign key constraint", re.I),
        "a reference to a row that exists",
        "insert the referenced row first (an earlier file or statement), or fix the code it "
        "is looked up by",
    ),
)


@dataclass(frozen=True)
class Statement:
    line: int  # of its first line of code, in the file
    text: str


def statements(sql: str) -> Iterator[Statement]:
    """The statements of a script, split as SQLite runs them, with their lines."""
    cursor = 0
    for piece in _split_sqlite_script(sql):
        start = sql.index(piece, cursor)
        cursor = start + len(piece)
        code = start + _code_start(piece)
        yield Statement(sql.count("\n", 0, code) + 1, sql[code:cursor].strip())


def statement_at(sql: str, position: int) -> Statement:
    """The line of character ``position`` (1-based, as PostgreSQL reports it) and the
    statement around it."""
    line = sql.count("\n", 0, position - 1) + 1
    around = [statement.text for statement in statements(sql) if statement.line <= line]
    return Statement(line, around[-1] if around else "")


def describe(error: Exception, where: str, statement: Statement | None) -> str:
    """``where`` (a file) line N: the statement, the database's words, expectation, remedy."""
    said = _said(error)
    located = f"{where} line {statement.line}" if statement else where
    shown = f" in `{_shorten(statement.text)}`" if statement and statement.text else ""
    for pattern, expectation, remedy in _RULES:
        match = pattern.search(said)
        if match:
            found = match.groupdict().get("object") or _constraint(error)
            expected = expectation.format(object=found or "the column")
            return f"{located} failed{shown}: {said}; expected {expected}; {remedy}"
    return f"{located} failed{shown}: {said}"


def located_statement(sql: str, error: Exception) -> Statement | None:
    """Where PostgreSQL says it failed, when it says (syntax and name errors do)."""
    if isinstance(error, psycopg.Error) and error.diag.statement_position:
        return statement_at(sql, int(error.diag.statement_position))
    return None


def _said(error: Exception) -> str:
    text = str(error).strip()
    if isinstance(error, psycopg.Error) and error.diag.message_primary:
        detail = f" ({error.diag.message_detail})" if error.diag.message_detail else ""
        return f"{error.diag.message_primary}{detail}"
    if isinstance(error, sqlite3.Error):
        return text
    return text.splitlines()[0] if text else type(error).__name__


def _constraint(error: Exception) -> str | None:
    if isinstance(error, psycopg.Error):
        table, name = error.diag.table_name, error.diag.constraint_name
        if name:
            return f"{name} on {table}" if table else name
    return None


def _code_start(piece: str) -> int:
    """Where the first line of code of ``piece`` starts: after blank and comment lines."""
    offset = 0
    for line in piece.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("--"):
            return offset + len(line) - len(line.lstrip())
        offset += len(line)
    return 0


def _shorten(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= STATEMENT_SHOWN else flat[: STATEMENT_SHOWN - 3] + "..."
