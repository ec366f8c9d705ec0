"""A warehouse connection: logged statements, explicit transactions and target mutation locks."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.dialect import Column, Comments, Dialect
from etl_craft.warehouse.targets import TargetObject

if TYPE_CHECKING:
    from etl_craft.warehouse.publication import Publisher

log = logging.getLogger("etl_craft.warehouse")

Row = tuple[Any, ...]


class WarehouseConnection(ABC):
    dialect: Dialect
    publisher: ClassVar[Publisher]

    def execute(self, purpose: str, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; return its row count (-1 where the warehouse reports none)."""
        started = time.perf_counter()
        log.debug("%s:\n%s", purpose, sql)
        with _in_flight(self):
            count = self._execute(sql, params)
        log.info("%s: %s row(s) in %.1f ms", purpose, count, _elapsed_ms(started))
        return count

    def fetch_all(self, purpose: str, sql: str, params: Sequence[object] = ()) -> list[Row]:
        started = time.perf_counter()
        log.debug("%s:\n%s", purpose, sql)
        with _in_flight(self):
            rows = self._fetch_all(sql, params)
        log.info("%s: %d row(s) read in %.1f ms", purpose, len(rows), _elapsed_ms(started))
        return rows

    def fetch_value(self, purpose: str, sql: str, params: Sequence[object] = ()) -> Any:
        rows = self.fetch_all(purpose, sql, params)
        return rows[0][0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One warehouse transaction: committed when the block ends, rolled back when it raises."""
        self._begin()
        try:
            yield
            self._commit()
        except BaseException:
            self._rollback()
            raise

    @contextmanager
    def mutation(self, target: TargetObject) -> Iterator[None]:
        """A transaction holding the target's mutation lock from before its first read to commit."""
        with self._target_lock(target):
            yield

    @contextmanager
    def rehearsal(self, target: TargetObject | None = None) -> Iterator[None]:
        """A transaction rolled back however the block ends: writes seen from inside, then undone.

        Naming ``target`` holds its mutation lock as a real write would, so the block sees the
        target as the next write would find it.
        """
        try:
            with self.mutation(target) if target is not None else self.transaction():
                yield
                raise _Undo
        except _Undo:
            pass

    @abstractmethod
    def lock_schema(self, schema: str) -> None:
        """Inside a transaction: hold off other writers creating ``schema`` until it commits."""

    def columns(self, target: TargetObject) -> tuple[Column, ...]:
        sql, params = self.dialect.columns_query(self.resolve(target))
        rows = self.fetch_all(f"read the columns of {target}", sql, params)
        return tuple(Column(str(name), str(kind)) for name, kind in rows)

    def comments(self, target: TargetObject) -> Comments:
        sql, params = self.dialect.comments_query(self.resolve(target))
        rows = self.fetch_all(f"read the comments of {target}", sql, params)
        table = next((str(text) for name, text in rows if name is None), None)
        columns = {str(name).lower(): str(text) for name, text in rows if name is not None}
        return Comments(table, columns)

    def stage_columns(self, stage: str) -> tuple[Column, ...]:
        sql, params = self.dialect.stage_columns_query(stage)
        rows = self.fetch_all(f"read the columns of {stage}", sql, params)
        return tuple(Column(str(name), str(kind)) for name, kind in rows)

    def describe_select(self, sql: str) -> tuple[Column, ...] | None:
        """The columns ``sql`` returns, with the types a table created from it would get, read
        without running it or creating anything; None where the warehouse can't tell them
        exactly that way (the caller stages the SELECT and reads the stage's columns)."""
        return None

    def numbered_columns(self, target: TargetObject) -> frozenset[str]:
        """Lower-case names of the columns the warehouse numbers itself (identity columns):
        inserts leave them out. Only warehouses with Capabilities.identity_columns have any."""
        return frozenset()

    def exists(self, target: TargetObject) -> bool:
        return bool(self.columns(target))

    def resolve(self, target: TargetObject) -> TargetObject:
        """The target with its database named, refused where the warehouse can't reach it."""
        current = self.current_database()
        if target.database is None:
            return TargetObject(target.schema, target.table, current)
        elsewhere = target.database.lower() != current.lower()
        if elsewhere and not self.dialect.capabilities.cross_database:
            raise WarehouseError(
                f"TARGET_OBJECT {target} names the database {target.database}, but this "
                f"{self.dialect.name} connection is in {current} and can't write another database; "
                f"point the warehouse profile at {target.database} or write schema.table"
            )
        return target

    def interrupt(self) -> str:
        """From another thread: stop the statement this connection runs now, in the warehouse.

        Returns what was done, for the attempt's log. Dialects that can't cancel say so, and
        that the statement may run on.
        """
        return (
            f"the {self.dialect.name} warehouse has no way to cancel a running statement: the "
            "statement this attempt sent may still run there until it ends"
        )

    @abstractmethod
    def current_database(self) -> str: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[object]) -> int: ...

    @abstractmethod
    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]: ...

    @abstractmethod
    def _begin(self) -> None: ...

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _rollback(self) -> None: ...

    @abstractmethod
    def _target_lock(self, target: TargetObject) -> AbstractContextManager[None]: ...

    def __enter__(self) -> WarehouseConnection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# The connections of this process with a statement running now: what a cancel interrupts.
_RUNNING: set[WarehouseConnection] = set()
_RUNNING_GUARD = threading.Lock()


@contextmanager
def _in_flight(conn: WarehouseConnection) -> Iterator[None]:
    with _RUNNING_GUARD:
        _RUNNING.add(conn)
    try:
        yield
    finally:
        with _RUNNING_GUARD:
            _RUNNING.discard(conn)


def interrupt_running() -> list[str]:
    """From any thread: stop every warehouse statement this process runs now; what was done."""
    with _RUNNING_GUARD:
        running = list(_RUNNING)
    return [conn.interrupt() for conn in running]


class _Undo(Exception):  # noqa: N818 - a signal, not an error
    """Ends a rehearsal's transaction through the rollback path."""


def lock_key(target: TargetObject) -> str:
    return f"etl_craft.target:{target.sql.lower()}"


def schema_lock_key(schema: str) -> str:
    return f"etl_craft.schema:{schema.lower()}"


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
