"""The column types a file load declares, and how a value read from a file becomes one."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.targets import is_identifier

# Types both DuckDB and PostgreSQL create under the same name; checked before any DDL uses one.
TYPE_FORM = re.compile(
    r"BIGINT|INTEGER|INT|SMALLINT|BOOLEAN|DATE|TEXT|REAL|DOUBLE PRECISION|TIMESTAMP"
    r"|TIMESTAMP WITH TIME ZONE|VARCHAR(?:\(\d+\))?|(?:DECIMAL|NUMERIC)\(\d+,\s*\d+\)",
    re.IGNORECASE,
)
TYPE_LIST = (
    "BIGINT, INTEGER, INT, SMALLINT, BOOLEAN, DATE, TEXT, VARCHAR(n), REAL, DOUBLE PRECISION, "
    "DECIMAL(p,s), TIMESTAMP, TIMESTAMP WITH TIME ZONE"
)
_TRUE = {"true", "t", "y", "yes", "1"}
_FALSE = {"false", "f", "n", "no", "0"}


class Kind(StrEnum):
    INTEGER = "INTEGER"
    DECIMAL = "DECIMAL"
    FLOAT = "FLOAT"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"
    TIMESTAMP_TZ = "TIMESTAMP_TZ"
    TEXT = "TEXT"


def kind_of(type_text: str) -> Kind:
    """What Python value a column of ``type_text`` (as declared, or as the warehouse says) holds."""
    text = " ".join(type_text.lower().split())
    if text in ("bigint", "integer", "int", "smallint", "int2", "int4", "int8", "hugeint"):
        return Kind.INTEGER
    if text.startswith(("decimal", "numeric")):
        return Kind.DECIMAL
    if text in ("real", "double", "double precision", "float", "float4", "float8"):
        return Kind.FLOAT
    if text in ("boolean", "bool"):
        return Kind.BOOLEAN
    if text == "date":
        return Kind.DATE
    if text in ("timestamptz", "timestamp with time zone"):
        return Kind.TIMESTAMP_TZ
    if text.startswith("timestamp"):
        return Kind.TIMESTAMP
    return Kind.TEXT


def parse_columns(text: str) -> tuple[Column, ...]:
    """FILE_COLUMNS ``name TYPE, name TYPE, ...`` as columns; ValueError naming the bad part."""
    columns = []
    for part in re.split(r",(?![^()]*\))", text):
        name, _, type_text = part.strip().partition(" ")
        type_text = " ".join(type_text.split())
        if not is_identifier(name):
            raise ValueError(
                f"{part.strip()!r} does not start with a plain column name; expected "
                "name TYPE, such as order_id BIGINT"
            )
        if not TYPE_FORM.fullmatch(type_text):
            raise ValueError(f"column {name} has type {type_text!r}; expected one of {TYPE_LIST}")
        columns.append(Column(name, type_text.upper()))
    seen = [c.key for c in columns]
    twice = sorted({key for key in seen if seen.count(key) > 1})
    if twice:
        raise ValueError(f"column {twice[0]} is declared twice; expected each name once")
    return tuple(columns)


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError(f"expected one of {', '.join(sorted(_TRUE | _FALSE))}")


def _integer(value: object) -> int:
    if isinstance(value, bool | float | Decimal):
        raise ValueError("expected a whole number")
    return value if isinstance(value, int) else int(str(value).strip())


def _decimal(value: object) -> Decimal:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    try:
        return Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError("expected a number") from None


def _float(value: object) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    return float(value) if isinstance(value, int | float | Decimal) else float(str(value))


def _date(value: object) -> date:
    if isinstance(value, datetime):
        raise ValueError("expected a date without a time")
    return value if isinstance(value, date) else date.fromisoformat(str(value).strip())


def _moment(value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    return datetime.fromisoformat(str(value).strip())


def _timestamp(value: object) -> datetime:
    # A zoned time in a column without zones is kept as its UTC time, as the session would.
    moment = _moment(value)
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


def _timestamp_tz(value: object) -> datetime:
    # A time without a zone in a zoned column is read as UTC, as the warehouse session is.
    moment = _moment(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _text(value: object) -> str:
    if isinstance(value, dict | list):
        raise ValueError("expected a text value, not a JSON object or array")
    return value if isinstance(value, str) else str(value)


CONVERTERS: dict[Kind, Callable[[object], object]] = {
    Kind.INTEGER: _integer,
    Kind.DECIMAL: _decimal,
    Kind.FLOAT: _float,
    Kind.BOOLEAN: _boolean,
    Kind.DATE: _date,
    Kind.TIMESTAMP: _timestamp,
    Kind.TIMESTAMP_TZ: _timestamp_tz,
    Kind.TEXT: _text,
}

# Inference tries the narrowest type first; a column no kind fits is TEXT.
_INFERRED = (
    (Kind.INTEGER, "BIGINT"),
    (Kind.DECIMAL, "DECIMAL(38,9)"),
    (Kind.BOOLEAN, "BOOLEAN"),
    (Kind.DATE, "DATE"),
    (Kind.TIMESTAMP, "TIMESTAMP"),
)


def infer_type(values: list[object]) -> str:
    """The narrowest declared type every non-NULL value converts to, TEXT when none does."""
    present = [v for v in values if v is not None]
    for kind, type_text in _INFERRED:
        if present and all(_fits(kind, value) for value in present):
            return type_text
    return "TEXT"


def _fits(kind: Kind, value: object) -> bool:
    if kind is Kind.DECIMAL and isinstance(value, float):
        return True
    if kind in (Kind.INTEGER, Kind.DECIMAL) and isinstance(value, str) and not value.strip():
        return False
    try:
        CONVERTERS[kind](value)
    except (ValueError, TypeError, OverflowError):
        return False
    return not (kind is Kind.BOOLEAN and isinstance(value, int | float) and value not in (0, 1))
