"""A file load's columns, readers and checks: each refusal names the file, line and column."""

from __future__ import annotations

import gzip
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from etl_craft.core.errors import MetadataError, TaskError
from etl_craft.handlers.files.readers import RawFile, read_file
from etl_craft.handlers.files.shaping import inferred_columns, typed_rows
from etl_craft.handlers.files.spec import FileFormat, FileLoadSpec, read_spec
from etl_craft.handlers.files.types import parse_columns
from etl_craft.warehouse.dialect import Column

COLUMNS = (Column("id", "BIGINT"), Column("name", "TEXT"), Column("at", "TIMESTAMP WITH TIME ZONE"))


def spec(file_format: FileFormat, **options: object) -> FileLoadSpec:
    return FileLoadSpec("in/*", file_format, "lnd.t", COLUMNS, **options)  # type: ignore[arg-type]


def load(
    path: Path, text: str, file_format: FileFormat, **options: object
) -> list[tuple[object, ...]]:
    path.write_text(text)
    chosen = spec(file_format, **options)
    return typed_rows(read_file(path, path.name, chosen), COLUMNS, file_format)


def test_declared_columns_keep_their_types_and_refuse_unknown_ones() -> None:
    assert parse_columns("id bigint, amount decimal(10, 2), seen timestamp with time zone") == (
        Column("id", "BIGINT"),
        Column("amount", "DECIMAL(10, 2)"),
        Column("seen", "TIMESTAMP WITH TIME ZONE"),
    )
    with pytest.raises(ValueError, match=r"column id has type 'MONEY'; expected one of BIGINT"):
        parse_columns("id MONEY")
    with pytest.raises(ValueError, match=r"'1st INT' does not start with a plain column name"):
        parse_columns("1st INT")
    with pytest.raises(ValueError, match="column id is declared twice"):
        parse_columns("id INT, ID TEXT")
    with pytest.raises(ValueError, match="has type 'INT; DROP TABLE x'"):
        parse_columns("id INT; DROP TABLE x")


def test_csv_values_take_their_types_and_empty_fields_are_null(tmp_path: Path) -> None:
    rows = load(tmp_path / "a.csv", "id,name,at\n1,ada,2026-01-02 03:04:05\n2,,\n", FileFormat.CSV)
    assert rows == [(1, "ada", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)), (2, None, None)]


def test_csv_options_read_a_headerless_tab_separated_gzipped_file(tmp_path: Path) -> None:
    path = tmp_path / "a.tsv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("7\t\\N\t2026-01-02T00:00:00+01:00\n")
    chosen = spec(FileFormat.CSV, header=False, delimiter="\t", null="\\N")
    assert typed_rows(read_file(path, "a.tsv.gz", chosen), COLUMNS, FileFormat.CSV) == [
        (7, None, datetime(2026, 1, 1, 23, tzinfo=UTC))
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,nom,at\n", "file a.csv line 1 (header) column 2: found 'nom', expected name"),
        ("id,name\n", "file a.csv line 1 (header) column 3: found nothing, expected at"),
        ("id,name,at,x\n", "file a.csv line 1 (header) column 4: found 'x', expected no column"),
        ("id,name,at\n1,a\n", "file a.csv line 2 has 2 field(s); expected 3 (id, name, at)"),
        ("id,name,at\n1,a,\nx,b,\n", "file a.csv line 3 column id: 'x' is not a BIGINT"),
        ("id,name,at\n1,a,yesterday\n", "file a.csv line 2 column at: 'yesterday' is not a"),
    ],
)
def test_a_csv_that_does_not_fit_is_refused_at_its_line_and_column(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(TaskError) as refused:
        load(tmp_path / "a.csv", text, FileFormat.CSV)
    assert message in str(refused.value)


def test_json_lines_refuse_an_unknown_key_and_read_a_missing_one_as_null(tmp_path: Path) -> None:
    good = '{"id": 1, "name": "ada"}\n\n{"ID": 2, "at": "2026-01-02T00:00:00Z"}\n'
    assert load(tmp_path / "a.jsonl", good, FileFormat.JSONL) == [
        (1, "ada", None),
        (2, None, datetime(2026, 1, 2, tzinfo=UTC)),
    ]
    with pytest.raises(TaskError, match=r"file a.jsonl line 2 has the key 'nick'"):
        load(tmp_path / "a.jsonl", '{"id": 1}\n{"id": 2, "nick": "b"}\n', FileFormat.JSONL)
    with pytest.raises(TaskError, match=r"file a.jsonl line 1 column id: '1.5' is not a BIGINT"):
        load(tmp_path / "a.jsonl", '{"id": 1.5}\n', FileFormat.JSONL)
    with pytest.raises(TaskError, match=r"file a.jsonl line 1 holds a JSON list"):
        load(tmp_path / "a.jsonl", "[1]\n", FileFormat.JSONL)


def test_inferred_columns_take_the_narrowest_type_every_value_fits(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text(
        "n,d,t,b,x,money,empty\n1,2026-01-02,2026-01-02 10:00:00,true,1,1.5,\n"
        "2,2026-01-03,2026-01-03,false,x,2,\n"
    )
    raw = read_file(path, "a.csv", FileLoadSpec("*", FileFormat.CSV, "lnd.t", None))
    assert inferred_columns([raw]) == (
        Column("n", "BIGINT"),
        Column("d", "DATE"),
        Column("t", "TIMESTAMP"),
        Column("b", "BOOLEAN"),
        Column("x", "TEXT"),
        Column("money", "DECIMAL(38,9)"),
        Column("empty", "TEXT"),
    )
    assert typed_rows(raw, inferred_columns([raw]), FileFormat.CSV)[1] == (
        2,
        date(2026, 1, 3),
        datetime(2026, 1, 3),
        False,
        "x",
        Decimal("2"),
        None,
    )


def parameters(**values: str) -> dict[str, str]:
    return {"FILE_PATTERN": "in/*.csv", "FILE_FORMAT": "CSV", "TARGET_OBJECT": "lnd.t"} | values


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"FILE_FORMAT": "XLSX"}, "FILE_FORMAT is 'XLSX'; expected one of CSV, JSONL, PARQUET"),
        ({"OFFSET_TYPE": "INT"}, "OFFSET_TYPE is 'INT'; a file load keeps the files it landed"),
        ({"FILE_COLUMNS": "id"}, "FILE_COLUMNS is 'id'; column id has type ''"),
        ({"FILE_PATTERN": "../x/*.csv"}, "FILE_PATTERN is '../x/*.csv'; expected a glob without"),
        ({"CSV_HEADER": "N"}, "CSV_HEADER is N but FILE_COLUMNS is not set"),
        ({"CSV_DELIMITER": ";;"}, "CSV_DELIMITER is ';;'; expected one character, or TAB"),
    ],
)
def test_the_attempt_refuses_parameters_that_do_not_fit(
    values: dict[str, str], message: str
) -> None:
    given = parameters(**values)
    with pytest.raises(MetadataError) as refused:
        read_spec("load", given.get)
    assert str(refused.value).startswith(f"task load: {message}")
    assert str(refused.value).endswith(" in CFG_TASK_PARAMETERS")


def test_times_are_held_to_their_column_having_a_zone_or_not() -> None:
    naive = (Column("at", "TIMESTAMP"),)
    zoned = (Column("at", "TIMESTAMP WITH TIME ZONE"),)
    raw = RawFile("a.jsonl", ("at",), [(1, {"at": "2026-01-02T01:00:00+02:00"})])
    assert typed_rows(raw, naive, FileFormat.JSONL) == [(datetime(2026, 1, 1, 23),)]
    assert typed_rows(raw, zoned, FileFormat.JSONL) == [(datetime(2026, 1, 1, 23, tzinfo=UTC),)]


def test_a_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes("id,name,at\n1,\u00e9mile,\n".encode("utf-8-sig"))
    raw = read_file(path, "a.csv", spec(FileFormat.CSV))
    assert typed_rows(raw, COLUMNS, FileFormat.CSV) == [(1, "\u00e9mile", None)]


def test_a_parquet_schema_is_held_to_the_declared_columns(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    with duckdb.connect() as writer:
        writer.execute(
            "COPY (SELECT 1 AS id, 'ada' AS nick, TIMESTAMP '2026-01-02 03:00:00' AS at) "
            f"TO '{path}' (FORMAT PARQUET)"
        )
    raw = read_file(path, "a.parquet", spec(FileFormat.PARQUET))
    with pytest.raises(TaskError, match=r"file a.parquet schema column 2: found 'nick', expected"):
        typed_rows(raw, COLUMNS, FileFormat.PARQUET)
    renamed = (COLUMNS[0], Column("nick", "TEXT"), COLUMNS[2])
    assert typed_rows(raw, renamed, FileFormat.PARQUET) == [
        (1, "ada", datetime(2026, 1, 2, 3, tzinfo=UTC))
    ]
    (tmp_path / "b.parquet").write_text("id,name\n")
    with pytest.raises(TaskError, match=r"file b.parquet can't be read as Parquet"):
        read_file(tmp_path / "b.parquet", "b.parquet", spec(FileFormat.PARQUET))
