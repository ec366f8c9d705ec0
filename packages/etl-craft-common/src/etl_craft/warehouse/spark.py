"""Spark SQL warehouses, reached as a Spark Connect client: the task process runs no JVM.

Tables are Spark's own (parquet) in the server's catalog. They can't UPDATE, DELETE or MERGE, so
the actions run through UpdateStrategy.REWRITE (see warehouse.rewrite) and each attempt's new
state of its target is published by one catalog operation, ``ALTER TABLE ... SET LOCATION``
(see SparkPublisher for the fence around it).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from etl_craft.core.counts import Counts
from etl_craft.core.errors import StaleTransitionError, WarehouseError
from etl_craft.warehouse import ledger
from etl_craft.warehouse.connection import Row, WarehouseConnection
from etl_craft.warehouse.dialect import (
    Capabilities,
    Column,
    Comments,
    Dialect,
    Publication,
    QueryCancel,
    ReplaceStrategy,
    UpdateStrategy,
)
from etl_craft.warehouse.ledger import LedgerEntry, ledger_table
from etl_craft.warehouse.publication import Fence, Publisher
from etl_craft.warehouse.rewrite import Rewrite, RewriteHost, Rewriter
from etl_craft.warehouse.targets import TargetObject

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

log = logging.getLogger("etl_craft.warehouse")

DEFAULT_SCRATCH_SCHEMA = "etl_craft_scratch"
# Recorded on a published table: which attempt of which task run put its state there.
ATTEMPT_PROPERTY = "etl_craft.attempt_id"
TASK_RUN_PROPERTY = "etl_craft.task_run_id"


class SparkDialect(Dialect):
    name = "spark"
    sqlglot_name = "spark"
    placeholder = "?"
    capabilities: ClassVar[Capabilities] = Capabilities(
        transactions=False,
        update_strategy=UpdateStrategy.REWRITE,
        replace_strategy=ReplaceStrategy.SWAP,
        temporary_tables=False,
        identifier_case=None,
        index_stage=False,
        cross_database=False,
        publication=Publication.CATALOG_SWAP,
        identity_columns=False,
        query_cancel=QueryCancel.TAG,
    )

    # The catalog answers DESCRIBE, not queries: SparkConnection reads its rows itself.
    def columns_query(self, target: TargetObject) -> tuple[str, list[object]]:
        return f"DESCRIBE TABLE {target.schema}.{target.table}", []

    def comments_query(self, target: TargetObject) -> tuple[str, list[object]]:
        return f"DESCRIBE TABLE EXTENDED {target.schema}.{target.table}", []

    def stage_columns_query(self, stage: str) -> tuple[str, list[object]]:
        return f"DESCRIBE TABLE {stage}", []

    def timestamp_text(self, expression: str, *, zoned: bool) -> str:
        # The session's time zone is UTC, so a Spark TIMESTAMP prints its UTC wall time.
        return (
            f"CONCAT(DATE_FORMAT({expression}, 'yyyy-MM-dd'), 'T', "
            f"DATE_FORMAT({expression}, 'HH:mm:ss.SSSSSS'))"
        )

    def date_text(self, expression: str) -> str:
        return f"DATE_FORMAT({expression}, 'yyyy-MM-dd')"


class SparkConnection(WarehouseConnection, RewriteHost):
    dialect = SparkDialect()
    sqlglot_name = "spark"

    def __init__(
        self, session: SparkSession, *, scratch_schema: str = DEFAULT_SCRATCH_SCHEMA
    ) -> None:
        self._session = session
        self.scratch_schema = scratch_schema
        # Every operation of this connection carries the tag, so a cancel stops them as one.
        self.tag = f"etl-craft-{secrets.token_hex(6)}"
        session.addTag(self.tag)
        session.conf.set("spark.sql.session.timeZone", "UTC")
        self._rewriter = Rewriter(self)
        self.pending: LedgerEntry | None = None
        self._kept: list[set[str]] = []  # the scratch tables when each open block began
        self.run_sql("create the scratch schema", f"CREATE SCHEMA IF NOT EXISTS {scratch_schema}")

    @property
    def rewrite(self) -> Rewrite | None:
        return self._rewriter.rewrite

    # RewriteHost

    def run_sql(self, purpose: str, sql: str) -> list[tuple[Any, ...]]:
        log.debug("%s:\n%s", purpose, sql)
        try:
            # Spark Connect keeps tags per thread: every thread's operations carry this one.
            self._session.addTag(self.tag)
            rows = self._session.sql(sql).collect()
        except KeyboardInterrupt:
            # A cancel or a timeout stops the task process: the operation in Spark goes too.
            log.warning("%s; %s", purpose, self.interrupt())
            raise
        except Exception as error:
            raise WarehouseError(
                f"Spark refused a statement ({purpose}): {_reason(error)}"
            ) from error
        return [tuple(_aware(value) for value in row) for row in rows]

    def table_columns(self, table: str) -> tuple[Column, ...]:
        rows = self._describe(table, extended=False)
        return tuple(Column(str(name), str(kind)) for name, kind, _ in _described(rows))

    def _describe(self, table: str, *, extended: bool) -> list[tuple[Any, ...]]:
        """DESCRIBE's rows; none when the table doesn't exist (one round trip either way)."""
        sql = f"DESCRIBE TABLE {'EXTENDED ' if extended else ''}{table}"
        try:
            return self.run_sql(f"describe {table}", sql)
        except WarehouseError as error:
            if "TABLE_OR_VIEW_NOT_FOUND" in str(error) or "SCHEMA_NOT_FOUND" in str(error):
                return []
            raise

    def take_place(self, table: str, new: str) -> None:
        location = self.location(new)
        self.run_sql(f"replace {table}", f"ALTER TABLE {table} SET LOCATION '{location}'")
        self.detach(new, location)

    def detach(self, table: str, location: str) -> None:
        """Drop ``table``'s catalog entry and keep its files, which another table now reads."""
        detached = f"{location.rstrip('/')}__detached"
        self.run_sql(f"detach {table}", f"ALTER TABLE {table} SET LOCATION '{detached}'")
        self.run_sql(f"drop {table}", f"DROP TABLE {table}")

    def adapt(self, tree: exp.Expr) -> exp.Expr:
        # Spark numbers and ranks only over an ordered window: an unordered one (any order
        # would do) gets a constant order, under which every row ties as it would unordered.
        for window in tree.find_all(exp.Window):
            if window.args.get("order") is None:
                window.set(
                    "order", exp.Order(expressions=[exp.Ordered(this=exp.Literal.number(1))])
                )
        return tree

    # WarehouseConnection

    def columns(self, target: TargetObject) -> tuple[Column, ...]:
        rewritten = self._rewriter.columns(target)
        return rewritten if rewritten is not None else self.table_columns(_name(target))

    def stage_columns(self, stage: str) -> tuple[Column, ...]:
        return self.table_columns(self._rewriter.scratch.get(stage.lower(), stage))

    def comments(self, target: TargetObject) -> Comments:
        rows = self._describe(_name(target), extended=True)
        columns = {str(n).lower(): str(c) for n, _, c in _described(rows) if c}
        table = _detail(rows, "Comment")
        return Comments(table, columns)

    def location(self, table: str) -> str:
        rows = self.run_sql(f"find where {table} lives", f"DESCRIBE TABLE EXTENDED {table}")
        found = _detail(rows, "Location")
        if found is None:
            raise WarehouseError(f"Spark shows no location for {table}")
        return found

    def properties(self, table: str) -> dict[str, str]:
        rows = self.run_sql(f"read the properties of {table}", f"SHOW TBLPROPERTIES {table}")
        return {str(key): str(value) for key, value in rows}

    def current_database(self) -> str:
        return str(self.run_sql("read the current catalog", "SELECT current_catalog()")[0][0])

    def interrupt(self) -> str:
        try:
            stopped = self._session.interruptTag(self.tag)
        except Exception as error:
            return f"couldn't ask Spark to interrupt the operations tagged {self.tag}: {error}"
        if not stopped:
            return f"no Spark operation tagged {self.tag} was running"
        return f"interrupted Spark operation(s) {', '.join(stopped)} (tag {self.tag})"

    def close(self) -> None:
        self._rewriter.end()
        for real in list(self._rewriter.scratch.values()):
            self.run_sql(f"drop the scratch table {real}", f"DROP TABLE IF EXISTS {real}")
        self._rewriter.scratch.clear()
        self._session.removeTag(self.tag)
        # The session is this connection's own: the server forgets it.
        self._session.stop()

    def lock_schema(self, schema: str) -> None:
        pass  # CREATE SCHEMA IF NOT EXISTS is safe to race in Spark's catalog

    def _execute(self, sql: str, params: Sequence[object]) -> int:
        return self._rewriter.execute("run a statement", sql, params)

    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]:
        return self._rewriter.fetch("run a query", sql, params)

    # No transactions: a write is published by SparkPublisher, never by a commit. A rollback
    # still takes the scratch tables made since the block began.
    def _begin(self) -> None:
        self._kept.append(set(self._rewriter.scratch))

    def _commit(self) -> None:
        self._kept.pop()

    def _rollback(self) -> None:
        self._rewriter.drop_scratch_since(self._kept.pop())

    @contextmanager
    def _target_lock(self, target: TargetObject) -> Iterator[None]:
        """A rewrite of ``target``: nothing it writes is visible unless SparkPublisher publishes
        it before the block ends (a rehearsal never does)."""
        self._rewriter.begin(target, f"{int(time.time())}{secrets.token_hex(3)}")
        try:
            with self.transaction():
                yield
        finally:
            self._rewriter.end()


class SparkPublisher(Publisher):
    """Publication.CATALOG_SWAP.

    The attempt's candidate becomes the target by one catalog operation (SET LOCATION, or
    CREATE/DROP TABLE for a new or dropped target). Just before it, the fence is read: the
    ledger's attempts of the task run and the attempt recorded on the target. A later attempt
    found there refuses this one, with nothing of it visible. Between that read and the catalog
    operation lies a window of a few catalog calls (measured and logged) in which a later
    attempt that publishes too is not seen; the guide describes it.

    Another attempt (of any task run) that published the same target since this one began is
    detected the same way, by the target's location, and refused: its writes would be lost.
    """

    def publishing(
        self, conn: WarehouseConnection, target: TargetObject | None, fence: Fence
    ) -> Any:
        return _publishing(_spark(conn), target, fence)

    def record(self, conn: WarehouseConnection, entry: LedgerEntry, fence: Fence) -> None:
        _spark(conn).pending = entry

    def applied(
        self, conn: WarehouseConnection, attempt_id: int, ledger_schema: str
    ) -> Counts | None:
        return ledger.applied(conn, attempt_id, ledger_schema)


SparkConnection.publisher = SparkPublisher()


@contextmanager
def _publishing(conn: SparkConnection, target: TargetObject | None, fence: Fence) -> Iterator[None]:
    ensure_ledger(conn, fence.ledger_schema)
    refuse_fenced(conn, fence, target)  # early, before any work
    conn.pending = None
    if target is None:
        # A script's own writes are visible as they are made: only the ledger entry is fenced.
        yield
        _publish_entry(conn, fence)
        return
    with conn.mutation(target):
        rewrite = conn.rewrite
        assert rewrite is not None
        base = conn.location(target.sql) if rewrite.base else None
        yield
        started = time.perf_counter()
        refuse_fenced(conn, fence, target)
        if base is not None and conn.table_columns(target.sql):
            now = conn.location(target.sql)
            if now != base:
                raise WarehouseError(
                    f"{target} was published by another writer while attempt {fence.attempt_id} "
                    f"computed its new state (its location moved from {base} to {now}); "
                    "nothing of this attempt is visible: run the task again"
                )
        _swap(conn, rewrite, fence)
        window = time.perf_counter() - started
        _publish_entry(conn, fence)
        log.info(
            "published %s for attempt %s: %.1f ms from the fence's read to the catalog operation",
            target,
            fence.attempt_id,
            window * 1000,
            extra={"etl_craft_fence_window_seconds": window},
        )


def _publish_entry(conn: SparkConnection, fence: Fence) -> None:
    entry, conn.pending = conn.pending, None
    if entry is not None:
        ledger.record(conn, entry, fence.ledger_schema)


def _swap(conn: SparkConnection, rewrite: Rewrite, fence: Fence) -> None:
    target = rewrite.target.sql
    if not rewrite.touched:
        return
    if rewrite.current is None:
        conn.run_sql(f"drop {target}", f"DROP TABLE IF EXISTS {target}")
        return
    candidate = rewrite.current
    columns = conn.table_columns(candidate)
    location = conn.location(candidate)
    stamps = (
        f"'{TASK_RUN_PROPERTY}' = '{fence.task_run_id}', "
        f"'{ATTEMPT_PROPERTY}' = '{fence.attempt_id}'"
    )
    existing = conn.table_columns(target)
    kept = {column.key: column.type.lower() for column in existing}
    reshaped = any(
        kept.get(column.key, column.type.lower()) != column.type.lower() for column in columns
    )
    if existing and (reshaped or len(kept.keys() - {c.key for c in columns}) > 0):
        # A CREATE_TABLE with other columns: Spark can't swap a table's columns with its files.
        conn.run_sql(f"drop {target} to recreate it", f"DROP TABLE {target}")
        existing = ()
    if not existing:
        definitions = ", ".join(f"{column.name} {column.type}" for column in columns)
        conn.run_sql(
            f"publish {target}",
            f"CREATE TABLE {target} ({definitions}) USING parquet LOCATION '{location}' "
            f"TBLPROPERTIES ({stamps})",
        )
    else:
        added = [column for column in columns if column.key not in kept]
        if added:
            # Readers see the new columns empty until the swap fills them: never a half row.
            definitions = ", ".join(f"{column.name} {column.type}" for column in added)
            conn.run_sql(
                f"add columns to {target}", f"ALTER TABLE {target} ADD COLUMNS ({definitions})"
            )
        conn.run_sql(
            f"record attempt {fence.attempt_id} on {target}",
            f"ALTER TABLE {target} SET TBLPROPERTIES ({stamps})",
        )
        conn.run_sql(f"publish {target}", f"ALTER TABLE {target} SET LOCATION '{location}'")
    # The candidate's catalog entry goes; its files are now the target's.
    conn.detach(candidate, location)
    rewrite.current = None


def refuse_fenced(conn: SparkConnection, fence: Fence, target: TargetObject | None) -> None:
    """Refuse the attempt if a later attempt of its task run published, by the ledger or by the
    attempt recorded on the target."""
    table = ledger_table(fence.ledger_schema).sql
    latest = conn.run_sql(
        f"read the fence of task run {fence.task_run_id}",
        f"SELECT MAX(attempt_id) FROM {table} WHERE task_run_id = {int(fence.task_run_id)}",
    )[0][0]
    holders = [int(latest)] if latest is not None else []
    if target is not None and conn.table_columns(target.sql):
        recorded = conn.properties(target.sql)
        if recorded.get(TASK_RUN_PROPERTY) == str(fence.task_run_id):
            holders.append(int(recorded.get(ATTEMPT_PROPERTY, "0")))
    holder = max(holders, default=0)
    if holder > fence.attempt_id:
        raise StaleTransitionError(
            f"attempt {fence.attempt_id} of task run {fence.task_run_id} is refused its "
            f"warehouse commit: the later attempt {holder} of the same task run has already "
            f"published, and its result stands; nothing of attempt {fence.attempt_id} is "
            "visible (its candidate table is dropped). Nothing to repair: this happens when a "
            "paused or cut-off attempt resumes after its retry"
        )


def ensure_ledger(conn: SparkConnection, schema: str) -> None:
    """The ledger as a parquet table: Spark's tables take no key constraints."""
    table = ledger_table(schema).sql
    if conn.table_columns(table):
        return
    columns = ", ".join(
        f"{column.name} {column.type.replace(' PRIMARY KEY', ' NOT NULL')}"
        for column in ledger.LEDGER_COLUMNS
    )
    conn.execute(f"create the ledger schema {schema}", f"CREATE SCHEMA IF NOT EXISTS {schema}")
    conn.execute(f"create the ledger {table}", f"CREATE TABLE IF NOT EXISTS {table} ({columns})")


def connect_spark(
    driver: ModuleType, remote: str, token: str | None, scratch_schema: str | None
) -> SparkConnection:
    """``driver`` is pyspark.sql.connect.session, imported by the caller as an optional extra."""
    # A refused statement reaches the log once, as a WarehouseError; pyspark would log it again
    # with the server's Java stack, which floods an attempt's log.
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    url = _with_token(remote, token)
    try:
        # A session of its own: tags and the time zone are this connection's alone.
        session = driver.SparkSession.builder.remote(url).create()
    except Exception as error:
        raise WarehouseError(
            f"can't reach the Spark Connect server at {remote}: {_reason(error)}; check "
            "Warehouse.remote and that the server runs"
        ) from error
    return SparkConnection(session, scratch_schema=scratch_schema or DEFAULT_SCRATCH_SCHEMA)


def _with_token(remote: str, token: str | None) -> str:
    if token is None:
        return remote
    return f"{remote.rstrip('/')}/;token={token}"


def _spark(conn: WarehouseConnection) -> SparkConnection:
    assert isinstance(conn, SparkConnection)
    return conn


def _name(target: TargetObject) -> str:
    return f"{target.schema}.{target.table}"


def _described(rows: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """DESCRIBE's column rows: those before its first blank or '#' section."""
    for row in rows:
        name = str(row[0] or "")
        if not name or name.startswith("#"):
            return
        yield row


def _detail(rows: list[tuple[Any, ...]], key: str) -> str | None:
    return next((str(row[1]) for row in rows if row[0] == key and row[1]), None)


def _aware(value: object) -> object:
    """A Spark TIMESTAMP is an instant, read in the session's zone (UTC)."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _reason(error: Exception) -> str:
    text = str(error).split("JVM stacktrace:")[0]
    return " ".join(text.split())[:1000]


def reach_spark(driver: ModuleType, remote: str, token: str | None) -> str:
    """Spark's version and where it answered, for doctor."""
    conn = connect_spark(driver, remote, token, None)
    try:
        version = conn.run_sql("read Spark's version", "SELECT version()")[0][0]
    finally:
        conn.close()
    return f"Spark {str(version).split()[0]} through Spark Connect at {remote}"
