"""What a warehouse can do, as data, and the SQL fragments that differ between warehouses."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from etl_craft.core.errors import SqlGuardError
from etl_craft.warehouse.targets import TargetObject


class UpdateStrategy(StrEnum):
    """How rows of an existing target change."""

    UPDATE_FROM = "UPDATE_FROM"  # UPDATE target t SET ... FROM stage s WHERE ...
    MERGE = "MERGE"  # MERGE INTO target t USING stage s ... WHEN MATCHED THEN UPDATE
    # No UPDATE or DELETE on the table format: the target's whole new state is computed by one
    # set-based SELECT into a candidate, which the publication then puts in the target's place.
    REWRITE = "REWRITE"


class ReplaceStrategy(StrEnum):
    """How OVERWRITE_TABLE and CREATE_TABLE replace a target's rows so no reader sees a half."""

    TRANSACTIONAL = "TRANSACTIONAL"  # delete and refill inside one transaction
    SWAP = "SWAP"  # fill a candidate table, then swap it with the target in one operation


class Publication(StrEnum):
    """What makes an attempt's writes visible at once, and where its fence is checked."""

    # One warehouse transaction holds the fence row, the data and the ledger row (PostgreSQL,
    # DuckDB, Snowflake): a refused fence rolls everything back.
    TRANSACTION = "TRANSACTION"
    # One table snapshot carries the data and the attempt id (Iceberg): the commit checks the
    # fence against the snapshots already there and is refused if a later attempt committed.
    SNAPSHOT = "SNAPSHOT"
    # A candidate table published by one catalog operation (Spark): the fence is checked just
    # before that operation, which leaves a window the warehouse's guide describes.
    CATALOG_SWAP = "CATALOG_SWAP"


class QueryCancel(StrEnum):
    """How a running statement is stopped in the warehouse when its attempt is cancelled."""

    NONE = "NONE"  # the statement may run on after the process ends
    CONNECTION = "CONNECTION"  # the driver cancels its connection's statement from another thread
    QUERY_ID = "QUERY_ID"  # a second session cancels the recorded query id
    TAG = "TAG"  # the session's operations carry a tag that is interrupted as one


class Upsert(StrEnum):
    """How a row is inserted or, when its key is there, updated (the fence row)."""

    ON_CONFLICT = "ON_CONFLICT"  # INSERT ... ON CONFLICT DO UPDATE ... RETURNING
    MERGE = "MERGE"  # MERGE ... WHEN MATCHED THEN UPDATE WHEN NOT MATCHED THEN INSERT
    # UPDATE, then INSERT ... WHERE NOT EXISTS: for a warehouse that enforces the key's
    # uniqueness, so two first inserts can't both commit.
    UPDATE_THEN_INSERT = "UPDATE_THEN_INSERT"
    # INSERT ... WHERE NOT EXISTS, then UPDATE only where the row was already there: for a
    # warehouse where one writer publishes at a time and the key's uniqueness fails a second
    # first insert (DuckDB, whose ON CONFLICT costs several times the two plain statements).
    INSERT_THEN_UPDATE = "INSERT_THEN_UPDATE"


class IdentifierCase(StrEnum):
    LOWER = "lower"
    UPPER = "upper"


@dataclass(frozen=True)
class Capabilities:
    """What a warehouse can do, as data: the SQL actions choose a strategy from these, never from
    the warehouse's name."""

    transactions: bool
    update_strategy: UpdateStrategy
    replace_strategy: ReplaceStrategy
    temporary_tables: bool
    # How the warehouse folds unquoted names; None keeps them as written and matches them
    # case-insensitively.
    identifier_case: IdentifierCase | None
    # Whether an index and fresh statistics on the stage make set-based updates fast.
    index_stage: bool
    # Whether TARGET_OBJECT may name a database other than the connection's.
    cross_database: bool
    publication: Publication = Publication.TRANSACTION
    # Whether a new target's ROW_ID can be an identity column the warehouse numbers itself;
    # otherwise etl-craft numbers new rows from MAX(ROW_ID) under the target's mutation lock.
    identity_columns: bool = False
    query_cancel: QueryCancel = QueryCancel.NONE
    upsert: Upsert = Upsert.ON_CONFLICT
    # Whether the ledger keeps a record per merge target of what its HASH_KEY values are proven
    # to hash (warehouse.hash_record), so a merge compares columns and hashes only the rows
    # that differ; without it every staged row is hashed.
    hash_record: bool = False
    # Whether a WITH may hold an INSERT whose RETURNING rows feed the statement's own INSERT:
    # the fence claim and the ledger row then go to the warehouse as one statement.
    writable_ctes: bool = False


@dataclass(frozen=True)
class Column:
    name: str
    type: str

    @property
    def key(self) -> str:
        return self.name.lower()


class TypeKind(StrEnum):
    FLOAT = "FLOAT"
    TIMESTAMP_TZ = "TIMESTAMP_TZ"
    TIMESTAMP = "TIMESTAMP"
    DATE = "DATE"
    DECIMAL = "DECIMAL"
    BOOLEAN = "BOOLEAN"
    OTHER = "OTHER"


_FLOATS = {"real", "double precision", "double", "float", "float4", "float8"}
_DECIMAL = re.compile(r"(?:numeric|decimal)\s*\(\s*\d+\s*,\s*\d+\s*\)")


def type_kind(type_text: str) -> TypeKind:
    text = type_text.strip().lower()
    if text in _FLOATS:
        return TypeKind.FLOAT
    if text.startswith("timestamp"):
        zoned = "with time zone" in text or text == "timestamptz"
        return TypeKind.TIMESTAMP_TZ if zoned else TypeKind.TIMESTAMP
    if text == "date":
        return TypeKind.DATE
    if _DECIMAL.fullmatch(text):
        return TypeKind.DECIMAL
    if text in ("boolean", "bool"):
        return TypeKind.BOOLEAN
    return TypeKind.OTHER


# The version of Dialect.change_hash's canonical text. Raise it whenever that text changes:
# HASH_KEY values of two versions never match, so a merge would see every row as changed.
CHANGE_HASH_VERSION = 2


@dataclass(frozen=True)
class Comments:
    """What the warehouse says of a table and of its columns (keyed by lower-case name)."""

    table: str | None
    columns: Mapping[str, str]


class Dialect(ABC):
    """The SQL that differs between warehouses; everything else is written once in statements."""

    name: ClassVar[str]
    sqlglot_name: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    placeholder: ClassVar[str]

    @abstractmethod
    def columns_query(self, target: TargetObject) -> tuple[str, list[object]]:
        """Name and full type of each column of a table, in order."""

    @abstractmethod
    def comments_query(self, target: TargetObject) -> tuple[str, list[object]]:
        """(column name, comment) of each commented column, and (NULL, comment) of the table."""

    @abstractmethod
    def stage_columns_query(self, stage: str) -> tuple[str, list[object]]:
        """The same for a temporary table of this session."""

    def render_type(self, generic: str) -> str:
        """A type etl-craft declares itself (audit columns, bound values), written in PostgreSQL
        terms, in this warehouse's own spelling."""
        # Imported here: a dialect's names and columns (a file spec read by `etl-craft list`)
        # need no SQL parser.
        from sqlglot import exp  # noqa: PLC0415

        return exp.DataType.build(generic, dialect="postgres").sql(self.sqlglot_name)

    @abstractmethod
    def timestamp_text(self, expression: str, *, zoned: bool) -> str:
        """ISO 8601 text with six fractional digits; zoned values are read in UTC."""

    @abstractmethod
    def date_text(self, expression: str) -> str:
        """YYYY-MM-DD."""

    def canonical_text(self, expression: str, column: Column, *, strict: bool = True) -> str:
        """The value's text form that every warehouse renders identically."""
        kind = type_kind(column.type)
        if kind is TypeKind.FLOAT and strict:
            raise SqlGuardError(
                f"MERGE_COMPARE_COLUMNS includes {column.name} ({column.type}): floats have no "
                "stable text form; cast it to DECIMAL in the SELECT or leave it out of "
                "MERGE_COMPARE_COLUMNS"
            )
        if kind in (TypeKind.TIMESTAMP_TZ, TypeKind.TIMESTAMP):
            return self.timestamp_text(expression, zoned=kind is TypeKind.TIMESTAMP_TZ)
        if kind is TypeKind.DATE:
            return self.date_text(expression)
        if kind is TypeKind.DECIMAL:
            return f"CAST(CAST({expression} AS {column.type}) AS VARCHAR)"
        if kind is TypeKind.BOOLEAN:
            return f"CASE WHEN {expression} THEN 'true' ELSE 'false' END"
        return f"CAST({expression} AS VARCHAR)"

    def same_hashed(self, left: str, right: str, column: Column) -> str:
        """True when two values of ``column``'s type give its part of the change hash the same
        text (NULL only with NULL): compared as values where that says the same, which is
        cheaper than rendering both."""
        text = " ".join(column.type.lower().split())
        if text in _EXACT_TYPES or _DECIMAL.fullmatch(text):
            return f"{left} IS NOT DISTINCT FROM {right}"
        if text in _TEXT_TYPES or text.startswith(_TEXT_PREFIXES):
            return self.same_text(left, right)
        # The canonical text of a value is never NULL (a boolean's is never NULL at all).
        compared = self.same_text(
            self.canonical_text(left, column), self.canonical_text(right, column)
        )
        return (
            f"(CASE WHEN {left} IS NULL THEN {right} IS NULL "
            f"ELSE {right} IS NOT NULL AND {compared} END)"
        )

    def same_text(self, left: str, right: str) -> str:
        """Two texts (NULL only with NULL) equal byte for byte, whatever collation their
        columns have."""
        return f"{left} IS NOT DISTINCT FROM {right}"

    def change_hash(self, alias: str, columns: tuple[Column, ...], *, strict: bool = True) -> str:
        """Version CHANGE_HASH_VERSION: MD5 over NULL-marked, length-prefixed canonical values."""
        parts = []
        for column in columns:
            value = f"{alias}.{column.name}"
            text = self.canonical_text(value, column, strict=strict)
            # One concat per column and one over them all: chained || copies the text at each
            # step, which costs more than the MD5 itself on a wide stage.
            parts.append(
                f"CASE WHEN {value} IS NULL THEN 'N' "
                f"ELSE CONCAT('V', LENGTH({text}), ':', {text}) END"
            )
        return f"MD5({_concat(parts)})" if parts else "MD5('')"


# Types whose values are equal exactly when their canonical texts are: integers, dates,
# booleans, timestamps to the microsecond (a zoned one's text is its instant's, in UTC), and
# DECIMAL(p,s), whose scale is fixed.
_EXACT_TYPES = frozenset(
    {
        "smallint",
        "integer",
        "int",
        "bigint",
        "int2",
        "int4",
        "int8",
        "tinyint",
        "hugeint",
        "utinyint",
        "usmallint",
        "uinteger",
        "ubigint",
        "date",
        "boolean",
        "bool",
        "timestamp",
        "timestamp without time zone",
        "timestamp with time zone",
        "timestamptz",
    }
)
_TEXT_TYPES = frozenset({"varchar", "text", "character varying", "string"})
_TEXT_PREFIXES = ("varchar(", "character varying(")

# PostgreSQL passes a function at most 100 arguments; a wider table concatenates in groups.
_CONCAT_ARGUMENTS = 50


def _concat(parts: list[str]) -> str:
    if len(parts) <= _CONCAT_ARGUMENTS:
        return f"CONCAT({', '.join(parts)})"
    groups = [parts[i : i + _CONCAT_ARGUMENTS] for i in range(0, len(parts), _CONCAT_ARGUMENTS)]
    return _concat([_concat(group) for group in groups])
