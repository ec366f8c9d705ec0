from __future__ import annotations

import logging
import re

import pytest
from sqlglot import exp

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column, Comments, UpdateStrategy
from etl_craft.warehouse.targets import TargetObject
from tests.integration.warehouse.conftest import open_warehouse
from tests.integration.warehouse.helpers import needs_transactions


def test_session_is_pinned_to_utc(
    warehouse_kind: str, warehouse_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Both would start in another zone: DuckDB takes the process's TZ, libpq sends PGTZ.
    monkeypatch.setenv("TZ", "America/New_York")
    monkeypatch.setenv("PGTZ", "America/New_York")
    warehouse = open_warehouse(warehouse_kind, warehouse_location)
    value = warehouse.fetch_value(
        "read a zoned timestamp as text",
        "SELECT CAST(CAST('2024-01-02 03:04:05+02' AS TIMESTAMP WITH TIME ZONE) AS VARCHAR)",
    )
    warehouse.close()
    assert str(value).startswith("2024-01-02 01:04:05")


def test_columns_keep_full_types(warehouse: WarehouseConnection, schema: str) -> None:
    warehouse.execute(
        "create",
        f"CREATE TABLE {schema}.t (id INTEGER, amount DECIMAL(12,2), "
        "seen_at TIMESTAMP WITH TIME ZONE)",
    )
    columns = warehouse.columns(TargetObject(schema, "T"))
    assert [column.key for column in columns] == ["id", "amount", "seen_at"]
    amount = Column(columns[1].name, columns[1].type.lower())
    assert amount in (Column("amount", "numeric(12,2)"), Column("amount", "decimal(12,2)"))
    assert not warehouse.exists(TargetObject(schema, "missing"))


def test_comments_of_a_table_and_its_columns(warehouse: WarehouseConnection, schema: str) -> None:
    warehouse.execute("create", f"CREATE TABLE {schema}.t (id INTEGER, note VARCHAR(20))")
    warehouse.execute("comment", f"COMMENT ON TABLE {schema}.t IS 'one row per order'")
    # Spark SQL escapes a quote with a backslash: '' would join two literals.
    quoted = exp.Literal.string("the order's number").sql(warehouse.dialect.sqlglot_name)
    warehouse.execute("comment", f"COMMENT ON COLUMN {schema}.t.id IS {quoted}")
    warehouse.execute("create", f"CREATE TABLE {schema}.plain (id INTEGER)")

    assert warehouse.comments(TargetObject(schema, "T")) == Comments(
        "one row per order", {"id": "the order's number"}
    )
    assert warehouse.comments(TargetObject(schema, "plain")) == Comments(None, {})
    assert warehouse.comments(TargetObject(schema, "missing")) == Comments(None, {})


def test_transaction_rolls_back_on_error(warehouse: WarehouseConnection, schema: str) -> None:
    needs_transactions(warehouse)
    warehouse.execute("create", f"CREATE TABLE {schema}.t (id INTEGER)")

    def insert_then_fail() -> None:
        with warehouse.transaction():
            warehouse.execute("insert", f"INSERT INTO {schema}.t VALUES (1)")
            warehouse.execute("fail", "SELECT CAST('x' AS INTEGER)")

    with pytest.raises(WarehouseError):
        insert_then_fail()
    assert warehouse.fetch_value("count", f"SELECT COUNT(*) FROM {schema}.t") == 0


def test_other_database_refused_on_postgresql(warehouse: WarehouseConnection) -> None:
    target = TargetObject("sales", "customers", "elsewhere")
    if warehouse.dialect.capabilities.cross_database:
        assert warehouse.resolve(target) == target
        return
    with pytest.raises(WarehouseError, match="names the database elsewhere.*can't write"):
        warehouse.resolve(target)


def test_statements_logged_with_count_and_duration(
    warehouse: WarehouseConnection, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    warehouse.execute("create", f"CREATE TABLE {schema}.t (id INTEGER)")
    with caplog.at_level(logging.DEBUG, logger="etl_craft.warehouse"):
        warehouse.execute("insert two", f"INSERT INTO {schema}.t VALUES (1), (2)")
    # An Iceberg connection also says which snapshot a statement outside a transaction committed.
    info = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and not r.getMessage().startswith("committed snapshot")
    ]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(info) == 1
    assert re.fullmatch(r"insert two: 2 row\(s\) in \d+\.\d ms", info[0])
    # A warehouse that rewrites statements also logs each one it runs in the statement's place.
    rewrites = warehouse.dialect.capabilities.update_strategy is UpdateStrategy.REWRITE
    assert debug[: 1 if rewrites else None] == [
        f"insert two:\nINSERT INTO {schema}.t VALUES (1), (2)"
    ]


def test_described_select_has_the_columns_a_table_made_of_it_gets(
    warehouse: WarehouseConnection, warehouse_kind: str, schema: str
) -> None:
    # SETUP_TABLE creates its target from these, and the stage of every other action is
    # checked with them before a row is read.
    if warehouse_kind not in ("duckdb", "postgresql"):
        pytest.skip(f"{warehouse_kind} stages the SELECT to learn its columns")
    select = (
        "SELECT CAST(1 AS INTEGER) AS id, CAST(2.5 AS DECIMAL(12,2)) AS amount, "
        "CAST('x' AS VARCHAR(7)) AS code, CURRENT_DATE AS day, 'free' AS note, "
        "1.5 AS ratio, CAST(NULL AS BIGINT) AS missing, "
        "CAST('2024-01-02 03:04:05+00' AS TIMESTAMP WITH TIME ZONE) AS seen_at"
    )
    described = warehouse.describe_select(select)
    warehouse.execute("create", f"CREATE TABLE {schema}.made AS {select}")
    assert described == warehouse.columns(TargetObject(schema, "made"))
    assert [column.key for column in described] == [
        "id", "amount", "code", "day", "note", "ratio", "missing", "seen_at"
    ]  # fmt: skip
