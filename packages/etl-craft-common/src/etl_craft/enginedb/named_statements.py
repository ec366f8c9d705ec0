"""Named Engine DB statements, loaded once from the .sql files beside this module.

Each statement sits under a ``-- name: <name> --`` header followed by a one-line description.
A file under ``sql/<dialect>/`` overrides a statement of the same name for that dialect. A
parameter whose name ends in ``_list`` takes a sequence and expands to one bound value per item
(``IN :attempt_id_list``), the same on both dialects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, TextClause

STATEMENT_OPTION = "etl_craft_statement"  # the name, carried to the Engine DB's timing events
HEADER = re.compile(r"^--\s*name:\s*([a-z][a-z0-9_]*)\s*--\s*$", re.MULTILINE)
EXPANDING = re.compile(r"(?<!:):([a-z][a-z0-9_]*_list)\b")
DIALECTS = ("postgresql", "sqlite")


@dataclass(frozen=True)
class Statement:
    name: str
    description: str
    sql: str
    source: str

    @cached_property
    def clause(self) -> TextClause:
        # Built once per statement; the name rides along as an option, so timing it by name
        # costs a dictionary lookup rather than parsing the SQL.
        from sqlalchemy import bindparam, text

        names = sorted(set(EXPANDING.findall(self.sql)))
        expanding: list[BindParameter[Any]] = [bindparam(n, expanding=True) for n in names]
        clause = text(self.sql).bindparams(*expanding) if expanding else text(self.sql)
        return clause.execution_options(**{STATEMENT_OPTION: self.name})


def parse_statements(source: str, content: str) -> dict[str, Statement]:
    """Split one .sql file into its named statements."""
    matches = list(HEADER.finditer(content))
    if not matches or content[: matches[0].start()].strip():
        raise ValueError(f"{source}: every statement must follow a '-- name: <name> --' header")
    statements: dict[str, Statement] = {}
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        body = content[match.end() : following.start() if following else len(content)]
        lines = body.strip().splitlines()
        if not lines or not lines[0].startswith("--"):
            raise ValueError(f"{source}: statement {match[1]} needs a one-line '-- ' description")
        name = match[1]
        if name in statements:
            raise ValueError(f"{source}: statement {name} is defined twice")
        sql = "\n".join(lines[1:]).strip().rstrip(";")
        statements[name] = Statement(name, lines[0].lstrip("- ").strip(), sql, source)
    return statements


def _sql_files(folder: Traversable) -> list[Traversable]:
    return sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".sql")),
        key=lambda entry: entry.name,
    )


@cache
def statements(dialect: str) -> dict[str, Statement]:
    """Every statement for ``dialect``: the common files, then that dialect's overrides."""
    if dialect not in DIALECTS:
        raise ValueError(f"Engine DB dialect {dialect!r} is not supported; expected {DIALECTS}")
    root = files("etl_craft.enginedb") / "sql"
    merged: dict[str, Statement] = {}
    for entry in _sql_files(root):
        for name, statement in parse_statements(entry.name, entry.read_text()).items():
            if name in merged:
                raise ValueError(f"{entry.name}: statement {name} is also in {merged[name].source}")
            merged[name] = statement
    for entry in _sql_files(root / dialect):
        merged.update(parse_statements(f"{dialect}/{entry.name}", entry.read_text()))
    return merged


def statement(dialect: str, name: str) -> Statement:
    try:
        return statements(dialect)[name]
    except KeyError:
        raise KeyError(f"no Engine DB statement named {name!r} for {dialect}") from None
