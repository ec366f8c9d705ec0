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
    UPDATE_FROM = "UPDATE_FROM"  # UPDATE target t SET ... FROM stage s WHERE ...
    MERGE = "MERGE"  # MERGE INTO target t USING stage s ... WHEN MATCHED THEN UPDATE


class ReplaceStrategy(StrEnum):
    TRANSACTIONAL = "TRANSACTIONAL"  # drop/delete and refill inside one transaction
    CREATE_OR_REPLACE = "CREATE_OR_REPLACE"  # one atomic CREATE OR REPLACE ... AS
    COPY_AND_RESTORE = "COPY_AND_RESTORE"  # keep a copy, restore it on failure


class IdentifierCase(StrEnum):
    LOWER = "lower"
    UPPER = "upper"


@dataclass(frozen=True)
class Capabilities:
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


# PostgreSQL passes a function at most 100 arguments; a wider table concatenates in groups.
_CONCAT_ARGUMENTS = 50


def _concat(parts: list[str]) -> str:
    if len(parts) <= _CONCAT_ARGUMENTS:
        return f"CONCAT({', '.join(parts)})"
    groups = [parts[i : i + _CONCAT_ARGUMENTS] for i in range(0, len(parts), _CONCAT_ARGUMENTS)]
    return _concat([_concat(group) for group in groups])
