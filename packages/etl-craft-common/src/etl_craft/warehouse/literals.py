"""Pipeline parameter values read by their PARAMETER_TYPE and written as SQL literals.

A value reaches a task's SQL only as a literal that sqlglot renders for the warehouse's dialect,
so a quote or a semicolon in it is data: text is never pasted into the statement.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import TYPE_CHECKING

from etl_craft.core.ranges import INTEGER_PARAMETER
from etl_craft.warehouse.targets import IDENTIFIER

if TYPE_CHECKING:
    from sqlglot import exp


class ParameterKind(StrEnum):
    """The values of CFG_PIPELINE_PARAMETERS.PARAMETER_TYPE (its CHECK constraint)."""

    STRING = "STRING"
    INT = "INT"
    DECIMAL = "DECIMAL"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    JSON = "JSON"
    IDENTIFIER = "IDENTIFIER"  # a name: `$$ident.NAME` puts it where a table or column stands


EXPECTED = {
    ParameterKind.STRING: "any text",
    ParameterKind.INT: (
        f"a whole number such as 42, from {INTEGER_PARAMETER.minimum} to "
        f"{INTEGER_PARAMETER.maximum} (a BIGINT)"
    ),
    ParameterKind.DECIMAL: "a decimal number such as 12.50",
    ParameterKind.BOOLEAN: "Y, N, TRUE or FALSE",
    ParameterKind.DATE: "a date such as 2026-01-31",
    ParameterKind.JSON: 'JSON text such as {"days": 3}',
    ParameterKind.IDENTIFIER: "a plain name such as client_a or lnd.client_a (letters, digits "
    "and underscores, not starting with a digit; up to three parts separated by dots)",
}
_WHOLE = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_TYPES = {
    ParameterKind.STRING: "TEXT",
    ParameterKind.INT: "BIGINT",
    ParameterKind.DECIMAL: "DECIMAL",
    ParameterKind.BOOLEAN: "BOOLEAN",
    ParameterKind.DATE: "DATE",
    ParameterKind.JSON: "JSON",
    ParameterKind.IDENTIFIER: "TEXT",
}
# What a placeholder holds where only the type matters (lineage, validate's parse).
_SAMPLES = {
    ParameterKind.STRING: "",
    ParameterKind.INT: "0",
    ParameterKind.DECIMAL: "0.0",
    ParameterKind.BOOLEAN: "N",
    ParameterKind.DATE: "2000-01-01",
    ParameterKind.JSON: "null",
    ParameterKind.IDENTIFIER: "x",
}

Value = str | int | Decimal | bool | date | None


@dataclass(frozen=True)
class JsonText:
    """JSON text, checked to parse, written as a JSON-typed literal."""

    text: str


def parameter_kind(type_name: str) -> ParameterKind:
    """The kind of a PARAMETER_TYPE; an unknown name (the CHECK constraint allows none) is text."""
    try:
        return ParameterKind(type_name.upper())
    except ValueError:
        return ParameterKind.STRING


def read_value(kind: ParameterKind, text: str | None) -> Value | JsonText:
    """The typed value of ``text``; ValueError when it doesn't read as ``kind``."""
    if text is None:
        return None
    if kind is ParameterKind.STRING:
        return text
    if kind is ParameterKind.IDENTIFIER and _is_name(text):
        return text
    value = text.strip()
    if kind is ParameterKind.INT and _WHOLE.fullmatch(value):
        whole = int(value)
        if INTEGER_PARAMETER.problem(whole) is None:
            return whole
    if kind is ParameterKind.DECIMAL and _DECIMAL.fullmatch(value):
        return Decimal(value)
    if kind is ParameterKind.BOOLEAN and value.upper() in ("Y", "N", "TRUE", "FALSE"):
        return value.upper() in ("Y", "TRUE")
    if kind is ParameterKind.DATE:
        return date.fromisoformat(value)
    if kind is ParameterKind.JSON:
        json.loads(value)
        return JsonText(value)
    raise ValueError(f"{text!r} is not {EXPECTED[kind]}")


def value_problem(kind: ParameterKind, text: str | None) -> str | None:
    """What a value should look like when it doesn't read as ``kind``, or None."""
    try:
        read_value(kind, text)
    except (ValueError, InvalidOperation):
        return EXPECTED[kind]
    return None


def sql_literal(kind: ParameterKind, value: Value | JsonText, dialect: str) -> str:
    """``value`` as a literal of ``kind`` in the sqlglot ``dialect``: it reads as one operand."""
    return _expression(kind, value).sql(dialect=dialect)


def placeholder(kind: ParameterKind, dialect: str) -> str:
    """A literal of ``kind`` that parses as a run's literal would, for checks of the SQL."""
    return sql_literal(kind, read_value(kind, _SAMPLES[kind]), dialect)


def sql_identifier(name: str, dialect: str) -> str:
    """An IDENTIFIER value as the dialect names it: each part folded as the warehouse folds an
    unquoted name, then quoted, so it names the same table and can never read as SQL."""
    if not _is_name(name):
        raise ValueError(f"{name!r} is not {EXPECTED[ParameterKind.IDENTIFIER]}")
    # sqlglot is imported when SQL is written: validating values (etl-craft list) needs none.
    from sqlglot import exp  # noqa: PLC0415
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers  # noqa: PLC0415

    parts = (normalize_identifiers(exp.to_identifier(p), dialect=dialect) for p in name.split("."))
    return ".".join(part.sql(dialect=dialect, identify=True) for part in parts)


def _is_name(text: str) -> bool:
    parts = text.split(".")
    return len(parts) <= 3 and all(IDENTIFIER.fullmatch(part) for part in parts)


def _expression(kind: ParameterKind, value: Value | JsonText) -> exp.Expression:
    from sqlglot import exp  # noqa: PLC0415

    if value is None:
        return exp.cast(exp.null(), exp.DataType.build(_TYPES[kind]))
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | Decimal):
        digits = format(abs(value), "f") if isinstance(value, Decimal) else str(abs(value))
        number = exp.Literal.number(digits)
        # A bare minus after another one (x - -5) would start a -- comment.
        return exp.Paren(this=exp.Neg(this=number)) if value < 0 else number
    if isinstance(value, date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    if isinstance(value, JsonText):
        return exp.cast(exp.Literal.string(value.text), exp.DataType.build("JSON"))
    return exp.Literal.string(value)
