"""UpdateStrategy.REWRITE: the SQL actions' statements on a warehouse whose tables can't change in
place (no UPDATE, no DELETE) and that has no temporary tables.

The actions are written once, with UPDATE ... FROM, DELETE and INSERT. Here they run as follows:

- Inside a rewrite of a target (one attempt's writes), the target itself is never written. Its
  first write copies it into a candidate table, and every later statement naming the target reads
  and writes the candidate. The publication puts the last candidate in the target's place in one
  catalog operation, so a reader sees the old table or the new one, never a half.
- An UPDATE or a DELETE computes the table's whole new state with one set-based SELECT into a new
  candidate, which replaces the previous one: rows matching the condition get the new values (or
  are left out), every other row is copied as it is.
- A temporary table is a real table in the warehouse's scratch schema, named as the action named
  it; it is dropped like a temporary one.

Row counts are what the statements would have reported: matched rows for an UPDATE or a DELETE,
the table's growth for an INSERT.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.targets import TargetObject

HIT = "etl_craft_hit"


class RewriteHost(ABC):
    """What a rewrite asks of its connection: run its own statements and describe tables."""

    sqlglot_name: str
    scratch_schema: str

    @abstractmethod
    def run_sql(self, purpose: str, sql: str) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def table_columns(self, table: str) -> tuple[Column, ...]:
        """The columns of a table named as SQL; empty when it doesn't exist."""

    @abstractmethod
    def take_place(self, table: str, new: str) -> None:
        """Make ``new``'s rows ``table``'s in one operation, and drop ``new``."""

    def adapt(self, tree: exp.Expr) -> exp.Expr:
        """The warehouse's own fix-ups of a statement before it is sent."""
        return tree


@dataclass
class Rewrite:
    """One attempt's writes to ``target``: where its new state is, and what happened to it."""

    target: TargetObject
    token: str
    base: tuple[Column, ...]  # the target's columns when the rewrite began; empty if absent
    current: str | None = None  # the candidate holding the new state; None while untouched
    dropped: bool = False
    created: tuple[Column, ...] = ()  # the columns of a target created anew in the rewrite
    _names: itertools.count[int] = field(default_factory=itertools.count)

    def next_name(self, schema: str) -> str:
        return f"{schema}.{self.target.table}__{self.token}_{next(self._names)}"

    @property
    def touched(self) -> bool:
        return self.current is not None or self.dropped


class Rewriter:
    """Translates and runs the statements of one connection; see the module's description."""

    def __init__(self, host: RewriteHost) -> None:
        self.host = host
        self.scratch: dict[str, str] = {}  # the action's name (lower case) -> the real table
        self.rewrite: Rewrite | None = None

    # Scopes

    def begin(self, target: TargetObject, token: str) -> Rewrite:
        self.rewrite = Rewrite(target, token, self.host.table_columns(target.sql))
        return self.rewrite

    def end(self) -> None:
        """Forget the rewrite and drop a candidate that wasn't published."""
        rewrite, self.rewrite = self.rewrite, None
        if rewrite is not None and rewrite.current is not None:
            self._drop(rewrite.current)

    def drop_scratch_since(self, kept: set[str]) -> None:
        """Drop the scratch tables made since ``kept`` was the set of their names: what a
        rolled-back transaction would have taken with it."""
        for name in [name for name in self.scratch if name not in kept]:
            self._drop(self.scratch.pop(name))

    def columns(self, target: TargetObject) -> tuple[Column, ...] | None:
        """The columns the rewrite gives ``target`` now; None when it isn't rewritten."""
        rewrite = self.rewrite
        if rewrite is None or not _same(rewrite.target, target) or not rewrite.touched:
            return None
        return self.host.table_columns(rewrite.current) if rewrite.current else ()

    # Statements

    def execute(self, purpose: str, sql: str, params: Sequence[object]) -> int:
        tree = self._parse(sql, params)
        if isinstance(tree, exp.Update):
            return self._update(purpose, tree)
        if isinstance(tree, exp.Delete):
            return self._delete(purpose, tree)
        if isinstance(tree, exp.Insert):
            return self._insert(purpose, tree)
        if isinstance(tree, exp.Create) and tree.kind == "TABLE":
            return self._create(purpose, tree)
        if isinstance(tree, exp.Drop) and tree.kind == "TABLE":
            return self._drop_statement(purpose, tree)
        if isinstance(tree, exp.Alter):
            self._write_target(tree.this)
        self._send(purpose, self._renamed(tree))
        return -1

    def fetch(self, purpose: str, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self._send(purpose, self._renamed(self._parse(sql, params)))

    def _parse(self, sql: str, params: Sequence[object]) -> exp.Expr:
        try:
            tree = sqlglot.parse_one(sql, read=self.host.sqlglot_name)
        except ParseError as error:
            raise WarehouseError(
                f"etl-craft can't read its own statement for the {self.host.sqlglot_name} "
                f"warehouse ({error}); this is a bug, please report it with the statement:\n{sql}"
            ) from error
        return _inline(tree, params)

    def _send(self, purpose: str, tree: exp.Expr) -> list[tuple[Any, ...]]:
        return self.host.run_sql(purpose, self.host.adapt(tree).sql(self.host.sqlglot_name))

    def _sql(self, tree: exp.Expr) -> str:
        return self.host.adapt(tree).sql(self.host.sqlglot_name)

    def _renamed(self, tree: exp.Expr) -> exp.Expr:
        """The statement with scratch tables and the rewritten target named as they really are."""
        for table in list(tree.find_all(exp.Table)):
            real = self._real(table)
            if real is not None:
                table.replace(_table(real, table.args.get("alias")))
        return tree

    def _real(self, table: exp.Table) -> str | None:
        if not table.name:
            return None
        if not table.db and table.name.lower() in self.scratch:
            return self.scratch[table.name.lower()]
        rewrite = self.rewrite
        if rewrite is not None and rewrite.current and _names(table, rewrite.target):
            return rewrite.current
        return None

    def _real_of(self, table: exp.Expr) -> str:
        assert isinstance(table, exp.Table)
        real = self._real(table)
        return real if real is not None else _real_name(table)

    def _is_target(self, table: exp.Expr | None) -> bool:
        rewrite = self.rewrite
        return (
            rewrite is not None and isinstance(table, exp.Table) and _names(table, rewrite.target)
        )

    def _write_target(self, table: exp.Expr) -> None:
        """Before a write to the target: its candidate, copied from the target if there is none."""
        rewrite = self.rewrite
        if rewrite is None or not self._is_target(table) or rewrite.current is not None:
            return
        if rewrite.dropped:
            raise WarehouseError(f"{rewrite.target} was dropped by this attempt before a write")
        candidate = rewrite.next_name(self.host.scratch_schema)
        self.host.run_sql(
            f"copy {rewrite.target} into its candidate {candidate}",
            f"CREATE TABLE {candidate} AS SELECT * FROM {rewrite.target.sql}",
        )
        rewrite.current = candidate

    def _replace(self, old: str, new: str) -> None:
        """``new`` holds what ``old`` held, under the name statements use for ``old``."""
        if self.rewrite is not None and self.rewrite.current == old:
            self.rewrite.current = new
        elif old in self.scratch.values():
            self.scratch = {
                name: new if real == old else real for name, real in self.scratch.items()
            }
        else:
            # A table outside any rewrite (a script's, a test's): its new state takes its place.
            self.host.take_place(old, new)
            return
        self._drop(old)

    def _drop(self, table: str) -> None:
        self.host.run_sql(f"drop the replaced {table}", f"DROP TABLE IF EXISTS {table}")

    def _fresh(self, old: str) -> str:
        if self.rewrite is not None and self.rewrite.current == old:
            return self.rewrite.next_name(self.host.scratch_schema)
        return f"{old}__{next(_SUFFIXES)}"

    def _count(self, purpose: str, sql: str) -> int:
        rows = self.host.run_sql(purpose, sql)
        return int(rows[0][0] or 0) if rows else 0

    # UPDATE and DELETE as new states

    def _update(self, purpose: str, tree: exp.Update) -> int:
        table = tree.this
        self._write_target(table)
        real, alias = self._real_of(table), table.alias_or_name
        self._renamed(tree)
        where = tree.args.get("where")
        condition = where.this.sql(self.host.sqlglot_name) if where else "TRUE"
        sets = {
            assignment.this.name.lower(): assignment.expression for assignment in tree.expressions
        }
        columns = self.host.table_columns(real)
        source = tree.args.get("from_")
        if source is None:
            matched = f"SELECT COUNT(*) FROM {real} {alias} WHERE {condition}"
            relation = (
                f"(SELECT {alias}.*, COALESCE(({condition}), FALSE) AS {HIT} "
                f"FROM {real} {alias}) {alias}"
            )
            hit = f"{alias}.{HIT}"
        else:
            joined = self._sql(source.this)
            source_alias = source.this.alias_or_name
            matched = f"SELECT COUNT(*) FROM {real} {alias} JOIN {joined} ON {condition}"
            flagged = f"(SELECT {source_alias}.*, TRUE AS {HIT} FROM {joined})"
            relation = f"{real} {alias} LEFT JOIN {flagged} {source_alias} ON {condition}"
            hit = f"{source_alias}.{HIT} IS NOT NULL"
        values = []
        for column in columns:
            value = sets.get(column.key)
            if value is None:
                values.append(f"{alias}.{column.name}")
                continue
            rendered = self._sql(value)
            values.append(f"CASE WHEN {hit} THEN {rendered} ELSE {alias}.{column.name} END")
        count = self._count(f"{purpose}: count the rows it changes", self._adapted(matched))
        if count:
            names = [column.name for column in columns]
            select = ", ".join(f"{v} AS {n}" for v, n in zip(values, names, strict=True))
            self._recreate(purpose, real, f"SELECT {select} FROM {relation}")
        return count

    def _delete(self, purpose: str, tree: exp.Delete) -> int:
        table = tree.this
        self._write_target(table)
        real, alias = self._real_of(table), table.alias_or_name
        self._renamed(tree)
        where = tree.args.get("where")
        condition = where.this.sql(self.host.sqlglot_name) if where else "TRUE"
        matched = f"SELECT COUNT(*) FROM {real} {alias} WHERE {condition}"
        count = self._count(f"{purpose}: count the rows it removes", self._adapted(matched))
        if count:
            kept = f"SELECT {alias}.* FROM {real} {alias} WHERE NOT COALESCE(({condition}), FALSE)"
            self._recreate(purpose, real, kept)
        return count

    def _adapted(self, sql: str) -> str:
        return self._sql(sqlglot.parse_one(sql, read=self.host.sqlglot_name))

    def _recreate(self, purpose: str, old: str, select: str) -> None:
        new = self._fresh(old)
        self.host.run_sql(purpose, f"CREATE TABLE {new} AS {self._adapted(select)}")
        self._replace(old, new)

    # INSERT, CREATE and DROP

    def _insert(self, purpose: str, tree: exp.Insert) -> int:
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        self._write_target(table)
        real = self._real_of(table)
        self._renamed(tree)
        before = self._count(f"{purpose}: count the rows before", f"SELECT COUNT(*) FROM {real}")
        self._send(purpose, tree)
        after = self._count(f"{purpose}: count the rows after", f"SELECT COUNT(*) FROM {real}")
        return after - before

    def _create(self, purpose: str, tree: exp.Create) -> int:
        properties = tree.args.get("properties")
        temporary = properties is not None and any(
            isinstance(p, exp.TemporaryProperty) for p in properties.expressions
        )
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        if temporary:
            real = f"{self.host.scratch_schema}.{table.name}"
            self.scratch[table.name.lower()] = real
            tree.set("properties", None)
            self.host.run_sql(f"{purpose}: drop a leftover", f"DROP TABLE IF EXISTS {real}")
            table.replace(_table(real))
            self._send(purpose, self._renamed(tree))
            return -1
        rewrite = self.rewrite
        if rewrite is not None and self._is_target(table):
            candidate = rewrite.next_name(self.host.scratch_schema)
            table.replace(_table(candidate))
            self._send(purpose, self._renamed(tree))
            if rewrite.current is not None:
                self._drop(rewrite.current)
            rewrite.current, rewrite.dropped = candidate, True
            rewrite.created = self.host.table_columns(candidate)
            return -1
        self._send(purpose, self._renamed(tree))
        return -1

    def _drop_statement(self, purpose: str, tree: exp.Drop) -> int:
        # sqlglot lists a DROP's tables (DROP TABLE a, b); the actions drop one at a time.
        dropped = tree.args.get("tables") or [tree.this]
        table = dropped[0] if len(dropped) == 1 else None
        rewrite = self.rewrite
        if rewrite is not None and self._is_target(table):
            # Published with the rest: until then readers keep the table.
            if rewrite.current is not None:
                self._drop(rewrite.current)
            rewrite.current, rewrite.dropped, rewrite.created = None, True, ()
            return -1
        if isinstance(table, exp.Table) and not table.db:
            real = self.scratch.pop(table.name.lower(), None)
            if real is not None:
                self._drop(real)
                return -1
        self._send(purpose, self._renamed(tree))
        return -1


_SUFFIXES = itertools.count(1)


def _same(left: TargetObject, right: TargetObject) -> bool:
    return (left.schema.lower(), left.table.lower()) == (right.schema.lower(), right.table.lower())


def _names(table: exp.Table, target: TargetObject) -> bool:
    return (
        table.name.lower() == target.table.lower()
        and table.db.lower() == target.schema.lower()
        and (not table.catalog or not target.database or table.catalog == target.database)
    )


def _table(name: str, alias: exp.Expr | None = None) -> exp.Table:
    table = exp.to_table(name)
    if alias is not None:
        table.set("alias", alias)
    return table


def _real_name(table: exp.Table) -> str:
    return ".".join(part for part in (table.catalog, table.db, table.name) if part)


def _inline(tree: exp.Expr, params: Sequence[object]) -> exp.Expr:
    """Each ``?`` replaced by its value as a literal: the rewrite reorders a statement's parts."""
    # Depth first, children in the order they are written: the placeholders' textual order.
    placeholders = [node for node in tree.find_all(exp.Placeholder, bfs=False) if not node.this]
    if len(placeholders) != len(params):
        raise WarehouseError(
            f"a statement has {len(placeholders)} placeholder(s) but {len(params)} value(s)"
        )
    for node, value in zip(placeholders, params, strict=True):
        node.replace(_literal(value))
    return tree


def _literal(value: object) -> exp.Expr:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.true() if value else exp.false()
    if isinstance(value, int | float | Decimal):
        return exp.Literal.number(value)
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ")
        return exp.cast(exp.Literal.string(text), exp.DataType.build("TIMESTAMP"))
    if isinstance(value, date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    return exp.Literal.string(str(value))
