"""Built-in file loads through real runs: each file lands once per content, refused whole when
its header or a value does not fit, typed as declared or as the file says."""

from __future__ import annotations

import gzip
import json
import logging
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb

from etl_craft.enginedb.offsets import OffsetType
from etl_craft.handlers.files.load import load_files
from etl_craft.handlers.files.spec import read_spec
from etl_craft.scripting import ScriptContext
from etl_craft.warehouse import connect
from etl_craft.warehouse.targets import TargetObject
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.rehash.rehash_site import pipelines_sql
from tests.integration.running.test_supervisor_sql import supervise, task_statuses

ORDERS = {
    "FILE_PATTERN": "landing/orders/*.csv",
    "FILE_FORMAT": "CSV",
    "TARGET_OBJECT": "lnd.orders",
    "FILE_COLUMNS": "order_id BIGINT, customer TEXT, amount DECIMAL(10,2), ordered_on DATE",
    "OFFSET_TYPE": "TEXT",
}


def load_task(project: ProjectOnDisk, parameters: dict[str, str]) -> None:
    migration = pipelines_sql(("files", "load", parameters)).replace("'SQL'", "'PYTHON'")
    project.migrate("0001_files.sql", migration)


def write(project: ProjectOnDisk, name: str, text: str) -> Path:
    path = project.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def rows(project: ProjectOnDisk, sql: str) -> list[tuple[object, ...]]:
    assert project.connector.warehouse is not None
    with connect(project.connector.warehouse) as warehouse:
        return [tuple(row) for row in warehouse.fetch_all("read the target", sql)]


def column_types(project: ProjectOnDisk, table: str) -> dict[str, str]:
    assert project.connector.warehouse is not None
    with connect(project.connector.warehouse) as warehouse:
        found = warehouse.columns(TargetObject.parse(table))
    return {column.key: column.type.lower() for column in found}


def landed_files(project: ProjectOnDisk) -> dict[str, str] | None:
    with project.engine.read() as conn:
        value = execute(conn, "SELECT OFFSET_VALUE FROM AUD_TASK_OFFSETS").scalar()
    return None if value is None else dict(json.loads(str(value)))


def run(project: ProjectOnDisk, key: str) -> tuple[str, int | None]:
    run_id = project.new_run("files", run_key=f"manual:{key}")
    status = supervise(project, run_id)
    assert task_statuses(project, run_id)["load"][0] == status
    return status, task_statuses(project, run_id)["load"][1]


def error_of(project: ProjectOnDisk) -> str:
    with project.engine.read() as conn:
        value = execute(
            conn,
            "SELECT ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS WHERE ERROR_MESSAGE IS NOT NULL "
            "ORDER BY ATTEMPT_ID DESC",
        ).scalar()
    return str(value)


ORDER_ROWS = "SELECT order_id, customer, amount, ordered_on FROM lnd.orders ORDER BY order_id"


def test_a_file_lands_once_and_again_when_its_content_changes(project: ProjectOnDisk) -> None:
    load_task(project, ORDERS)
    first = "order_id,customer,amount,ordered_on\n1,ada,10.50,2026-01-02\n2,bob,,2026-01-03\n"
    write(project, "landing/orders/day1.csv", first)
    assert run(project, "1") == ("SUCCESS", 2)
    assert rows(project, ORDER_ROWS) == [
        (1, "ada", Decimal("10.50"), date(2026, 1, 2)),
        (2, "bob", None, date(2026, 1, 3)),
    ]
    offset = landed_files(project)
    assert offset is not None
    assert list(offset) == ["landing/orders/day1.csv"]

    # Nothing new: the same file is not landed twice.
    assert run(project, "2") == ("SUCCESS", 0)
    assert rows(project, "SELECT count(*) FROM lnd.orders") == [(2,)]
    assert landed_files(project) == offset

    # A new file lands alone; a changed file under the same name lands again.
    write(
        project,
        "landing/orders/day2.csv",
        "order_id,customer,amount,ordered_on\n3,cy,1,2026-01-04\n",
    )
    write(project, "landing/orders/day1.csv", first + "4,dee,4.25,2026-01-05\n")
    assert run(project, "3") == ("SUCCESS", 4)
    assert rows(project, ORDER_ROWS) == [
        (1, "ada", Decimal("10.50"), date(2026, 1, 2)),
        (1, "ada", Decimal("10.50"), date(2026, 1, 2)),
        (2, "bob", None, date(2026, 1, 3)),
        (2, "bob", None, date(2026, 1, 3)),
        (3, "cy", Decimal("1.00"), date(2026, 1, 4)),
        (4, "dee", Decimal("4.25"), date(2026, 1, 5)),
    ]
    changed = landed_files(project)
    assert changed is not None
    assert sorted(changed) == [
        "landing/orders/day1.csv",
        "landing/orders/day2.csv",
    ]
    assert changed["landing/orders/day1.csv"] != offset["landing/orders/day1.csv"]
    # Every row carries the task run that landed it, as a script's rows do.
    assert rows(
        project, "SELECT count(DISTINCT TASK_RUN_ID), min(DELETE_FLAG) FROM lnd.orders"
    ) == [(2, "N")]


def test_a_header_that_does_not_match_is_refused_and_nothing_lands(
    project: ProjectOnDisk,
) -> None:
    load_task(project, ORDERS | {"RETRIES": "0"})
    header = "order_id,customer,amount,ordered_on\n"
    write(project, "landing/orders/a.csv", header + "1,ada,1,2026-01-02\n")
    assert run(project, "1") == ("SUCCESS", 1)
    before = landed_files(project)

    write(
        project, "landing/orders/b.csv", "order_id,client,amount,ordered_on\n2,bob,2,2026-01-03\n"
    )
    write(project, "landing/orders/c.csv", header + "3,cy,3,2026-01-04\n")
    assert run(project, "2")[0] == "FAILED"
    assert (
        "file landing/orders/b.csv line 1 (header) column 2: found 'client', expected customer"
        in error_of(project)
    )
    # Neither the refused file nor the good one beside it landed, and the offset stayed.
    assert [row[0] for row in rows(project, ORDER_ROWS)] == [1]
    assert landed_files(project) == before

    write(project, "landing/orders/b.csv", header + "2,bob,2,2026-01-03\n")
    assert run(project, "3") == ("SUCCESS", 2)
    assert [row[0] for row in rows(project, ORDER_ROWS)] == [1, 2, 3]


def test_a_value_that_does_not_fit_its_type_is_refused_at_its_line(
    project: ProjectOnDisk,
) -> None:
    load_task(project, ORDERS | {"RETRIES": "0"})
    write(
        project,
        "landing/orders/a.csv",
        "order_id,customer,amount,ordered_on\n1,ada,1,2026-01-02\n2,bob,two,2026-01-03\n",
    )
    assert run(project, "1")[0] == "FAILED"
    assert "file landing/orders/a.csv line 3 column amount: 'two' is not a DECIMAL(10,2)" in (
        error_of(project)
    )
    assert landed_files(project) is None


JSONL = (
    '{"event_id": 1, "kind": "open", "score": 1.5, "seen_at": "2026-01-02T10:00:00", "ok": true}\n'
    '{"event_id": 2, "kind": "close", "score": 2, "seen_at": "2026-01-03T11:30:00", "ok": false}\n'
    '{"event_id": 3, "kind": null, "seen_at": "2026-01-04T00:00:00", "ok": true}\n'
)


def test_json_lines_land_with_types_inferred_from_their_values(project: ProjectOnDisk) -> None:
    load_task(
        project,
        {
            "FILE_PATTERN": "landing/events/*.jsonl",
            "FILE_FORMAT": "JSONL",
            "TARGET_OBJECT": "lnd.events",
        },
    )
    write(project, "landing/events/e1.jsonl", JSONL)
    assert run(project, "1") == ("SUCCESS", 3)
    assert rows(
        project, "SELECT event_id, kind, score, seen_at, ok FROM lnd.events ORDER BY 1"
    ) == [
        (1, "open", Decimal("1.5"), datetime(2026, 1, 2, 10), True),
        (2, "close", Decimal("2"), datetime(2026, 1, 3, 11, 30), False),
        (3, None, None, datetime(2026, 1, 4), True),
    ]
    types = column_types(project, "lnd.events")
    business = {name: types[name] for name in ("event_id", "kind", "score", "seen_at", "ok")}
    if project.connector.warehouse is not None and project.connector.warehouse.type == "duckdb":
        assert business == {
            "event_id": "bigint",
            "kind": "varchar",
            "score": "decimal(38,9)",
            "seen_at": "timestamp",
            "ok": "boolean",
        }
    else:
        assert business == {
            "event_id": "bigint",
            "kind": "text",
            "score": "numeric(38,9)",
            "seen_at": "timestamp without time zone",
            "ok": "boolean",
        }


def test_parquet_lands_with_the_types_the_file_declares(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    load_task(
        project,
        {
            "FILE_PATTERN": "landing/*.parquet",
            "FILE_FORMAT": "PARQUET",
            "TARGET_OBJECT": "lnd.items",
        },
    )
    (project.root / "landing").mkdir()
    with duckdb.connect() as writer:
        writer.execute(
            "COPY (SELECT * FROM (VALUES (1::INTEGER, 'pen', 2.50::DECIMAL(8,2), DATE '2026-02-01'),"
            " (2::INTEGER, NULL, 10.00::DECIMAL(8,2), DATE '2026-02-02')) v(item_id, name, price, "
            f"added_on)) TO '{project.root / 'landing' / 'items.parquet'}' (FORMAT PARQUET)"
        )
    assert run(project, "1") == ("SUCCESS", 2)
    assert rows(project, "SELECT item_id, name, price, added_on FROM lnd.items ORDER BY 1") == [
        (1, "pen", Decimal("2.50"), date(2026, 2, 1)),
        (2, None, Decimal("10.00"), date(2026, 2, 2)),
    ]
    types = column_types(project, "lnd.items")
    assert types["item_id"] == "integer"
    assert types["price"] in ("decimal(8,2)", "numeric(8,2)")
    assert types["added_on"] == "date"


def test_undeclared_csv_columns_are_inferred_once_then_held_to_the_table(
    project: ProjectOnDisk,
) -> None:
    load_task(
        project,
        {
            "FILE_PATTERN": "seeds/*.csv.gz",
            "FILE_FORMAT": "CSV",
            "TARGET_OBJECT": "ref.countries",
            "CSV_DELIMITER": ";",
            "RETRIES": "0",
        },
    )
    seeds = project.root / "seeds"
    seeds.mkdir()
    with gzip.open(seeds / "a.csv.gz", "wt") as handle:
        handle.write("code;eu;joined\nFR;true;1958-01-01\nCH;false;\n")
    assert run(project, "1") == ("SUCCESS", 2)
    assert rows(project, "SELECT code, eu, joined FROM ref.countries ORDER BY code") == [
        ("CH", False, None),
        ("FR", True, date(1958, 1, 1)),
    ]
    # The table, not this file, now says what a joined value is.
    with gzip.open(seeds / "b.csv.gz", "wt") as handle:
        handle.write("CODE;EU;JOINED\nNO;false;never\n")
    assert run(project, "2")[0] == "FAILED"
    assert "file seeds/b.csv.gz line 2 column joined: 'never' is not a" in error_of(project)
    assert rows(project, "SELECT count(*) FROM ref.countries") == [(2,)]


def test_a_task_with_both_a_script_and_a_file_pattern_runs_neither(
    project: ProjectOnDisk,
) -> None:
    load_task(project, ORDERS | {"SCRIPT": "pull.py", "RETRIES": "0"})
    write(project, "landing/orders/a.csv", "order_id,customer,amount,ordered_on\n")
    assert run(project, "1")[0] == "FAILED"
    assert "task load sets both SCRIPT ('pull.py') and FILE_PATTERN" in error_of(project)
    assert landed_files(project) is None


def attempt_context(project: ProjectOnDisk, attempt_id: int, offset: str | None) -> ScriptContext:
    return ScriptContext(
        offset=offset,
        offset_type=OffsetType.TEXT,
        input_params={},
        run_date=date(2026, 1, 1),
        pipeline_id=1,
        pipeline_run_id=1,
        task_id=1,
        task_run_id=7,
        attempt_id=attempt_id,
        log=logging.getLogger("test"),
        warehouse_settings=project.connector.warehouse,
    )


def test_a_retry_takes_back_what_its_task_run_landed_from_files_gone_since(
    project: ProjectOnDisk,
) -> None:
    spec = read_spec("load", ORDERS.get)
    path = write(project, "landing/orders/a.csv", "order_id,customer,amount,ordered_on\n1,a,1,\n")
    # The first attempt commits its rows, then dies before its SUCCESS (and offset) is recorded.
    first = load_files(spec, attempt_context(project, 1, None), project.root)
    assert (first.counts.rows_written, rows(project, "SELECT count(*) FROM lnd.orders")) == (
        1,
        [(1,)],
    )
    path.unlink()
    retry = load_files(spec, attempt_context(project, 2, None), project.root)
    assert (retry.counts.rows_written, retry.offset) == (0, None)
    assert rows(project, "SELECT count(*) FROM lnd.orders") == [(0,)]
