"""PostgreSQL warehouses through psycopg 3."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import psycopg
from psycopg.pq.abc import PGresult
from sqlalchemy.engine import make_url

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.connection import Row, WarehouseConnection, lock_key, schema_lock_key
from etl_craft.warehouse.dialect import (
    Capabilities,
    Column,
    Dialect,
    IdentifierCase,
    QueryCancel,
    ReplaceStrategy,
    UpdateStrategy,
)
from etl_craft.warehouse.fence import TransactionalPublisher
from etl_craft.warehouse.targets import TargetObject

_ISO = "'YYYY-MM-DD\"T\"HH24:MI:SS.US'"


class PostgreSQLDialect(Dialect):
    name = "postgresql"
    sqlglot_name = "postgres"
    placeholder = "%s"
    capabilities: ClassVar[Capabilities] = Capabilities(
        transactions=True,
        update_strategy=UpdateStrategy.UPDATE_FROM,
        replace_strategy=ReplaceStrategy.TRANSACTIONAL,
        temporary_tables=True,
        identifier_case=IdentifierCase.LOWER,
        index_stage=True,
        cross_database=False,
        query_cancel=QueryCancel.CONNECTION,
        hash_record=True,
        writable_ctes=True,
    )

    def columns_query(self, target: TargetObject) -> tuple[str, list[object]]:
        # Unquoted names fold to lower case, so the folded name is the catalog's exact name.
        sql = (
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod)\n"
            "FROM pg_catalog.pg_attribute a\n"
            "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid\n"
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n"
            "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')\n"
            "  AND a.attnum > 0 AND NOT a.attisdropped\n"
            "ORDER BY a.attnum"
        )
        return sql, [target.schema.lower(), target.table.lower()]

    def comments_query(self, target: TargetObject) -> tuple[str, list[object]]:
        sql = (
            "SELECT NULL, obj_description(c.oid, 'pg_class')\n"
            "FROM pg_catalog.pg_class c\n"
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n"
            "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')\n"
            "  AND obj_description(c.oid, 'pg_class') IS NOT NULL\n"
            "UNION ALL\n"
            "SELECT a.attname, col_description(c.oid, a.attnum)\n"
            "FROM pg_catalog.pg_attribute a\n"
            "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid\n"
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace\n"
            "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')\n"
            "  AND a.attnum > 0 AND NOT a.attisdropped\n"
            "  AND col_description(c.oid, a.attnum) IS NOT NULL"
        )
        names = [target.schema.lower(), target.table.lower()]
        return sql, [*names, *names]

    def stage_columns_query(self, stage: str) -> tuple[str, list[object]]:
        sql = (
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod)\n"
            "FROM pg_catalog.pg_attribute a\n"
            "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped\n"
            "ORDER BY a.attnum"
        )
        return sql, [f"pg_temp.{stage}"]

    def render_type(self, generic: str) -> str:
        return generic  # etl-craft's own types are written in this warehouse's terms

    def timestamp_text(self, expression: str, *, zoned: bool) -> str:
        value = f"({expression}) AT TIME ZONE 'UTC'" if zoned else expression
        return f"to_char({value}, {_ISO})"

    def date_text(self, expression: str) -> str:
        return f"to_char({expression}, 'YYYY-MM-DD')"

    def same_text(self, left: str, right: str) -> str:
        # "C" compares bytes; a column's own collation may be case-insensitive.
        return f'{left} COLLATE "C" IS NOT DISTINCT FROM {right} COLLATE "C"'


class PostgreSQLConnection(WarehouseConnection):
    dialect = PostgreSQLDialect()
    publisher = TransactionalPublisher()

    def __init__(self, url: str) -> None:
        plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        try:
            self._conn: psycopg.Connection[Row] = psycopg.connect(plain, autocommit=True)
        except psycopg.Error as error:
            raise WarehouseError(f"can't connect to the PostgreSQL warehouse: {error}") from error
        # Pinned so timestamps read and hashed the same whatever the server's default zone.
        self._conn.execute("SET TIME ZONE 'UTC'")
        # The last read's result when it had no rows: describe_select names its columns.
        self._described: PGresult | None = None

    def current_database(self) -> str:
        return str(self._conn.info.dbname)

    def describe_select(self, sql: str) -> tuple[Column, ...] | None:
        # Planned and stopped at LIMIT 0: its result names each column's type and modifier,
        # which a CREATE TABLE AS of the SELECT gives its columns, with no temporary table
        # written to the catalog and dropped again.
        self.fetch_all("describe the SELECT", f"SELECT * FROM (\n{sql}\n) etl_src LIMIT 0")
        result = self._described
        if result is None:
            return None
        fields = range(result.nfields)
        encoding = self._conn.info.encoding
        names = [(result.fname(index) or b"").decode(encoding) for index in fields]
        rows = self.fetch_all(
            "name the SELECT's column types",
            "SELECT format_type(t.type, t.modifier)\n"
            "FROM unnest(%s::oid[], %s::int[]) WITH ORDINALITY AS t(type, modifier, position)\n"
            "ORDER BY t.position",
            [[result.ftype(index) for index in fields], [result.fmod(index) for index in fields]],
        )
        return tuple(Column(name, str(kind)) for name, (kind,) in zip(names, rows, strict=True))

    def interrupt(self) -> str:
        backend = self._conn.info.backend_pid
        try:
            # The cancel request travels on a connection of its own, so it reaches a server
            # whose session is busy with the statement it stops.
            self._conn.cancel_safe(timeout=5.0)
        except psycopg.Error as error:
            return (
                f"couldn't ask PostgreSQL to cancel the statement of backend {backend} ({error}): "
                "it may still run; pg_cancel_backend({backend}) stops it"
            )
        return f"asked PostgreSQL to cancel the statement of backend {backend}"

    def close(self) -> None:
        self._conn.close()

    def _execute(self, sql: str, params: Sequence[object]) -> int:
        return self._run(sql, params).rowcount

    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]:
        cursor = self._run(sql, params)
        result = cursor.pgresult
        # Only a result with no rows is kept: it holds no data, and describe_select reads it.
        self._described = result if result is not None and result.ntuples == 0 else None
        return cursor.fetchall()

    def _run(self, sql: str, params: Sequence[object]) -> psycopg.Cursor[Row]:
        # Without parameters psycopg leaves '%' alone, which a user's SELECT may contain.
        try:
            return self._conn.execute(sql, list(params) if params else None)
        except psycopg.Error as error:
            raise WarehouseError(f"PostgreSQL refused a statement: {error}") from error

    def _begin(self) -> None:
        self._run("BEGIN", ())

    def _commit(self) -> None:
        self._run("COMMIT", ())

    def _rollback(self) -> None:
        # Best effort, so the error that caused the rollback is the one reported.
        with contextlib.suppress(psycopg.Error):
            self._conn.execute("ROLLBACK")

    @contextmanager
    def _target_lock(self, target: TargetObject) -> Iterator[None]:
        # A transaction-scoped advisory lock: released by the commit or rollback itself.
        with self.transaction():
            self.execute(
                f"lock {target} for mutation",
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                [lock_key(self.resolve(target))],
            )
            yield

    def lock_schema(self, schema: str) -> None:
        # Two transactions running CREATE SCHEMA IF NOT EXISTS at once: the second fails on
        # pg_namespace's unique index. Held to commit, so the second sees the schema and skips.
        self.execute(
            f"lock schema {schema} for creation",
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [schema_lock_key(schema)],
        )

    def raw(self) -> psycopg.Connection[Any]:
        return self._conn
