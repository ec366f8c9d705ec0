"""Iceberg tables through a DuckDB engine: each statement runs on working copies of the tables
it names, and what it changed is committed back to the catalog as Iceberg snapshots.

A table the statement names is copied from its current snapshot (pyiceberg's scan, streamed as
Arrow record batches) into the connection's in-memory DuckDB, so the SQL actions, written for
DuckDB, run on it unchanged. Outside a transaction each statement's changes are committed at
once; inside one they are committed together when it commits, one snapshot per table, and the
DuckDB transaction is rolled back if the catalog refuses. The publication (publisher.py) adds
the attempt's fence and counts to that commit.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import duckdb
import psycopg
import sqlglot
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.pyarrow import _check_pyarrow_schema_compatible, _dataframe_to_data_files
from pyiceberg.table import Table, TableProperties, Transaction
from pyiceberg.table.snapshots import ancestors_of
from sqlglot import exp

from etl_craft.core.errors import StaleTransitionError, WarehouseError
from etl_craft.warehouse.connection import Row, WarehouseConnection, lock_key
from etl_craft.warehouse.dialect import Capabilities, Publication, QueryCancel
from etl_craft.warehouse.duckdb import DuckDBDialect
from etl_craft.warehouse.iceberg.catalog import IcebergSettings, ensure_namespace, load
from etl_craft.warehouse.iceberg.publisher import (
    ATTEMPT_ID,
    TASK_RUN_ID,
    SnapshotPublisher,
    Stamp,
    record_in_ledger,
)
from etl_craft.warehouse.targets import TargetObject

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog

    from etl_craft.warehouse.publication import Fence

log = logging.getLogger("etl_craft.warehouse")

# Schemas of the engine itself: names in them are never Iceberg tables.
_ENGINE_SCHEMAS = frozenset({"main", "temp", "information_schema", "pg_catalog", "memory"})
_SOURCES = itertools.count(1)

Key = tuple[str, str]  # (namespace, table), lower case as the catalog keeps them


class IcebergDialect(DuckDBDialect):
    """DuckDB's SQL (the engine runs every statement); snapshots publish the result."""

    name = "iceberg"
    capabilities: ClassVar[Capabilities] = Capabilities(
        transactions=True,
        update_strategy=DuckDBDialect.capabilities.update_strategy,
        replace_strategy=DuckDBDialect.capabilities.replace_strategy,
        temporary_tables=True,
        identifier_case=None,
        index_stage=False,
        cross_database=False,
        publication=Publication.SNAPSHOT,
        query_cancel=QueryCancel.CONNECTION,
    )


@dataclass
class _Copy:
    """A table of the catalog as copied into the engine."""

    metadata_location: str
    snapshot_id: int | None


@dataclass
class _Change:
    """What statements did to one table since its last commit."""

    created: bool = False  # (re)created in the engine: its whole content and schema are new
    dropped: bool = False
    rewritten: bool = False  # rows updated or deleted: the whole table is written again
    # Rows appended since: their DuckDB rowid is above this one.
    appended_after: int | None = None
    comments: dict[str | None, str] = field(default_factory=dict)


class IcebergConnection(WarehouseConnection):
    dialect = IcebergDialect()
    publisher = SnapshotPublisher()

    def __init__(self, settings: IcebergSettings) -> None:
        self.settings = settings
        self.catalog: Catalog = settings.open()
        self._engine = duckdb.connect(":memory:")
        self._engine.execute("SET TimeZone = 'UTC'")
        self._copies: dict[Key, _Copy] = {}
        self._changes: dict[Key, _Change] = {}
        self._in_transaction = False
        self._copies_before: dict[Key, _Copy] = {}
        self._fresh: set[Key] = set()  # copies checked against the catalog in this transaction
        self.stamp: Stamp | None = None
        # The snapshot each table's last commit from this connection made.
        self.committed: dict[Key, int | None] = {}

    # -- the interface -------------------------------------------------------------------------

    def current_database(self) -> str:
        return "memory"

    def interrupt(self) -> str:
        self._engine.interrupt()
        return "interrupted the DuckDB statement running in this process"

    def close(self) -> None:
        self._engine.close()
        dispose = getattr(self.catalog, "engine", None)
        if dispose is not None:
            dispose.dispose()

    def lock_schema(self, schema: str) -> None:
        pass  # namespaces are created idempotently in the catalog

    def columns(self, target: TargetObject) -> tuple[Any, ...]:
        self._refresh(_key(target.schema, target.table))
        return super().columns(target)

    def comments(self, target: TargetObject) -> Any:
        self._refresh(_key(target.schema, target.table))
        return super().comments(target)

    def _execute(self, sql: str, params: Sequence[object]) -> int:
        count, _ = self._statement(sql, params, fetch=False)
        return count

    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]:
        _, rows = self._statement(sql, params, fetch=True)
        return rows

    def _begin(self) -> None:
        self._run("BEGIN TRANSACTION", ())
        self._in_transaction = True
        self._copies_before = dict(self._copies)
        self._fresh = set()

    def _commit(self) -> None:
        # The catalog first: if it refuses, the engine's transaction is rolled back with it.
        self._publish()
        self._run("COMMIT", ())
        self._in_transaction = False

    def _rollback(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self._engine.execute("ROLLBACK")
        self._in_transaction = False
        self._copies = self._copies_before
        self._changes.clear()

    @contextmanager
    def _target_lock(self, target: TargetObject) -> Iterator[None]:
        with self.writer_lock(target), self.transaction():
            yield

    @contextmanager
    def writer_lock(self, target: TargetObject) -> Iterator[None]:
        """Writers of one target queue here, so a merge's MAX(ROW_ID) and its base snapshot stay
        current until it commits; the commit still asserts its base (a writer elsewhere)."""
        key = lock_key(self.resolve(target))
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        if self.settings.lock_folder is not None:
            path = self.settings.lock_folder / f".etl-craft-iceberg-{digest}.lock"
            with path.open("a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
            return
        assert self.settings.lock_url is not None
        number = int(digest[:15], 16)
        with psycopg.connect(self.settings.lock_url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", [number])
            yield

    # -- statements ----------------------------------------------------------------------------

    def _statement(
        self, sql: str, params: Sequence[object], *, fetch: bool
    ) -> tuple[int, list[Row]]:
        parsed = _parse(sql)
        if isinstance(parsed, exp.Create) and str(parsed.args.get("kind")).upper() == "SCHEMA":
            self._create_namespace(parsed)
        appended_after = None
        if parsed is not None:
            for key in _tables(parsed):
                self._refresh(key)
            appended_after = self._last_row(parsed)
        cursor = self._run(sql, params)
        rows = cursor.fetchall() if fetch else []
        count = int(cursor.rowcount) if not fetch else len(rows)
        if parsed is not None:
            self._note(parsed, count, appended_after)
        if not self._in_transaction and self._changes:
            try:
                self._publish()
            except BaseException:
                self._forget_all()
                raise
        return count, rows

    def _run(self, sql: str, params: Sequence[object]) -> duckdb.DuckDBPyConnection:
        try:
            return self._engine.execute(sql, list(params) if params else None)
        except duckdb.Error as error:
            raise WarehouseError(
                f"DuckDB (the Iceberg engine) refused a statement: {error}"
            ) from error

    def _create_namespace(self, statement: exp.Create) -> None:
        name = statement.this.name if isinstance(statement.this, exp.Table) else ""
        namespace = (
            (statement.this.db or name).lower() if isinstance(statement.this, exp.Table) else ""
        )
        if namespace:
            ensure_namespace(self.catalog, namespace)

    def _refresh(self, key: Key) -> None:
        """Make the engine's copy of ``key`` the catalog's current table (or none)."""
        if key[0] in _ENGINE_SCHEMAS or not key[1]:
            return
        if self._in_transaction and key in self._fresh:
            return  # one transaction reads one snapshot of each table
        if key in self._changes:
            return  # written and not yet committed: the commit checks its base
        table = load(self.catalog, *key)
        copy = self._copies.get(key)
        if table is None:
            if copy is not None:
                self._run(f"DROP TABLE IF EXISTS {_name(key)}", ())
                del self._copies[key]
        elif copy is None or copy.metadata_location != table.metadata_location:
            self._copy(key, table)
        if self._in_transaction:
            self._fresh.add(key)

    def _copy(self, key: Key, table: Table) -> None:
        reader = table.scan().to_arrow_batch_reader()
        source = f"etl_craft_scan_{next(_SOURCES)}"
        self._run(f'CREATE SCHEMA IF NOT EXISTS "{key[0]}"', ())
        self._run(f"DROP TABLE IF EXISTS {_name(key)}", ())
        self._engine.register(source, reader)
        try:
            self._run(f"CREATE TABLE {_name(key)} AS SELECT * FROM {source}", ())
        finally:
            self._engine.unregister(source)
        comment = table.properties.get("comment")
        if comment is not None:
            self._run(f"COMMENT ON TABLE {_name(key)} IS {_text(comment)}", ())
        for column in table.schema().fields:
            if column.doc:
                self._run(
                    f'COMMENT ON COLUMN {_name(key)}."{column.name}" IS {_text(column.doc)}', ()
                )
        snapshot = table.current_snapshot()
        self._copies[key] = _Copy(
            table.metadata_location, snapshot.snapshot_id if snapshot else None
        )

    def _last_row(self, statement: exp.Expression) -> int | None:
        if not isinstance(statement, exp.Insert):
            return None
        key = _written(statement)
        if key is None or key not in self._copies:
            return None
        found = self._run(f"SELECT COALESCE(MAX(rowid), -1) FROM {_name(key)}", ()).fetchall()
        return int(found[0][0])

    def _note(self, statement: exp.Expression, count: int, appended_after: int | None) -> None:
        key = _written(statement)
        if key is None:
            return
        change = self._changes.setdefault(key, _Change())
        if isinstance(statement, exp.Insert):
            if appended_after is None:
                change.rewritten = True
            elif change.appended_after is None:
                change.appended_after = appended_after
        elif isinstance(statement, exp.Update | exp.Delete):
            change.rewritten = change.rewritten or count != 0
        elif isinstance(statement, exp.Create):
            change.created, change.dropped = True, False
        elif isinstance(statement, exp.Drop):
            change.created, change.dropped = False, True
        elif isinstance(statement, exp.Comment):
            column = statement.this if isinstance(statement.this, exp.Column) else None
            text = statement.expression.name if statement.expression is not None else ""
            change.comments[column.name if column is not None else None] = text
        # ALTER TABLE and anything else: the schema is compared when the change is committed.

    def _forget_all(self) -> None:
        """After a refused autocommit: drop the copies, so the next statement reads the catalog."""
        for key in list(self._copies):
            with contextlib.suppress(WarehouseError):
                self._run(f"DROP TABLE IF EXISTS {_name(key)}", ())
        self._copies.clear()
        self._changes.clear()

    # -- commits -------------------------------------------------------------------------------

    def _publish(self) -> None:
        """Commit every changed table, and the stamp's target even when unchanged."""
        stamp = self.stamp
        changes = dict(self._changes)
        unrecorded = False
        if stamp is not None and stamp.target is not None and stamp.target not in changes:
            if stamp.target in self._copies:
                changes[stamp.target] = _Change()  # an empty snapshot carries the counts
            else:
                unrecorded = True
        tables = {key: load(self.catalog, *key) for key in changes}
        if stamp is not None:
            for table in tables.values():
                if table is not None:
                    refuse_stale(table, stamp.fence)
        for key, change in changes.items():
            self._commit_table(key, change, tables[key], stamp)
        self._changes.clear()
        if unrecorded and stamp is not None:
            record_in_ledger(self.catalog, stamp.fence.ledger_schema, stamp.properties)

    def _commit_table(
        self, key: Key, change: _Change, table: Table | None, stamp: Stamp | None
    ) -> None:
        properties = stamp.properties if stamp is not None else {}
        copy = self._copies.get(key)
        if table is not None and not (change.created and copy is None):
            self._assert_base(key, table, copy)
        if change.dropped:
            if table is not None:
                self.catalog.drop_table(key)
                if stamp is not None and key == stamp.target:
                    record_in_ledger(self.catalog, stamp.fence.ledger_schema, stamp.properties)
            self._copies.pop(key, None)
            self.committed[key] = None
            return
        schema = self._engine.sql(f"SELECT * FROM {_name(key)} LIMIT 0").to_arrow_table().schema
        if table is None:
            ensure_namespace(self.catalog, key[0])
            transaction: Transaction = self.catalog.create_table_transaction(key, schema=schema)
            transaction.append(self._rows(key), snapshot_properties=properties)
        else:
            transaction = without_retries(table)
            if change.created and not _replace_schema(transaction, schema):
                # No schema change turns the old columns into the new: replace the table. Readers
                # between the drop and the create find no table.
                self.catalog.drop_table(key)
                self._copies.pop(key, None)
                self._commit_table(key, change, None, stamp)
                return
            _evolve(transaction, schema, change)
            if change.created or change.rewritten:
                _replace_rows(transaction, table, self._rows(key), properties)
            elif change.appended_after is not None:
                where = f"rowid > {change.appended_after}"
                transaction.append(self._rows(key, where), snapshot_properties=properties)
            elif stamp is not None:
                transaction.append(self._rows(key, "false"), snapshot_properties=properties)
        self._finish(key, transaction, stamp)

    def _rows(self, key: Key, where: str = "") -> Any:
        clause = f" WHERE {where}" if where else ""
        return self._engine.sql(f"SELECT * FROM {_name(key)}{clause}").to_arrow_table()

    def _finish(self, key: Key, transaction: Transaction, stamp: Stamp | None) -> None:
        try:
            table = transaction.commit_transaction()
        except CommitFailedException as error:
            current = load(self.catalog, *key)
            if current is not None and stamp is not None:
                refuse_stale(current, stamp.fence)
            raise WarehouseError(
                f"the Iceberg table {'.'.join(key)} changed while this write committed ({error}); "
                "another writer committed first. Nothing of this write is visible: run it again"
            ) from error
        snapshot = table.current_snapshot()
        snapshot_id = snapshot.snapshot_id if snapshot else None
        self._copies[key] = _Copy(table.metadata_location, snapshot_id)
        self.committed[key] = snapshot_id
        # The attempt's log names its snapshot: the one `etl-craft restore` and time travel use.
        log.info("committed snapshot %s of the Iceberg table %s", snapshot_id, ".".join(key))

    def _assert_base(self, key: Key, table: Table, copy: _Copy | None) -> None:
        current = table.current_snapshot()
        current_id = current.snapshot_id if current else None
        base = copy.snapshot_id if copy is not None else None
        if copy is None or current_id != base:
            raise WarehouseError(
                f"the Iceberg table {'.'.join(key)} is at snapshot {current_id}, but this write "
                f"was computed from snapshot {base}: another writer committed meanwhile. Nothing "
                "of this write is visible: run it again"
            )


def refuse_stale(table: Table, fence: Fence) -> None:
    """StaleTransitionError when a later attempt of the fence's task run committed to the table."""
    for snapshot in ancestors_of(table.current_snapshot(), table.metadata):
        summary = snapshot.summary
        if summary is None or summary.get(TASK_RUN_ID) != str(fence.task_run_id):
            continue
        holder = int(summary.get(ATTEMPT_ID) or 0)
        if holder > fence.attempt_id:
            raise StaleTransitionError(
                f"attempt {fence.attempt_id} of task run {fence.task_run_id} is refused its "
                f"warehouse commit: the later attempt {holder} of the same task run has already "
                f"published snapshot {snapshot.snapshot_id} of {table.name()[-1]}, and its result "
                f"stands; attempt {fence.attempt_id} wrote nothing (no snapshot was committed). "
                "Nothing to repair: this happens when a paused or cut-off attempt resumes after "
                "its retry"
            )
        return  # the newest snapshot of this task run decides


def without_retries(table: Table) -> Transaction:
    """A transaction whose commit is tried once: pyiceberg would otherwise retry it on top of
    a newer snapshot, past the base this write was computed from and past the fence."""
    properties = {**table.metadata.properties, TableProperties.COMMIT_NUM_RETRIES: "0"}
    local = Table(
        table._identifier,
        table.metadata.model_copy(update={"properties": properties}),
        table.metadata_location,
        table.io,
        table.catalog,
    )
    return local.transaction()


def _replace_rows(
    transaction: Transaction, table: Table, rows: Any, properties: dict[str, str]
) -> None:
    """One OVERWRITE snapshot: every current data file out, the new rows' files in.

    pyiceberg's own overwrite commits a DELETE snapshot and then an APPEND one: readers of the
    history (time travel, restore) would find a moment with an empty table.
    """
    _check_pyarrow_schema_compatible(
        transaction.table_metadata.schema(),
        provided_schema=rows.schema,
        format_version=transaction.table_metadata.format_version,
    )
    snapshot = transaction.update_snapshot(snapshot_properties=properties)
    with snapshot.overwrite() as overwrite:
        for task in table.scan().plan_files():
            overwrite.delete_data_file(task.file)
        if rows.num_rows:
            written = _dataframe_to_data_files(
                table_metadata=transaction.table_metadata,
                write_uuid=overwrite.commit_uuid,
                df=rows,
                io=table.io,
            )
            for data_file in written:
                overwrite.append_data_file(data_file)


def _replace_schema(transaction: Transaction, schema: Any) -> bool:
    """A recreated table's columns in place of the old ones; False where a type can't change."""
    old = {field.name.lower(): field for field in transaction.table_metadata.schema().fields}
    new = {name.lower() for name in schema.names}
    try:
        with transaction.update_schema() as update:
            for name, field_ in old.items():
                if name not in new:
                    update.delete_column(field_.name)
            update.union_by_name(schema)
    except Exception:  # pyiceberg refuses an incompatible type with several error types
        return False
    return True


def _evolve(transaction: Transaction, schema: Any, change: _Change) -> None:
    current = transaction.table_metadata.schema()
    names = {field.name.lower() for field in current.fields}
    if any(name.lower() not in names for name in schema.names):
        with transaction.update_schema() as update:
            update.union_by_name(schema)
    table_comment = change.comments.pop(None, None)
    if table_comment is not None:
        transaction.set_properties(comment=table_comment)
    if change.comments:
        with transaction.update_schema() as update:
            for column, text in change.comments.items():
                if column is not None:
                    update.update_column(column, doc=text)


def _parse(sql: str) -> exp.Expression | None:
    try:
        parsed = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        # Not SQL sqlglot reads: it runs as written on the engine's copies as they stand.
        log.debug("no Iceberg tables read from a statement sqlglot can't parse:\n%s", sql)
        return None
    return parsed if isinstance(parsed, exp.Expression) else None


def _tables(statement: exp.Expression) -> list[Key]:
    keys = []
    for table in statement.find_all(exp.Table):
        if table.db and table.name and not table.catalog:
            keys.append(_key(table.db, table.name))
    if isinstance(statement, exp.Comment) and isinstance(statement.this, exp.Column):
        column = statement.this
        if column.db and column.table:
            keys.append(_key(column.db, column.table))
    return keys


def _written(statement: exp.Expression) -> Key | None:
    """The table a statement changes, when it is one of the catalog's."""
    target: exp.Expression | None = statement.this
    if isinstance(statement, exp.Drop):
        dropped = statement.args.get("tables") or []
        target = dropped[0] if len(dropped) == 1 else None
    if isinstance(statement, exp.Comment) and isinstance(target, exp.Column):
        return _key(target.db, target.table) if target.db and target.table else None
    if not isinstance(
        statement,
        exp.Insert | exp.Update | exp.Delete | exp.Create | exp.Drop | exp.Alter | exp.Comment,
    ):
        return None
    ddl = isinstance(statement, exp.Create | exp.Drop | exp.Alter | exp.Comment)
    if ddl and str(statement.args.get("kind")).upper() != "TABLE":
        return None
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table) or not target.db or target.catalog:
        return None
    key = _key(target.db, target.name)
    return None if key[0] in _ENGINE_SCHEMAS else key


def _key(schema: str, table: str) -> Key:
    return schema.lower(), table.lower()


def _name(key: Key) -> str:
    return f'"{key[0]}"."{key[1]}"'


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
