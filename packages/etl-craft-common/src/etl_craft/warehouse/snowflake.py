"""Snowflake warehouses through snowflake-connector-python (the etl-craft-common[snowflake] extra).

Three things shape this module:

* Snowflake runs every DDL statement (CREATE TEMPORARY TABLE included) in a transaction of its
  own, committing the one that is open first; the statements after it run in autocommit. So a
  transaction here is opened lazily, at the first statement that isn't DDL, and a DDL statement
  commits the open one explicitly (what Snowflake would do anyway) so the next DML opens another.
  The SQL actions put their DDL (stages, schema evolution) before their writes to the target,
  and the publisher checks the fence in the same transaction as those writes, just before the
  ledger row (see SnowflakeConnection.publisher).
* Unquoted names fold to upper case: the catalog is asked with upper-cased names, and the
  columns are read with DESCRIBE TABLE, which also reports a temporary table's and a timestamp's
  precision.
* A running statement is cancelled from a second session by SYSTEM$CANCEL_QUERY, with the id
  Snowflake recorded for the query this session runs now.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.connection import Row, WarehouseConnection
from etl_craft.warehouse.dialect import (
    Capabilities,
    Column,
    Dialect,
    IdentifierCase,
    QueryCancel,
    ReplaceStrategy,
    UpdateStrategy,
    Upsert,
)
from etl_craft.warehouse.fence import TransactionalPublisher
from etl_craft.warehouse.targets import TargetObject

log = logging.getLogger("etl_craft.warehouse")

_ISO = "'YYYY-MM-DD\"T\"HH24:MI:SS.FF6'"
_DDL = re.compile(r"\s*(CREATE|ALTER|DROP|COMMENT|GRANT|REVOKE|UNDROP|TRUNCATE)\b", re.IGNORECASE)
# The DDL of an attempt's own scratch tables (temporary, named etl_...), which a rehearsal runs.
_SCRATCH_DDL = re.compile(
    r"\s*(CREATE TEMPORARY TABLE|DROP TABLE IF EXISTS etl_|ALTER TABLE etl_)", re.IGNORECASE
)
_WRITE = re.compile(r"\s*(INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_SCRATCH_WRITE = re.compile(r"\s*(INSERT INTO|UPDATE|DELETE FROM|MERGE INTO) etl_", re.IGNORECASE)
# A probe that changes nothing: on a live account ALTER TABLE IF EXISTS of a missing table
# succeeds; an emulator that lacks SWAP WITH refuses it as syntax.
_SWAP_PROBE = "ALTER TABLE IF EXISTS etl_craft_swap_probe_a SWAP WITH etl_craft_swap_probe_b"

# etl-craft's own types (written in PostgreSQL terms) in Snowflake's full spelling.
_TYPES = {
    "BIGINT": "NUMBER(38,0)",
    "INTEGER": "NUMBER(38,0)",
    "INT": "NUMBER(38,0)",
    "TEXT": "VARCHAR",
    "VARCHAR": "VARCHAR",
    "TIMESTAMP WITH TIME ZONE": "TIMESTAMP_TZ(6)",
    "TIMESTAMPTZ": "TIMESTAMP_TZ(6)",
    "TIMESTAMP": "TIMESTAMP_NTZ(6)",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "DOUBLE PRECISION": "FLOAT",
}
_RUNNING = (
    "SELECT QUERY_ID FROM TABLE(INFORMATION_SCHEMA.QUERY_HISTORY_BY_SESSION(SESSION_ID => ?))\n"
    "WHERE EXECUTION_STATUS IN ('RUNNING', 'QUEUED', 'BLOCKED', 'RESUMING_WAREHOUSE')"
)
_NUMBERED = re.compile(r"IDENTITY|AUTOINCREMENT|NEXTVAL", re.IGNORECASE)
_NUMBER = re.compile(r"NUMBER\((\d+),(\d+)\)")


class SnowflakeDialect(Dialect):
    name = "snowflake"
    sqlglot_name = "snowflake"
    placeholder = "?"
    capabilities: ClassVar[Capabilities] = Capabilities(
        transactions=True,
        # S3.G.2: an SCD update joins the deduplicated stage with UPDATE ... FROM.
        update_strategy=UpdateStrategy.UPDATE_FROM,
        replace_strategy=ReplaceStrategy.SWAP,
        temporary_tables=True,
        identifier_case=IdentifierCase.UPPER,
        index_stage=False,
        cross_database=True,
        identity_columns=True,
        query_cancel=QueryCancel.QUERY_ID,
        upsert=Upsert.MERGE,
    )

    def columns_query(self, target: TargetObject) -> tuple[str, list[object]]:
        # The catalog of the target's database; its exact names are the folded ones.
        sql = (
            f"SELECT COLUMN_NAME, DATA_TYPE FROM {target.database}.INFORMATION_SCHEMA.COLUMNS\n"
            "WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?)\n"
            "ORDER BY ORDINAL_POSITION"
        )
        return sql, [target.schema, target.table]

    def comments_query(self, target: TargetObject) -> tuple[str, list[object]]:
        catalog = f"{target.database}.INFORMATION_SCHEMA"
        where = "WHERE TABLE_SCHEMA = UPPER(?) AND TABLE_NAME = UPPER(?) AND COMMENT IS NOT NULL"
        sql = (
            f"SELECT NULL, COMMENT FROM {catalog}.TABLES\n{where}\n"
            f"UNION ALL\nSELECT COLUMN_NAME, COMMENT FROM {catalog}.COLUMNS\n{where}"
        )
        names = [target.schema, target.table]
        return sql, [*names, *names]

    def stage_columns_query(self, stage: str) -> tuple[str, list[object]]:
        # A temporary table is in no catalog view: its columns are read from the description
        # of an empty SELECT (see SnowflakeConnection.stage_columns).
        return f"SELECT * FROM {stage} LIMIT 0", []

    def render_type(self, generic: str) -> str:
        text = " ".join(generic.upper().split())
        for suffix in (" PRIMARY KEY", " NOT NULL"):
            if text.endswith(suffix):
                return f"{self.render_type(text.removesuffix(suffix))}{suffix}"
        if text in _TYPES:
            return _TYPES[text]
        return super().render_type(generic)

    def canonical_text(self, expression: str, column: Column, *, strict: bool = True) -> str:
        # Snowflake's spellings mapped to the generic kinds, so a value hashes as elsewhere.
        generic = Column(column.name, _generic(column.type))
        return super().canonical_text(expression, generic, strict=strict)

    def timestamp_text(self, expression: str, *, zoned: bool) -> str:
        value = (
            f"CONVERT_TIMEZONE('UTC', {expression})"
            if zoned
            else f"CAST({expression} AS TIMESTAMP_NTZ)"
        )
        return f"TO_VARCHAR({value}, {_ISO})"

    def date_text(self, expression: str) -> str:
        return f"TO_VARCHAR({expression}, 'YYYY-MM-DD')"


def _generic(type_text: str) -> str:
    text = type_text.strip().upper()
    if text.startswith(("TIMESTAMP_TZ", "TIMESTAMP_LTZ")):
        return "timestamp with time zone"
    if text.startswith(("TIMESTAMP_NTZ", "DATETIME")):
        return "timestamp"
    number = _NUMBER.fullmatch(text)
    if number is not None:
        return f"numeric({number[1]},{number[2]})" if number[2] != "0" else "bigint"
    if text in ("FLOAT", "FLOAT4", "FLOAT8", "DOUBLE", "REAL", "DOUBLE PRECISION"):
        return "float"
    return type_text


# The connector's type codes (snowflake.connector.constants.FIELD_TYPES), by name.
_TYPE_CODES = {
    0: "NUMBER",
    1: "FLOAT",
    2: "VARCHAR",
    3: "DATE",
    4: "TIMESTAMP_LTZ",
    5: "VARIANT",
    6: "TIMESTAMP_LTZ",
    7: "TIMESTAMP_TZ",
    8: "TIMESTAMP_NTZ",
    9: "OBJECT",
    10: "ARRAY",
    11: "BINARY",
    12: "TIME",
    13: "BOOLEAN",
}


def _described(field: Any) -> str:
    """A result column's full type, from the connector's description of it."""
    name = _TYPE_CODES.get(int(field.type_code), "VARIANT")
    if name == "NUMBER":
        return f"NUMBER({field.precision or 38},{field.scale or 0})"
    if name == "VARCHAR" and field.internal_size:
        return f"VARCHAR({field.internal_size})"
    if name.startswith("TIMESTAMP") or name == "TIME":
        return f"{name}({9 if field.scale is None else field.scale})"
    return name


def connect_arguments(
    options: Mapping[str, str], secrets: Mapping[str, str], url: str | None = None
) -> dict[str, Any]:
    """snowflake.connector.connect's arguments from a warehouse profile's keys, its secrets and
    the endpoint its url names (the account's own when None)."""
    arguments: dict[str, Any] = {
        "account": options["account"],
        "user": options["user"],
        "database": options["database"],
        "schema": options.get("schema", "PUBLIC"),
        # Server-side binding: values never become SQL text, and a % in a SELECT stays itself.
        "paramstyle": "qmark",
        "autocommit": True,
        "login_timeout": 60,
        # Pinned so timestamps read and hash the same whatever the account's default zone.
        "session_parameters": {"TIMEZONE": "UTC", "QUERY_TAG": "etl-craft"},
    }
    for key in ("role", "warehouse"):
        if key in options:
            arguments[key] = options[key]
    if url is not None:
        endpoint = urlsplit(url)
        arguments["protocol"] = endpoint.scheme or "https"
        arguments["host"] = endpoint.hostname
        arguments["port"] = endpoint.port or (443 if arguments["protocol"] == "https" else 80)
    if "password" in secrets:
        arguments["password"] = secrets["password"]
    if "key_file" in options:
        arguments["private_key_file"] = options["key_file"]
        if "private_key_passphrase" in secrets:
            arguments["private_key_file_pwd"] = secrets["private_key_passphrase"]
    if arguments.get("protocol") == "http":
        # A local endpoint (an emulator) has no telemetry service to send to, and answers an
        # error it can't describe with HTTP 500, which the connector would retry for minutes.
        arguments["session_parameters"]["CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED"] = False
        arguments["network_timeout"] = 10
    return arguments


class SnowflakeConnection(WarehouseConnection):
    # An action's fence is taken with its ledger row, after its writes (warehouse.fence): its
    # stages and schema changes are DDL, which Snowflake commits on its own, so a fence taken
    # first would be committed by the first stage. Taken last, in the transaction of the writes,
    # a refused fence rolls them back, and a later attempt whose writes wait on this one's table
    # locks reads the fence this one leaves.
    publisher = TransactionalPublisher()

    def __init__(self, driver: Any, arguments: Mapping[str, Any]) -> None:
        self._driver = driver
        self._arguments = dict(arguments)
        self._conn = self._open()
        self.dialect = SnowflakeDialect()
        if not self._swaps():
            # An endpoint without Snowflake's ALTER TABLE ... SWAP WITH (the emulator the
            # tests run on, which also runs MERGE only outside a transaction): targets are
            # replaced by DELETE and INSERT, and the fence row is claimed by UPDATE then
            # INSERT, whose key that endpoint enforces. See docs/guides/snowflake.md.
            capabilities = replace(
                SnowflakeDialect.capabilities,
                replace_strategy=ReplaceStrategy.TRANSACTIONAL,
                upsert=Upsert.UPDATE_THEN_INSERT,
            )
            self.dialect.capabilities = capabilities  # type: ignore[misc]
        self._database: str | None = None
        self._rehearsing = False
        self._wrote = False  # the open transaction wrote a table other than a scratch one
        self._wanted = False  # a transaction was begun here
        self._open_on_server = False  # and Snowflake has opened it

    def _open(self) -> Any:
        try:
            return self._driver.connect(**self._arguments)
        except self._driver.Error as error:
            account = self._arguments.get("account")
            raise WarehouseError(
                f"can't connect to the Snowflake account {account} as "
                f"{self._arguments.get('user')}: {error}; check Warehouse.account, user, role "
                "and the password or key file variables in craft-connector.yml"
            ) from error

    def _swaps(self) -> bool:
        try:
            self._conn.cursor().execute(_SWAP_PROBE)
        except self._driver.Error as error:
            log.warning(
                "this Snowflake endpoint refuses ALTER TABLE ... SWAP WITH (%s): replacing by "
                "DELETE and INSERT, and claiming the fence row by UPDATE then INSERT, which "
                "relies on the endpoint enforcing the fence table's key; a live account never "
                "refuses it (check the role's grants on the session's schema if this is one)",
                " ".join(str(error).split())[:200],
            )
            return False
        return True

    def current_database(self) -> str:
        # The session never runs USE: the database it logged in to stays its own.
        if self._database is None:
            self._database = str(self._fetch_all("SELECT CURRENT_DATABASE()", ())[0][0])
        return self._database

    @contextmanager
    def rehearsal(self, target: TargetObject | None = None) -> Iterator[None]:
        # Snowflake can't roll DDL back: a rehearsal refuses any but its own scratch tables'.
        self._rehearsing = True
        try:
            with super().rehearsal(target):
                yield
        finally:
            self._rehearsing = False

    def columns(self, target: TargetObject) -> tuple[Column, ...]:
        # The catalog says whether it exists; DESCRIBE gives each type in full (precision).
        return tuple(Column(str(row[0]), str(row[1])) for row in self._describe(target))

    def numbered_columns(self, target: TargetObject) -> frozenset[str]:
        # DESCRIBE shows an identity column's default as IDENTITY START 1 INCREMENT 1 (the
        # emulator as the nextval of its sequence).
        return frozenset(
            str(row[0]).lower()
            for row in self._describe(target)
            if row[4] is not None and _NUMBERED.search(str(row[4]))
        )

    def _describe(self, target: TargetObject) -> list[Row]:
        if not super().columns(target):
            return []
        resolved = self.resolve(target)
        return self.fetch_all(
            f"describe {target}",
            f"DESCRIBE TABLE {resolved.database}.{resolved.schema}.{resolved.table}",
        )

    def stage_columns(self, stage: str) -> tuple[Column, ...]:
        described = self.fetch_all(f"describe {stage}", f"DESCRIBE TABLE {stage}")
        if described:
            return tuple(Column(str(row[0]), str(row[1])) for row in described)
        # An endpoint whose DESCRIBE doesn't see temporary tables (the emulator): the types
        # from the result's description, where a VARCHAR's length may be the largest one.
        sql, _ = self.dialect.stage_columns_query(stage)
        log.debug("read the columns of %s:\n%s", stage, sql)
        cursor = self._run(sql, ())
        return tuple(Column(str(field.name), _described(field)) for field in cursor.description)

    def interrupt(self) -> str:
        # Snowflake records the id of each query a session runs; a second session finds the
        # ones of this session still running and cancels each by its id.
        session = self._conn.session_id
        try:
            other = self._driver.connect(**self._arguments)
            try:
                cursor = other.cursor()
                cursor.execute(_RUNNING, [session])
                queries = [str(row[0]) for row in cursor.fetchall()]
                for query in queries:
                    cursor.execute("SELECT SYSTEM$CANCEL_QUERY(?)", [query])
            finally:
                other.close()
        except self._driver.Error as error:
            return (
                f"couldn't ask Snowflake to cancel the statement of session {session} ({error}): "
                f"it may still run; SELECT SYSTEM$CANCEL_ALL_QUERIES({session}) stops it"
            )
        if not queries:
            return f"no statement of Snowflake session {session} was running"
        return f"asked Snowflake to cancel query {', '.join(queries)} (SYSTEM$CANCEL_QUERY)"

    def close(self) -> None:
        self._conn.close()

    def _execute(self, sql: str, params: Sequence[object]) -> int:
        cursor = self._run(sql, params)
        return int(cursor.rowcount) if cursor.rowcount is not None else -1

    def _fetch_all(self, sql: str, params: Sequence[object]) -> list[Row]:
        return [tuple(row) for row in self._run(sql, params).fetchall()]

    def _run(self, sql: str, params: Sequence[object]) -> Any:
        ddl = _DDL.match(sql) is not None
        # A rehearsal's writes must stay uncommitted: no DDL after them, none outside scratch.
        if self._rehearsing and ddl and (self._wrote or not _SCRATCH_DDL.match(sql)):
            raise WarehouseError(
                "a rehearsal on Snowflake stops before this statement, because Snowflake "
                f"commits DDL at once and can't undo it: {sql.splitlines()[0]}; the preview "
                "counts what the action would do only where it changes no table's definition"
            )
        if _WRITE.match(sql) and not _SCRATCH_WRITE.match(sql):
            self._wrote = True
        if ddl:
            if self._open_on_server:
                # Snowflake would commit it before the DDL: said here, so both sides agree
                # that the next statement starts a new transaction.
                self._send("COMMIT", ())
                self._open_on_server = False
                self._wrote = False
        elif self._wanted and not self._open_on_server:
            self._send("BEGIN", ())
            self._open_on_server = True
        return self._send(sql, params)

    def _send(self, sql: str, params: Sequence[object]) -> Any:
        cursor = self._conn.cursor()
        try:
            cursor.execute(sql, list(params) if params else None)
        except self._driver.Error as error:
            raise WarehouseError(f"Snowflake refused a statement: {error}") from error
        return cursor

    def _begin(self) -> None:
        self._wanted = True
        self._open_on_server = False

    def _commit(self) -> None:
        self._wanted = self._wrote = False
        if self._open_on_server:
            self._open_on_server = False
            self._send("COMMIT", ())

    def _rollback(self) -> None:
        self._wanted = self._wrote = False
        if self._open_on_server:
            self._open_on_server = False
            try:
                self._send("ROLLBACK", ())
            except WarehouseError as error:
                # Best effort, so the error that caused the rollback is the one reported.
                log.warning("Snowflake refused the rollback: %s", error)

    @contextmanager
    def _target_lock(self, target: TargetObject) -> Iterator[None]:
        # Snowflake locks a table for the UPDATE, DELETE and MERGE statements of a transaction
        # until it ends; the fence, taken in the same transaction, orders the attempts.
        with self.transaction():
            yield

    def lock_schema(self, schema: str) -> None:
        pass  # CREATE SCHEMA IF NOT EXISTS runs on its own in Snowflake and tolerates a race
