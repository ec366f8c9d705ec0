"""Read one CSV, JSON lines or Parquet file as named values per line, with no types applied yet.

CSV and JSON lines are read with the standard library, gzipped when the name ends in .gz;
Parquet through an in-memory DuckDB, whichever warehouse the rows land in.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import duckdb

from etl_craft.core.errors import TaskError
from etl_craft.handlers.files.spec import FileFormat, FileLoadSpec


@dataclass(frozen=True)
class RawFile:
    label: str  # how messages and the offset name the file
    names: tuple[str, ...]  # the header, the keys met, or the Parquet schema, in file order
    rows: list[tuple[int, dict[str, object]]]  # (line, values by name); Parquet: row number
    types: tuple[str, ...] | None = None  # the file's own column types (Parquet)


def read_file(path: Path, label: str, spec: FileLoadSpec) -> RawFile:
    if spec.format is FileFormat.CSV:
        return _csv(path, label, spec)
    if spec.format is FileFormat.JSONL:
        return _jsonl(path, label)
    return _parquet(path, label)


@contextmanager
def _text(path: Path) -> Iterator[TextIO]:
    # utf-8-sig: spreadsheet exports often start with a byte order mark, never part of a name.
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
            yield handle
    else:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            yield handle


def _csv(path: Path, label: str, spec: FileLoadSpec) -> RawFile:
    declared = tuple(c.name for c in spec.columns) if spec.columns is not None else None
    rows: list[tuple[int, dict[str, object]]] = []
    with _text(path) as handle:
        reader = csv.reader(handle, delimiter=spec.delimiter)
        names = declared
        if spec.header:
            header = next(reader, None)
            if header is None:
                return RawFile(label, declared or (), [])
            names = tuple(name.strip() for name in header)
        assert names is not None
        for record in reader:
            line = reader.line_num
            if len(record) != len(names):
                raise TaskError(
                    f"file {label} line {line} has {len(record)} field(s); expected "
                    f"{len(names)} ({', '.join(names)}): fix the file, or CSV_DELIMITER if it "
                    "splits fields otherwise"
                )
            values = (None if value == spec.null else value for value in record)
            rows.append((line, dict(zip(names, values, strict=True))))
    return RawFile(label, names, rows)


def _jsonl(path: Path, label: str) -> RawFile:
    names: dict[str, None] = {}
    rows: list[tuple[int, dict[str, object]]] = []
    with _text(path) as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                document = json.loads(text)
            except json.JSONDecodeError as error:
                raise TaskError(
                    f"file {label} line {line} is not JSON ({error.msg} at character "
                    f"{error.pos}); expected one JSON object per line: fix the file"
                ) from None
            if not isinstance(document, dict):
                raise TaskError(
                    f"file {label} line {line} holds a JSON {type(document).__name__}; expected "
                    "one JSON object per line: fix the file"
                )
            names.update(dict.fromkeys(document))
            rows.append((line, document))
    return RawFile(label, tuple(names), rows)


def _parquet(path: Path, label: str) -> RawFile:
    try:
        with duckdb.connect() as reader:
            described = reader.execute(
                "DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]
            ).fetchall()
            records = reader.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
    except duckdb.Error as error:
        raise TaskError(
            f"file {label} can't be read as Parquet ({error}); expected a Parquet file: fix "
            "the file, or FILE_FORMAT if it is not Parquet"
        ) from None
    names = tuple(str(row[0]) for row in described)
    rows = [
        (number, dict(zip(names, record, strict=True)))
        for number, record in enumerate(records, start=1)
    ]
    return RawFile(label, names, rows, tuple(str(row[1]) for row in described))
