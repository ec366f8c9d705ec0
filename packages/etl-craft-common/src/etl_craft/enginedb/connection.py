"""Engine DB connections: one engine per process, every writing transaction marked with its actor.

PostgreSQL carries the actor in transaction-local settings; SQLite, which has no sessions,
reads it through functions registered on each connection. Triggers on every AUD_ and CFG_
table refuse a write whose transaction carries no actor.
"""

from __future__ import annotations

import copy
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from etl_craft import __version__
from etl_craft.config.settings import load_settings
from etl_craft.config.urls import backend_name, mask_url, sqlite_file
from etl_craft.core.actor import Actor
from etl_craft.core.errors import (
    EngineDBError,
    MigrationError,
    StaleTransitionError,
    WriteGuardError,
)
from etl_craft.core.time import SQLITE_TIMESTAMP_FORMAT, to_sqlite_text, utc_now
from etl_craft.enginedb.named_statements import STATEMENT_OPTION, statement
from etl_craft.enginedb.pool_budget import DEFAULT_POOL_SIZE

if TYPE_CHECKING:
    from prometheus_client import Histogram
    from sqlalchemy import URL, Connection, CursorResult, Engine
    from sqlalchemy import exc as sa_exc
    from sqlalchemy.engine import Dialect, ExecutionContext
    from sqlalchemy.pool import ConnectionPoolEntry


WRITE_OPTION = "etl_craft_write"
_STATE_KEY = "etl_craft"
_STARTED = "_etl_craft_started"
# The SQLSTATE every PostgreSQL write guard raises (migration 0007): class 42, access rule
# violation, with a subclass the SQL standard leaves to implementations.
GUARD_SQLSTATE = "42W01"
# SQLite's RAISE sets no code of its own: every guard message opens with the table and one of
# these phrases (enginedb/sql/sqlite/guards.sql).
_SQLITE_GUARD = re.compile(
    r"(?:(?:AUD|CFG)_\w+|SCHEMA_MIGRATIONS) is (?:written only by etl-craft|append-only)"
)

# A pooled PostgreSQL connection idle for longer than this is pinged before its next
# transaction; the hot path (claims, outcomes, the overseer's steps) reuses one within
# milliseconds, and a ping there was a round trip on every transaction.
PING_AFTER_IDLE_SECONDS = 1.0
_IDLE_SINCE = "etl_craft_idle_since"
# A named statement binding at most this many values is prepared on PostgreSQL, once it has
# run this many times on its connection before (psycopg's threshold; PostgreSQL itself plans
# the first five executions of a prepared statement for their values before it keeps one plan).
PREPARED_VALUES = 64
PREPARE_THRESHOLD = 1


# A connect timeout shortened to a share of the lease, but never below this (libpq's own
# smallest useful one).
LEASE_CONNECT_SHARE = 0.2
LEAST_CONNECT_SECONDS = 2


@dataclass(frozen=True)
class EngineTimeouts:
    """How long a PostgreSQL Engine DB connection may take to open, and a statement to run."""

    connect_seconds: int
    statement_seconds: float  # 0: no limit

    @classmethod
    def configured(cls) -> EngineTimeouts:
        settings = load_settings()
        return cls(
            settings.engine_connect_timeout_seconds, settings.engine_statement_timeout_seconds
        )

    def within_lease(self, lease_seconds: float) -> EngineTimeouts:
        """These timeouts, the connect timeout (and so the keepalives and the TCP user timeout
        that follow it) shortened to a fifth of ``lease_seconds`` where that is shorter: a
        connection to a peer gone silent then fails well before an owner's leases run out."""
        within = max(LEAST_CONNECT_SECONDS, int(lease_seconds * LEASE_CONNECT_SHARE))
        return replace(self, connect_seconds=min(self.connect_seconds, within))

    def connect_args(self) -> dict[str, Any]:
        """libpq's options: the connect timeout, the statement timeout, and keepalives that
        notice a peer gone silent (a cut network) instead of waiting on it for many minutes."""
        options = "-c timezone=UTC"
        if self.statement_seconds > 0:
            options += f" -c statement_timeout={int(self.statement_seconds * 1000)}"
        return {
            "options": options,
            "connect_timeout": self.connect_seconds,
            "keepalives": 1,
            "keepalives_idle": self.connect_seconds,
            "keepalives_interval": max(1, self.connect_seconds // 3),
            "keepalives_count": 3,
            "tcp_user_timeout": self.connect_seconds * 2000,
        }


def normalize_url(url: str) -> URL:
    """Accept plain ``postgresql://`` URLs and drive them with psycopg 3."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def safe_url(url: str | URL) -> str:
    return mask_url(normalize_url(url) if isinstance(url, str) else url)


@dataclass
class _SqliteState:
    """What the functions registered on one SQLite connection read."""

    values: dict[str, str | None] = field(default_factory=dict)


def _sqlite_add_seconds(stamp: str | None, seconds: float | None) -> str | None:
    if stamp is None or seconds is None:
        return None
    moved = datetime.strptime(stamp, SQLITE_TIMESTAMP_FORMAT) + timedelta(seconds=seconds)
    return moved.strftime(SQLITE_TIMESTAMP_FORMAT)


def _register_sqlite(dbapi: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
    state = _SqliteState()
    record.info[_STATE_KEY] = state
    _prepare_sqlite(dbapi, state)


def _prepare_sqlite(dbapi: sqlite3.Connection, state: _SqliteState) -> None:
    # Python's sqlite3 module opens transactions on its own; etl-craft opens them itself
    # so that BEGIN IMMEDIATE takes the write lock before the first read.
    dbapi.isolation_level = None
    for name in ("actor", "actor_kind", "migration", "purge"):
        dbapi.create_function(f"etl_craft_{name}", 0, lambda name=name: state.values.get(name))
    dbapi.create_function("etl_craft_now", 0, lambda: to_sqlite_text(utc_now()))
    dbapi.create_function("etl_craft_add_seconds", 2, _sqlite_add_seconds, deterministic=True)
    for pragma in ("foreign_keys = ON", "busy_timeout = 30000", "journal_mode = WAL"):
        dbapi.execute(f"PRAGMA {pragma}")


@dataclass
class _StatementTiming:
    """Where this process times its statements: nowhere until it serves /metrics. A one-shot
    command (`etl-craft status`) neither times its statements nor pays prometheus_client's
    import, some 40 ms of its start."""

    family: Histogram | None = None
    timers: dict[str, Histogram] = field(default_factory=dict)  # one labelled child per name


_timing = _StatementTiming()


def observe_statements(family: Histogram) -> None:
    """Time every Engine DB statement of this process from now on in ``family``, labelled with
    the statement's name; a process calls it when it starts serving /metrics."""
    _timing.family = family


def _statement_sent(
    conn: Connection,
    cursor: object,
    sql: str,
    parameters: object,
    context: ExecutionContext | None,
    executemany: bool,
) -> None:
    if context is not None and _timing.family is not None:
        setattr(context, _STARTED, time.perf_counter())


def _prepare_or_plan(
    conn: Connection,
    cursor: Any,
    sql: str,
    parameters: object,
    context: ExecutionContext | None,
    executemany: bool,
) -> None:
    """Have PostgreSQL keep the plan of a named statement of few values (the claim, the
    transitions, the run's reads: the same text many times on a pooled connection), and plan
    any other statement anew each time.

    A kept plan is generic: it can't see the values of a long IN list, and for a thousand
    keys of the rule flags it scanned the whole table where a plan for the values used the
    index (clearing 70,000 flags took 230 s instead of 10 s). Short lists and single keys
    plan the same either way, and planning the claim's joins cost more than running them."""
    named = context is not None and STATEMENT_OPTION in context.execution_options
    rows = parameters if executemany and isinstance(parameters, list) else [parameters]
    few = all(isinstance(row, Mapping) and len(row) <= PREPARED_VALUES for row in rows)
    cursor.connection.prepare_threshold = PREPARE_THRESHOLD if named and few else None


def _now_idle(dbapi: Any, record: ConnectionPoolEntry, *_: object) -> None:
    record.info[_IDLE_SINCE] = time.monotonic()


@dataclass(frozen=True)
class _PingIfIdle:
    """Make sure a pooled connection that sat idle still reaches the server before a
    transaction starts on it (a restart or failover may have cut it meanwhile); a connection
    back within PING_AFTER_IDLE_SECONDS goes straight to work. Should one of those have been
    cut, its transaction fails as any transaction cut short does, and SQLAlchemy invalidates
    the pool's connections, so the next transaction connects afresh."""

    dialect: Dialect

    def __call__(self, dbapi: Any, record: ConnectionPoolEntry, proxy: object) -> None:
        since = record.info.get(_IDLE_SINCE)
        if since is not None and time.monotonic() - since < PING_AFTER_IDLE_SECONDS:
            return
        # The dialect's ping, as pool_pre_ping sends it: in autocommit, so that it leaves no
        # transaction open (a session could not switch the connection to autocommit then).
        # Whatever it raises means the connection is no use: a server that ended it says why
        # before the driver sees it closed.
        from sqlalchemy import exc as sa_exc

        try:
            alive = self.dialect.do_ping(dbapi)
        except Exception as error:
            raise sa_exc.DisconnectionError(f"the Engine DB connection is gone: {error}") from error
        if not alive:
            raise sa_exc.DisconnectionError("the Engine DB connection is gone")


def _statement_done(
    conn: Connection,
    cursor: object,
    sql: str,
    parameters: object,
    context: ExecutionContext | None,
    executemany: bool,
) -> None:
    started: float | None = getattr(context, _STARTED, None)
    if started is None:
        return
    assert context is not None
    name = context.execution_options.get(STATEMENT_OPTION) or _unnamed(sql)
    timer = _timing.timers.get(name)
    if timer is None:
        assert _timing.family is not None  # a statement is stamped only while it is set
        timer = _timing.timers[name] = _timing.family.labels(name)
    timer.observe(time.perf_counter() - started)


def _unnamed(sql: str) -> str:
    verb = sql.split(None, 1)[0].upper() if sql.strip() else ""
    return f"unnamed:{verb if verb.isalpha() else 'OTHER'}"


def _begin_sqlite(conn: Connection) -> None:
    mode = "IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "DEFERRED"
    conn.exec_driver_sql(f"BEGIN {mode}")


# Run first in every writing transaction of a fenced Engine DB (``EngineDB.fenced``); it
# raises to refuse the transaction.
WriteFence = Callable[["EngineConnection"], None]


class EngineDB:
    """The Engine DB of one process.

    SQLAlchemy is imported, and the engine created, at the first transaction that needs them:
    a reading command on an SQLite file reads through the standard library instead
    (``read_only``), and answers without paying for SQLAlchemy's import."""

    def __init__(
        self,
        url: str,
        *,
        null_pool: bool = False,
        pool_size: int = DEFAULT_POOL_SIZE,
        application: str = "etl-craft",
        timeouts: EngineTimeouts | None = None,
    ):
        self.url_text = url
        self.dialect = backend_name(url)
        if self.dialect not in ("postgresql", "sqlite"):
            raise EngineDBError(
                f"Engine DB URL {safe_url(url)} uses {self.dialect}; expected a "
                "postgresql:// or sqlite:/// URL"
            )
        self.timeouts = timeouts or EngineTimeouts.configured()
        # Shared by the twins ``fenced`` makes, so that they share one pool.
        self._engine = _LazyEngine(lambda: self._create_engine(null_pool, pool_size, application))
        self.fence: WriteFence | None = None

    @cached_property
    def url(self) -> URL:
        return normalize_url(self.url_text)

    @property
    def engine(self) -> Engine:
        return self._engine.get()

    def fenced(self, fence: WriteFence) -> EngineDB:
        """This Engine DB, its connections shared, whose every writing transaction first runs
        ``fence``: the overseer's leader-only writes check its leadership epoch this way, in the
        transaction that writes, so that no check and write can be split by a takeover."""
        twin = copy.copy(self)
        twin.fence = fence
        return twin

    def _create_engine(self, null_pool: bool, pool_size: int, application: str) -> Engine:
        from sqlalchemy import create_engine, event
        from sqlalchemy.pool import NullPool

        options: dict[str, Any] = {"future": True}
        if null_pool:
            options["poolclass"] = NullPool
        if self.dialect == "postgresql":
            if not null_pool:
                # No overflow: the pool is the most this process ever holds, so that doctor's
                # budget (pool_budget) is a ceiling the server can be sized for.
                options.update(pool_size=pool_size, max_overflow=0)
            options["connect_args"] = {
                **self.timeouts.connect_args(),
                "application_name": application[:63],
                # Decided for each statement (_prepare_or_plan).
                "prepare_threshold": None,
            }
            engine = create_engine(self.url, **options)
            event.listen(engine, "before_cursor_execute", _prepare_or_plan)
            for moment in ("connect", "checkin"):
                event.listen(engine, moment, _now_idle)
            event.listen(engine, "checkout", _PingIfIdle(engine.dialect))
        else:
            engine = create_engine(self.url, **options)
            event.listen(engine, "connect", _register_sqlite)
            event.listen(engine, "begin", _begin_sqlite)
        event.listen(engine, "before_cursor_execute", _statement_sent)
        event.listen(engine, "after_cursor_execute", _statement_done)
        return engine

    @contextmanager
    def transaction(
        self, actor: Actor, *, migration: str | None = None
    ) -> Iterator[EngineConnection]:
        """A writing transaction marked with ``actor``; commits on success."""
        with self.translated(), self.engine.connect() as plain:
            raw = plain.execution_options(**{WRITE_OPTION: True})
            with raw.begin():
                conn = EngineConnection(raw, self.dialect)
                conn.mark(actor, migration)
                try:
                    if self.fence is not None:
                        self.fence(conn)
                    yield conn
                    conn.send_notifications()
                finally:
                    conn.unmark()

    @contextmanager
    def rehearsal(
        self, actor: Actor, *, migration: str | None = None
    ) -> Iterator[EngineConnection]:
        """A writing transaction marked like ``transaction`` that always rolls back: what it
        writes is seen inside it (triggers included) and by nobody else."""
        with self.translated(), self.engine.connect() as plain:
            raw = plain.execution_options(**{WRITE_OPTION: True})
            with raw.begin() as tx:
                conn = EngineConnection(raw, self.dialect)
                conn.mark(actor, migration)
                try:
                    yield conn
                finally:
                    conn.unmark()
                    tx.rollback()

    @contextmanager
    def read(self) -> Iterator[EngineConnection]:
        """A read-only transaction: one consistent snapshot on PostgreSQL. It ends with a
        commit, which writes nothing for a transaction that wrote nothing (and the write guards
        refuse any write it tries, as it carries no actor): psycopg forgets the connection's
        prepared statements at every rollback."""
        with self.translated(), self.engine.connect() as raw, raw.begin():
            yield EngineConnection(raw, self.dialect)

    @contextmanager
    def read_only(self) -> Iterator[EngineReads]:
        """A read-only transaction for named statements only, as ``read``; on an SQLite file
        it reads through the standard library's sqlite3 (one consistent snapshot as well),
        unless this process times its statements: a service serving /metrics reads through
        its engine, so that every statement is timed."""
        path = sqlite_file(self.url_text)
        if path is None or _timing.family is not None:
            with self.read() as conn:
                yield conn
            return
        with read_sqlite(path, self.url_text) as reads:
            yield reads

    @contextmanager
    def session(self) -> Iterator[EngineConnection]:
        """A dedicated autocommit connection held for as long as the caller needs it.

        For what lives with a session rather than a transaction: the overseer's leadership lock
        and LISTEN. Writes through it are not marked, so guarded tables refuse them.
        """
        with self.translated(), self.engine.connect() as plain:
            yield EngineConnection(
                plain.execution_options(isolation_level="AUTOCOMMIT"), self.dialect
            )

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Raise what the driver raises as etl-craft's errors (every transaction does; a
        ``session``'s statements run outside the block that opened it, so they ask)."""
        from sqlalchemy import exc as sa_exc

        try:
            yield
        except sa_exc.DBAPIError as error:
            if _is_guard_refusal(error):
                raise WriteGuardError(str(error.orig).strip()) from error
            missing = missing_schema(self.url_text, error.orig)
            if missing is not None:
                raise missing from error
            if isinstance(error, sa_exc.OperationalError):
                raise unreachable(self.url_text, error.orig) from error
            raise

    def create_storage(self) -> None:
        """Create an SQLite Engine DB file private to its owner; a server database must exist."""
        database = self.url.database
        if self.dialect == "sqlite" and database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
            # Whoever may write the file may also write around the guards (no login stands
            # between them), so it starts private; SQLite gives its journal the same mode.
            with suppress(FileExistsError):
                os.close(os.open(database, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))

    def dispose(self) -> None:
        self._engine.dispose()


class _LazyEngine:
    """An engine made at its first use."""

    def __init__(self, make: Callable[[], Engine]):
        self._make = make
        self._made: Engine | None = None

    def get(self) -> Engine:
        if self._made is None:
            self._made = self._make()
        return self._made

    def dispose(self) -> None:
        if self._made is not None:
            self._made.dispose()


# SQLite: "no such table: CFG_PROJECTS"; PostgreSQL: 'relation "cfg_projects" does not exist'.
_MISSING_TABLE = re.compile(
    r'no such table: (?:\w+\.)?(?P<table>\w+)|relation "(?:\w+\.)?(?P<pg>\w+)" does not exist'
)


def missing_schema(url: str, failure: BaseException | None) -> MigrationError | None:
    """A table of etl-craft's own that is not there: the Engine DB was never initialised,
    or predates this release; reachability and credentials are not the problem."""
    found = _MISSING_TABLE.search(str(failure))
    table = (found.group("table") or found.group("pg")).upper() if found else ""
    if not table.startswith(("AUD_", "CFG_")):
        return None
    return MigrationError(
        f"the Engine DB at {safe_url(url)} has no table {table}: "
        "it was never initialised, or its schema is older than this etl-craft "
        f"({__version__}); run etl-craft init-db, which creates or upgrades the schema, "
        "then etl-craft migrate"
    )


def unreachable(url: str, failure: BaseException | None) -> EngineDBError:
    return EngineDBError(
        f"the Engine DB at {safe_url(url)} failed: {failure}; check that it "
        "is reachable and that the URL, user and password are right"
    )


def _is_guard_refusal(error: sa_exc.DBAPIError) -> bool:
    """Whether an etl-craft write guard refused the statement: by SQLSTATE on PostgreSQL, by
    the opening of its message on SQLite."""
    if isinstance(error.orig, sqlite3.Error):
        return _SQLITE_GUARD.match(str(error.orig)) is not None
    return getattr(error.orig, "sqlstate", None) == GUARD_SQLSTATE


# A row of a named statement, by column name.
Row = Mapping[str, Any]


class EngineReads(Protocol):
    """What a read-only transaction offers: named statements and their rows."""

    @property
    def dialect(self) -> str: ...

    def one(self, name: str, /, **params: Any) -> Row | None: ...

    def all(self, name: str, /, **params: Any) -> list[Row]: ...

    def scalar(self, name: str, /, **params: Any) -> Any: ...


@dataclass
class EngineConnection:
    """One Engine DB transaction that runs named statements."""

    connection: Connection
    dialect: str
    notifications: list[str] = field(default_factory=list)

    def mark(self, actor: Actor, migration: str | None) -> None:
        values = {"actor": actor.name, "actor_kind": actor.kind.value, "migration": migration}
        if self.dialect == "postgresql":
            self.run("mark_actor", **values)
        else:
            self._sqlite_state().values.update(values)

    def mark_purge(self, action_id: int) -> None:
        """Name the AUD_ACTIONS row of the purge this transaction is, which the history guards
        ask for before they let it delete (cleared when the transaction ends)."""
        if self.dialect == "postgresql":
            self.run("mark_purge", action_id=str(action_id))
        else:
            self._sqlite_state().values["purge"] = str(action_id)

    def limit_statements(self, seconds: float) -> None:
        """Have PostgreSQL cancel a statement of this transaction that runs longer than
        ``seconds``, so that an Engine DB that is there answers within it (SQLite: a local
        file, nothing to limit)."""
        if self.dialect == "postgresql":
            self.run("local_statement_timeout", milliseconds=str(max(1, int(seconds * 1000))))

    def unmark(self) -> None:
        if self.dialect == "sqlite":
            self._sqlite_state().values.clear()

    def _sqlite_state(self) -> _SqliteState:
        state = self.connection.info[_STATE_KEY]
        assert isinstance(state, _SqliteState)
        return state

    def _params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if self.dialect != "sqlite":
            return dict(params)
        return {
            key: to_sqlite_text(value) if isinstance(value, datetime) else value
            for key, value in params.items()
        }

    def run(self, name: str, /, **params: Any) -> CursorResult[Any]:
        """Execute the named statement with ``params``."""
        return self.connection.execute(statement(self.dialect, name).clause, self._params(params))

    def run_many(self, name: str, rows: list[dict[str, Any]], /) -> int:
        """Execute the named statement once for each of ``rows``, sent as one batch; the number
        of rows the executions changed in all."""
        if not rows:
            return 0
        named = statement(self.dialect, name)
        if self.dialect == "sqlite" and "RETURNING" in named.sql.upper():
            # The driver counts no row a RETURNING statement changed until they are read, and
            # takes no RETURNING in a batch: each runs on its own (the file is local anyway).
            return sum(_changed(self.run(name, **row)) for row in rows)
        result = self.connection.execute(named.clause, [self._params(row) for row in rows])
        return int(result.rowcount)

    def one(self, name: str, /, **params: Any) -> Row | None:
        return cast("Row | None", self.run(name, **params).mappings().first())

    def all(self, name: str, /, **params: Any) -> list[Row]:
        return cast("list[Row]", list(self.run(name, **params).mappings()))

    def scalar(self, name: str, /, **params: Any) -> Any:
        return self.run(name, **params).scalar()

    def guarded(self, name: str, /, *, refusal: str, **params: Any) -> Row:
        """Run a guarded statement that must change exactly one row and return it."""
        rows = self.run(name, **params).mappings().all()
        if len(rows) != 1:
            raise StaleTransitionError(refusal)
        return cast("Row", rows[0])

    def script(self, sql: str) -> None:
        """Run a multi-statement DDL script (schema files and migrations)."""
        if self.dialect == "postgresql":
            # The driver's own cursor, without parameters, takes plpgsql's % and many statements
            # (which can't be prepared).
            driver = self.connection.connection.driver_connection
            assert driver is not None
            driver.cursor().execute(sql, prepare=False)
            return
        raw = self.connection.connection.dbapi_connection
        assert raw is not None
        # executescript would COMMIT the open transaction first; run each statement instead.
        for piece in _split_sqlite_script(sql):
            raw.execute(piece)

    def notify(self, payload: str) -> None:
        """Wake listeners when this transaction commits: one statement sends them all, just
        before the commit (PostgreSQL delivers them at commit in any case). SQLite has no
        NOTIFY: loops there poll."""
        if self.dialect == "postgresql":
            self.notifications.append(payload)

    def send_notifications(self) -> None:
        if self.notifications:
            self.run("notify_events", payloads=self.notifications)
            self.notifications = []


def _changed(result: CursorResult[Any]) -> int:
    return len(result.all()) if result.returns_rows else int(result.rowcount)


def _split_sqlite_script(sql: str) -> Iterator[str]:
    """The statements of a script, split at each ';' that ends one (two may share a line)."""
    start = 0
    for position, character in enumerate(sql):
        if character == ";" and sqlite3.complete_statement(sql[start : position + 1]):
            piece = sql[start : position + 1]
            if _has_code(piece):
                yield piece
            start = position + 1
    rest = sql[start:]
    if _has_code(rest):
        yield rest


def _has_code(piece: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in piece.splitlines())


@contextmanager
def read_sqlite(path: Path, url: str) -> Iterator[SqliteReads]:
    """One read transaction on the SQLite file at ``path`` through the standard library."""
    try:
        dbapi = sqlite3.connect(path, timeout=30)
    except sqlite3.Error as error:
        raise unreachable(url, error) from error
    try:
        _prepare_sqlite(dbapi, _SqliteState())
        dbapi.execute("BEGIN DEFERRED")
        yield SqliteReads(dbapi)
        dbapi.execute("COMMIT")
    except sqlite3.OperationalError as error:
        raise missing_schema(url, error) or unreachable(url, error) from error
    finally:
        dbapi.close()


@dataclass(frozen=True)
class SqliteReads:
    """A read transaction on an SQLite Engine DB through sqlite3, for named statements: their
    ``:name`` parameters are sqlite3's own, and a ``:name_list`` one expands as SQLAlchemy's
    expanding parameters do."""

    dbapi: sqlite3.Connection
    dialect: str = "sqlite"

    def _execute(self, name: str, params: Mapping[str, Any]) -> sqlite3.Cursor:
        sql = statement(self.dialect, name).sql
        bound: dict[str, Any] = {}
        for key, value in params.items():
            if not key.endswith("_list"):
                bound[key] = _sqlite_value(value)
                continue
            keys = [f"{key}__{i}" for i in range(len(value))]
            bound.update(zip(keys, map(_sqlite_value, value), strict=True))
            listed = ", ".join(f":{item}" for item in keys)
            sql = re.sub(rf"(?<!:):{key}\b", f"({listed})", sql)
        return self.dbapi.execute(sql, bound)

    def one(self, name: str, /, **params: Any) -> Row | None:
        cursor = self._execute(name, params)
        found = cursor.fetchone()
        return None if found is None else _named(cursor, found)

    def all(self, name: str, /, **params: Any) -> list[Row]:
        cursor = self._execute(name, params)
        return [_named(cursor, found) for found in cursor.fetchall()]

    def scalar(self, name: str, /, **params: Any) -> Any:
        found = self._execute(name, params).fetchone()
        return None if found is None else found[0]


def _named(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> Row:
    return dict(zip((column[0] for column in cursor.description), values, strict=True))


def _sqlite_value(value: Any) -> Any:
    """A parameter as the SQLite Engine DB stores it, as SQLAlchemy's SQLite types bind it."""
    if isinstance(value, datetime):
        return to_sqlite_text(value)
    if isinstance(value, date):
        return value.isoformat()
    return value
