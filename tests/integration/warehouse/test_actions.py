"""Row contents after every action, for both refresh types, on both warehouses."""

from __future__ import annotations

import logging

import pytest

from etl_craft.handlers.sql import Action
from etl_craft.handlers.sql.spec import DeleteMode, RefreshType
from etl_craft.warehouse.audit import AUDIT_COLUMNS
from etl_craft.warehouse.connection import WarehouseConnection
from tests.integration.warehouse.helpers import ACTOR, PIPELINE_ID, definition, rows, run, table

REFRESH = pytest.mark.parametrize("refresh", list(RefreshType))
DATA = "id, code, amount, note"
STAMPS = (
    "PIPELINE_ID, PIPELINE_RUN_ID, TASK_RUN_ID, CREATED_BY, UPDATED_BY, DELETE_FLAG, ACTIVE_FLAG"
)
ALL_ROWS: list[tuple[object, ...]] = [
    (1, "a", "1.50", None),
    (2, "b", "2.00", ""),
    (3, "c", "3.25", "x"),
]


def expected(refresh: RefreshType) -> list[tuple[object, ...]]:
    # Row 3 belongs to another pipeline: only a FULL refresh reads it through the filter.
    return ALL_ROWS if refresh is RefreshType.FULL else ALL_ROWS[:2]


@pytest.fixture
def source(warehouse: WarehouseConnection, schema: str) -> str:
    table(
        warehouse,
        f"{schema}.src",
        "id INTEGER, code VARCHAR(10), amount DECIMAL(12,2), note VARCHAR(20), pipeline_id BIGINT",
        f"(1, 'a', 1.50, NULL, {PIPELINE_ID}), (2, 'b', 2.00, '', {PIPELINE_ID}), "
        "(3, 'c', 3.25, 'x', 99)",
    )
    return f"SELECT {DATA} FROM {schema}.src WHERE $$pipeline_id_filter"


@REFRESH
def test_create_table(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, "SELECT 9 AS id", refresh=refresh)
    counts = run(warehouse, Action.CREATE_TABLE, target, source, refresh=refresh)
    want = expected(refresh)
    assert rows(warehouse, target, DATA) == want
    assert rows(warehouse, target, STAMPS) == [(PIPELINE_ID, 22, 33, ACTOR, ACTOR, "N", "Y")] * len(
        want
    )
    assert rows(warehouse, target, "ROW_ID") == [(n,) for n in range(1, len(want) + 1)]
    assert all(len(h) == 32 for (h,) in rows(warehouse, target, "HASH_KEY"))
    assert (counts.source, counts.inserted, counts.target) == (len(want),) * 3


@REFRESH
def test_setup_table_creates_once(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    counts = run(warehouse, Action.SETUP_TABLE, target, source, refresh=refresh, history=True)
    names = [name for name, _ in definition(warehouse, target)]
    audit = [column.key for column in AUDIT_COLUMNS]
    history = ["valid_from", "valid_to", "closed_pipeline_run_id", "closed_task_run_id"]
    assert names == ["id", "code", "amount", "note", *audit, *history]
    assert rows(warehouse, target, DATA) == []
    assert counts.rows_written == 0
    run(warehouse, Action.APPEND_TABLE, target, source, refresh=refresh)
    run(warehouse, Action.SETUP_TABLE, target, "SELECT 1 AS other", refresh=refresh)
    assert rows(warehouse, target, DATA) == expected(refresh)
    assert [name for name, _ in definition(warehouse, target)] == names


@REFRESH
def test_overwrite_table(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    run(warehouse, Action.APPEND_TABLE, target, "SELECT 7 AS id, 'z' AS code", task_run_id=1)
    counts = run(warehouse, Action.OVERWRITE_TABLE, target, source, refresh=refresh)
    assert rows(warehouse, target, DATA) == expected(refresh)
    assert (counts.deleted, counts.inserted) == (1, len(expected(refresh)))


@REFRESH
def test_append_table(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    run(warehouse, Action.APPEND_TABLE, target, source, refresh=refresh, task_run_id=1)
    run(warehouse, Action.APPEND_TABLE, target, source, refresh=refresh, task_run_id=2)
    want = expected(refresh)
    assert rows(warehouse, target, DATA) == sorted(want * 2, key=repr)
    assert rows(warehouse, target, "ROW_ID") == [(n,) for n in range(1, 2 * len(want) + 1)]
    assert rows(warehouse, target, "DISTINCT TASK_RUN_ID") == [(1,), (2,)]


@REFRESH
def test_scd1_merge(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    run(
        warehouse,
        Action.SCD1_MERGE,
        target,
        source,
        refresh=refresh,
        key=("id",),
        pipeline_run_id=1,
    )
    warehouse.execute("change the source", f"UPDATE {schema}.src SET amount = 1.75 WHERE id = 1")
    # '' -> NULL is a change: the hash tells NULL from empty text.
    warehouse.execute("change the source", f"UPDATE {schema}.src SET note = NULL WHERE id = 2")
    warehouse.execute(
        "add a row", f"INSERT INTO {schema}.src VALUES (4, 'd', 4.00, 'n', {PIPELINE_ID})"
    )
    counts = run(
        warehouse,
        Action.SCD1_MERGE,
        target,
        source,
        refresh=refresh,
        key=("id",),
        pipeline_run_id=2,
    )
    want = [
        (1, "a", "1.75", None),
        (2, "b", "2.00", None),
        *expected(refresh)[2:],
        (4, "d", "4.00", "n"),
    ]
    assert rows(warehouse, target, DATA) == want
    assert (counts.updated, counts.inserted) == (2, 1)
    assert rows(warehouse, target, "id, PIPELINE_RUN_ID") == sorted(
        [(1, 2), (2, 2), (4, 2), *([(3, 1)] if refresh is RefreshType.FULL else [])]
    )


def test_scd1_merge_composite_key_and_nulls(warehouse: WarehouseConnection, schema: str) -> None:
    target = f"{schema}.t"
    first = (
        "SELECT * FROM (VALUES (1, 'x', CAST(NULL AS VARCHAR(5))), (1, 'y', 'v')) v(id, part, val)"
    )
    second = (
        "SELECT * FROM (VALUES (1, 'x', 'now'), (1, 'y', CAST(NULL AS VARCHAR(5))), (2, 'x', '')) "
        "v(id, part, val)"
    )
    run(warehouse, Action.SETUP_TABLE, target, first)
    run(warehouse, Action.SCD1_MERGE, target, first, key=("id", "part"))
    counts = run(warehouse, Action.SCD1_MERGE, target, second, key=("id", "part"))
    assert rows(warehouse, target, "id, part, val") == [
        (1, "x", "now"),
        (1, "y", None),
        (2, "x", ""),
    ]
    assert (counts.updated, counts.inserted) == (2, 1)


@REFRESH
def test_scd2_merge_keeps_history(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source, history=True)
    run(warehouse, Action.SCD2_MERGE, target, source, refresh=refresh, key=("id",))
    warehouse.execute("change the source", f"UPDATE {schema}.src SET amount = 1.75 WHERE id = 1")
    counts = run(warehouse, Action.SCD2_MERGE, target, source, refresh=refresh, key=("id",))
    assert (counts.updated, counts.inserted) == (1, 1)
    history = rows(warehouse, target, f"{DATA}, ACTIVE_FLAG", "id = 1")
    assert history == [(1, "a", "1.50", None, "N"), (1, "a", "1.75", None, "Y")]
    (closed_to,) = rows(warehouse, target, "VALID_TO", "id = 1 AND ACTIVE_FLAG = 'N'")[0]
    opened_from, open_to = rows(
        warehouse, target, "VALID_FROM, VALID_TO", "id = 1 AND ACTIVE_FLAG = 'Y'"
    )[0]
    assert closed_to == opened_from
    assert open_to is None
    current = rows(warehouse, target, DATA, "ACTIVE_FLAG = 'Y'")
    assert current == [(1, "a", "1.75", None), *expected(refresh)[1:]]


@REFRESH
def test_delete_rows_hard(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, f"SELECT {DATA} FROM {schema}.src")
    keys = f"SELECT id FROM {schema}.src WHERE id <> 1 AND $$pipeline_id_filter"
    counts = run(warehouse, Action.DELETE_ROWS, target, keys, refresh=refresh, key=("id",))
    kept = ALL_ROWS[:1] + ([] if refresh is RefreshType.FULL else ALL_ROWS[2:])
    assert rows(warehouse, target, DATA) == kept
    assert counts.deleted == 3 - len(kept)
    assert counts.target == len(kept)  # the rows the delete leaves, as the ledger records them


@REFRESH
def test_delete_rows_soft_does_not_reflag(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, f"SELECT {DATA} FROM {schema}.src")
    keys = f"SELECT id FROM {schema}.src WHERE $$pipeline_id_filter"
    soft = {"refresh": refresh, "key": ("id",), "delete_mode": DeleteMode.SOFT}
    first = run(warehouse, Action.DELETE_ROWS, target, keys, pipeline_run_id=1, **soft)
    again = run(warehouse, Action.DELETE_ROWS, target, keys, pipeline_run_id=2, **soft)
    flagged = [row[0] for row in expected(refresh)]
    assert rows(warehouse, target, "id, DELETE_FLAG, PIPELINE_RUN_ID") == [
        (i, "Y" if i in flagged else "N", 1 if i in flagged else 22) for i in (1, 2, 3)
    ]
    assert (first.deleted, again.deleted) == (len(flagged), 0)


@pytest.mark.parametrize("action", [Action.SCD1_MERGE, Action.SCD2_MERGE])
def test_merges_revive_soft_deleted_keys(
    warehouse: WarehouseConnection, schema: str, source: str, action: Action
) -> None:
    target, key = f"{schema}.t", ("id",)
    run(warehouse, Action.SETUP_TABLE, target, source, history=True)
    run(warehouse, action, target, source, key=key)
    run(
        warehouse,
        Action.DELETE_ROWS,
        target,
        "SELECT 1 AS id",
        key=key,
        delete_mode=DeleteMode.SOFT,
    )
    counts = run(warehouse, action, target, source, key=key)
    assert rows(warehouse, target, "id, DELETE_FLAG", "ACTIVE_FLAG = 'Y'") == [
        (1, "N"),
        (2, "N"),
        (3, "N"),
    ]
    if action is Action.SCD1_MERGE:
        assert (counts.updated, counts.inserted) == (1, 0)
    else:
        assert (counts.updated, counts.inserted) == (1, 1)
        assert rows(warehouse, target, "id, DELETE_FLAG", "ACTIVE_FLAG = 'N'") == [(1, "Y")]


@REFRESH
def test_drop_table(
    warehouse: WarehouseConnection, schema: str, source: str, refresh: RefreshType
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, source, refresh=refresh)
    counts = run(warehouse, Action.DROP_TABLE, target, None, refresh=refresh)
    assert definition(warehouse, target) == []
    assert counts.deleted == len(expected(refresh))
    assert run(warehouse, Action.DROP_TABLE, target, None).rows_written == 0


def test_merge_dedupes_by_order(warehouse: WarehouseConnection, schema: str) -> None:
    target = f"{schema}.t"
    sql = (
        "SELECT * FROM (VALUES (1, 'old', 1), (1, 'new', 2), (2, 'same', 1), (2, 'same', 1)) "
        "v(id, val, seq)"
    )
    run(warehouse, Action.SETUP_TABLE, target, sql)
    counts = run(warehouse, Action.SCD1_MERGE, target, sql, key=("id",), order="seq DESC")
    assert rows(warehouse, target, "id, val") == [(1, "new"), (2, "same")]
    assert counts.duplicates == 2


def test_merge_stage_indexed_and_analyzed_where_it_helps(
    warehouse: WarehouseConnection, schema: str, source: str, caplog: pytest.LogCaptureFixture
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    with caplog.at_level(logging.DEBUG, logger="etl_craft.warehouse"):
        run(warehouse, Action.SCD1_MERGE, target, source, key=("id",))
    messages = [record.getMessage() for record in caplog.records]
    sql = [message for message in messages if "index and analyze the stage" in message]
    wanted = warehouse.dialect.capabilities.index_stage
    # The keyed copy is the stage itself when no key has two rows: analyzed for the anti-joins
    # over it. The rows that differ from the target, which the update joins, are indexed too.
    assert any("\nANALYZE etl_stage_" in message for message in sql) is wanted
    assert not any("\nCREATE INDEX etl_stage_" in message for message in sql)
    assert any("\nCREATE INDEX etl_delta_" in message for message in sql) is wanted
    assert any("\nANALYZE etl_delta_" in message for message in sql) is wanted


def test_an_attempt_logs_where_its_time_went_at_debug(
    warehouse: WarehouseConnection, schema: str, source: str, caplog: pytest.LogCaptureFixture
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source, history=True)
    with caplog.at_level(logging.DEBUG, logger="etl_craft.handlers.sql"):
        run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))

    [record] = [r for r in caplog.records if hasattr(r, "etl_craft_phases")]
    assert record.levelno == logging.DEBUG
    phases = record.etl_craft_phases
    assert list(phases) == ["stage", "hash", "checks", "write", "bookkeeping", "commit"]
    assert phases["stage"] > 0
    assert phases["write"] > 0
    assert record.getMessage().startswith(f"SCD2_MERGE into {target} took stage ")
    assert rows(warehouse, target, f"{DATA}, ACTIVE_FLAG") == [(*row, "Y") for row in ALL_ROWS]
