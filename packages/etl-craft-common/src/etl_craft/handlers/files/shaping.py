"""Hold each file to the load's columns: header checked, every value converted to its type.

A file that does not fit is refused with its name, line and column, before anything lands.
"""

from __future__ import annotations

from etl_craft.core.errors import TaskError
from etl_craft.handlers.files.readers import RawFile
from etl_craft.handlers.files.spec import FileFormat
from etl_craft.handlers.files.types import CONVERTERS, TYPE_FORM, Kind, infer_type, kind_of
from etl_craft.warehouse.dialect import Column

Record = tuple[object, ...]
_DECLARED_AS = {
    Kind.INTEGER: "BIGINT",
    Kind.FLOAT: "DOUBLE PRECISION",
    Kind.BOOLEAN: "BOOLEAN",
    Kind.DATE: "DATE",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.TIMESTAMP_TZ: "TIMESTAMP WITH TIME ZONE",
    Kind.TEXT: "TEXT",
}


def inferred_columns(files: list[RawFile]) -> tuple[Column, ...]:
    """Columns from the files themselves: the first file's names, each typed by all its values."""
    first = files[0]
    names = list(first.names)
    for other in files[1:]:
        names += [name for name in other.names if name not in names]
    if first.types is not None:
        return tuple(Column(n, _file_type(t)) for n, t in zip(names, first.types, strict=False))
    return tuple(
        Column(name, infer_type([values.get(name) for f in files for _, values in f.rows]))
        for name in names
    )


def _file_type(type_text: str) -> str:
    # Parquet's own type, written as a type both warehouses create.
    if TYPE_FORM.fullmatch(type_text):
        return type_text.upper()
    kind = kind_of(type_text)
    return type_text.upper() if kind is Kind.DECIMAL else _DECLARED_AS[kind]


def typed_rows(raw: RawFile, columns: tuple[Column, ...], file_format: FileFormat) -> list[Record]:
    """The file's rows as values of ``columns``; TaskError at the first that does not fit."""
    _check_names(raw, columns, file_format)
    converters = [CONVERTERS[kind_of(column.type)] for column in columns]
    rows: list[Record] = []
    for line, values in raw.rows:
        # Names match case-insensitively, as unquoted names do in the warehouse.
        lowered = {name.lower(): value for name, value in values.items()}
        record = []
        for column, convert in zip(columns, converters, strict=True):
            value = lowered.get(column.key)
            record.append(None if value is None else _convert(raw, line, column, convert, value))
        rows.append(tuple(record))
    return rows


def _convert(raw: RawFile, line: int, column: Column, convert: object, value: object) -> object:
    assert callable(convert)
    try:
        return convert(value)
    except (ValueError, TypeError, OverflowError) as error:
        raise TaskError(
            f"file {raw.label} line {line} column {column.name}: {str(value)!r:.80} is not a "
            f"{column.type} ({error}); fix the file, or the column's type in FILE_COLUMNS"
        ) from None


def _check_names(raw: RawFile, columns: tuple[Column, ...], file_format: FileFormat) -> None:
    expected = [column.key for column in columns]
    listed = ", ".join(column.name for column in columns)
    if file_format is FileFormat.JSONL:
        for line, values in raw.rows:
            unknown = [key for key in values if key.lower() not in expected]
            if unknown:
                raise TaskError(
                    f"file {raw.label} line {line} has the key {unknown[0]!r}, which is not a "
                    f"column of the load (expected only {listed}); fix the file, or add the "
                    "column to FILE_COLUMNS"
                )
        return
    found = [name.lower() for name in raw.names]
    if found == expected:
        return
    for position, (name, wanted) in enumerate(zip(found, expected, strict=False), start=1):
        if name != wanted:
            raise TaskError(_header(raw, file_format, position, repr(name), wanted, listed))
    position = min(len(found), len(expected)) + 1
    if len(found) > len(expected):
        raise TaskError(
            _header(raw, file_format, position, repr(found[position - 1]), "no column", listed)
        )
    raise TaskError(_header(raw, file_format, position, "nothing", expected[position - 1], listed))


def _header(
    raw: RawFile, file_format: FileFormat, position: int, found: str, wanted: str, listed: str
) -> str:
    where = "line 1 (header)" if file_format is FileFormat.CSV else "schema"
    return (
        f"file {raw.label} {where} column {position}: found {found}, expected {wanted} (the "
        f"load's columns are {listed}); nothing landed and the offset is unchanged: fix the "
        "file's header, or FILE_COLUMNS"
    )
