"""DuckDB warehouses: a database file or :memory:."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar, TextIO

import duckdb

from etl_craft.config.rules import MEMORY_DATABASE
from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.connection import Row, WarehouseConnection, lock_key
from etl_craft.warehouse.dialect import (
    Capabilities,
    Column,
    Dialect,
    QueryCancel,
    ReplaceStrategy,
    UpdateStrategy,
    Upsert,
)
from etl_craft.warehouse.fence import TransactionalPublisher
from etl_craft.warehouse.targets import TargetObject

_ISO = "'%Y-%m-%dT%H:%M:%S.%f'"


class DuckDBDialect(Dialect):
    name = "duckdb"
    sqlglot_name = "duckdb"
    placeholder = "?"
    capabilities: ClassVar[Capabilities] = Capabilities(
        transactions=True,
        update_strategy=UpdateStrategy.UPDATE_FROM,
        replace_strategy=ReplaceStrategy.TRANSACTIONAL,
        temporary_tables=True,
        identifier_case=None,
        index_stage=False,
        cross_database=True,
        query_cancel=QueryCancel.CONNECTION,
        hash_record=True,
        upsert=Upsert.INSERT_THEN_UPDATE,
    )

    def columns_query(self, target: TargetObject) -> tuple[str, list[object]]:
        # DuckDB keeps names as written and matches them case-insensitively.
        sql = (
            "SELECT column_name, data_type FROM duckdb_columns()\n"
            "WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?)\n"
            "  AND lower(table_name) = lower(?)\n"
            "ORDER BY column_index"
        )
        return sql, [target.database, target.schema, target.table]

    def comments_query(self, target: TargetObject) -> tuple[str, list[object]]:
        where = (
            "WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?)\n"
            "  AND lower(table_name) = lower(?) AND comment IS NOT NULL"
        )
        sql = (
            f"SELECT NULL, comment FROM duckdb_tables()\n{where}\n"
            f"UNION ALL\nSELECT column_name, comment FROM duckdb_columns()\n{where}"
        )
        names = [target.database, target.schema, target.table]
        return sql, [*names, *names]

    def stage_columns_query(self, stage: str) -> tuple[str, list[object]]:
        # The stage was just created, so DESCRIBE can't miss it; duckdb_columns() would scan
        # every column of every table in the catalog for the same answer, at several times
        # the cost. The types read the same in both.
        return f"SELECT column_name, column_type FROM (DESCRIBE temp.main.{stage})", []

    def render_type(self, generic: str) -> str:
        return generic  # etl-craft's own types are written in this warehouse's terms

    def timestamp_text(self, expression: str, *, zoned: bool) -> str:
        value = f"timezone('UTC', {expression})" if zoned else f"CAST({expression} AS TIMESTAMP)"
        return f"strftime({value}, {_ISO})"

    def date_text(self, expression: str) -> str:
        return f"strftime({expression}, '%Y-%m-%d')"


class DuckDBConnection(WarehouseConnection):
    dialect = DuckDBDialect()
    publisher = TransactionalPublisher()

    def __init__(self, path: str) -> None:
        self._open_lock = None if path == MEMORY_DATABASE else _acquire_file(Path(path))
        try:
            self._conn = duckdb.connect(path)
        except duckdb.Error as error:
            self._release()
            raise WarehouseError(f"can't open the DuckDB warehouse {path}: {error}") from error
        self._conn.execute("SET TimeZone = 'UTC'")
        # Read once: etl-craft never runs USE, and every target is resolved against it, so a
        # round trip per resolution would cost each action several for the same answer.
        self._database = str(self._conn.execute("SELECT current_database()").fetchall()[0][0])
        # An in-memory database belongs to this connection alone: no other writer to exclude.
        self._lock_folder = None if path == MEMORY_DATABASE else Path(path).resolve().parent
        self._lock_prefix = Path(path).name

    def current_database(self) -> str:
        return self._database

    def describe_select(self, sql: str) -> tuple[Column, ...] | None:
        # DESCRIBE binds the query without running it, and names the types a CREATE TABLE AS
        # of it gives its columns.
        rows = self.fetch_all(
            "describe the SELECT",
            f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM (\n{sql}\n) etl_src)",
        )
        return tuple(Column(str(name), str(kind)) for name, kind in rows)

    def interrupt(self) -> str:
        # DuckDB runs in this process: the interrupted statement ends before this returns its
        # error to the thread that sent it.
        self._conn.interrupt()
        return "interrupted the DuckDB statement running in this process"

    def close(self) -> None:
        self._conn.close()
        self._release()

    def _release(self) -> None:
        if self._open_lock is not None:
            _release_file(self._open_lock)
            self._open_lock = None

    def _execute(self, sql: str, params: Sequence[object]) -> int:
        cursor = self._run(sql, params)
        return int(cursor.rowcount)

    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]:
        return self._run(sql, params).fetchall()

    def _run(self, sql: str, params: Sequence[object]) -> duckdb.DuckDBPyConnection:
        try:
            return self._conn.execute(sql, list(params) if params else None)
        except duckdb.Error as error:
            raise WarehouseError(f"DuckDB refused a statement: {error}") from error

    def _begin(self) -> None:
        self._run("BEGIN TRANSACTION", ())

    def _commit(self) -> None:
        # DuckDB reports write-write conflicts here, at commit.
        self._run("COMMIT", ())

    def _rollback(self) -> None:
        # DuckDB has already rolled back a transaction that failed to commit.
        with contextlib.suppress(duckdb.Error):
            self._conn.execute("ROLLBACK")

    def lock_schema(self, schema: str) -> None:
        pass  # one writer at a time holds the database file: no other can create it meanwhile

    @contextmanager
    def _target_lock(self, target: TargetObject) -> Iterator[None]:
        # Taken before BEGIN: DuckDB's snapshot starts with the transaction, so a writer that
        # began before the previous holder committed would read a stale MAX(ROW_ID).
        if self._lock_folder is None:
            with self.transaction():
                yield
            return
        digest = hashlib.sha256(lock_key(self.resolve(target)).encode()).hexdigest()[:16]
        path = self._lock_folder / f".{self._lock_prefix}.etl-craft-{digest}.lock"
        with path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                with self.transaction():
                    yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


# DuckDB lets one process at a time open a database file for writing. Task processes and
# scripts therefore queue for it on a lock file; opens within one process share the hold.
_HOLDS: dict[Path, tuple[TextIO, int]] = {}
_HOLDS_GUARD = threading.Lock()


def _acquire_file(path: Path) -> Path:
    key = path.resolve()
    with _HOLDS_GUARD:
        held = _HOLDS.get(key)
        if held is not None:
            _HOLDS[key] = (held[0], held[1] + 1)
            return key
        handle = (key.parent / f".{key.name}.etl-craft-open.lock").open("a")
        fcntl.flock(handle, fcntl.LOCK_EX)
        _HOLDS[key] = (handle, 1)
        return key


def _release_file(key: Path) -> None:
    with _HOLDS_GUARD:
        handle, count = _HOLDS[key]
        if count > 1:
            _HOLDS[key] = (handle, count - 1)
            return
        del _HOLDS[key]
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
