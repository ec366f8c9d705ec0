"""What is particular to Iceberg targets: every write is one snapshot carrying its attempt,
readers outside etl-craft see the rows, and a commit over a base that moved is refused whole."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from pyiceberg.table import Table

from etl_craft.core.errors import NotFoundError, SqlGuardError, WarehouseError
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.warehouse.iceberg import IcebergConnection
from etl_craft.warehouse.iceberg.catalog import load
from etl_craft.warehouse.iceberg.publisher import ACTION, ATTEMPT_ID, TASK_RUN_ID
from etl_craft.warehouse.iceberg.restore import RESTORED_FROM, restore_snapshot
from etl_craft.warehouse.targets import TargetObject
from tests.integration.warehouse.conftest import open_warehouse
from tests.integration.warehouse.helpers import applied, next_attempt, rows, run, spec

SOURCE = "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) v(id, val)"


@pytest.fixture(params=["iceberg-sqlite", "iceberg-postgresql"])
def warehouse_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def iceberg(warehouse: Any) -> IcebergConnection:
    assert isinstance(warehouse, IcebergConnection)
    return warehouse


def catalog_table(conn: IcebergConnection, target: str) -> Table:
    schema, name = target.split(".")
    found = load(conn.catalog, schema, name)
    assert found is not None
    return found


def scanned(table: Table, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """The rows as pyiceberg itself reads them from the table's files: no etl-craft copy."""
    found = table.scan(selected_fields=columns).to_arrow().to_pylist()
    return sorted(tuple(row[name] for name in columns) for row in found)


def test_each_action_commits_one_snapshot_carrying_its_attempt(
    iceberg: IcebergConnection, schema: str
) -> None:
    target = f"{schema}.t"
    run(iceberg, Action.SETUP_TABLE, target, SOURCE)
    before = len(catalog_table(iceberg, target).snapshots())
    operations = []
    for action, options in (
        (Action.APPEND_TABLE, {"task_run_id": 71}),
        (Action.SCD1_MERGE, {"key": ("id",), "task_run_id": 72}),
        (Action.OVERWRITE_TABLE, {"task_run_id": 73}),
    ):
        request = spec(action, target, SOURCE, **options)
        counts = run_sql_action(iceberg, request)
        table = catalog_table(iceberg, target)
        snapshot = table.current_snapshot()
        assert snapshot is not None
        assert snapshot.summary is not None
        assert snapshot.summary[ATTEMPT_ID] == str(request.attempt_id)
        assert snapshot.summary[TASK_RUN_ID] == str(request.task_run_id)
        assert snapshot.summary[ACTION] == action.value
        assert applied(iceberg, request.attempt_id) == counts
        operations.append(snapshot.summary.operation.value)
    assert len(catalog_table(iceberg, target).snapshots()) == before + 3
    # Only added rows are appended; a merge that changed nothing still leaves its counts.
    assert operations[0] == "append"
    assert operations[2] == "overwrite"


def test_rows_are_in_the_table_files_for_any_reader(
    warehouse_kind: str, warehouse_location: str, iceberg: IcebergConnection, schema: str
) -> None:
    target = f"{schema}.t"
    run(iceberg, Action.SETUP_TABLE, target, SOURCE)
    run(iceberg, Action.SCD1_MERGE, target, SOURCE, key=("id",))
    changed = "SELECT * FROM (VALUES (1, 'A'), (2, 'b'), (4, 'd')) v(id, val)"
    run(iceberg, Action.SCD1_MERGE, target, changed, key=("id",))
    want = [(1, "A"), (2, "b"), (3, "c"), (4, "d")]
    assert scanned(catalog_table(iceberg, target), ("id", "val")) == want
    # Another connection, with nothing copied yet, reads the same from the catalog.
    other = open_warehouse(warehouse_kind, warehouse_location)
    try:
        assert rows(other, target, "id, val") == want
        assert rows(other, target, "ROW_ID") == [(1,), (2,), (3,), (4,)]
    finally:
        other.close()


def test_schema_evolution_adds_nullable_iceberg_columns(
    iceberg: IcebergConnection, schema: str
) -> None:
    target = f"{schema}.t"
    run(iceberg, Action.SETUP_TABLE, target, SOURCE)
    run(iceberg, Action.APPEND_TABLE, target, SOURCE, task_run_id=1)
    wider = "SELECT * FROM (VALUES (4, 'd', 7.5)) v(id, val, score)"
    run(iceberg, Action.APPEND_TABLE, target, wider, evolve=True, task_run_id=2)
    table = catalog_table(iceberg, target)
    field = table.schema().find_field("score")
    assert not field.required
    assert scanned(table, ("id", "score")) == [(1, None), (2, None), (3, None), (4, 7.5)]

    snapshots = len(table.snapshots())
    narrower = "SELECT * FROM (VALUES ('x', 'e')) v(id, val)"
    with pytest.raises(SqlGuardError, match="never changes a type"):
        run(iceberg, Action.APPEND_TABLE, target, narrower, evolve=True, task_run_id=3)
    assert len(catalog_table(iceberg, target).snapshots()) == snapshots


@pytest.fixture
def second(warehouse_kind: str, warehouse_location: str) -> Iterator[IcebergConnection]:
    conn = open_warehouse(warehouse_kind, warehouse_location)
    assert isinstance(conn, IcebergConnection)
    yield conn
    conn.close()


def test_a_commit_whose_base_moved_is_refused_whole_and_its_retry_lands_once(
    iceberg: IcebergConnection, second: IcebergConnection, schema: str
) -> None:
    """Another writer (outside etl-craft's locks) commits while the attempt runs: the attempt's
    commit asserts the snapshot it read, is refused with nothing written, and its retry of the
    same task run then appends its rows once."""
    target = f"{schema}.t"
    run(iceberg, Action.SETUP_TABLE, target, SOURCE)
    run(iceberg, Action.APPEND_TABLE, target, SOURCE, task_run_id=1)

    class OtherWriter(logging.Handler):
        """Commits from another connection as soon as the attempt has written its rows."""

        done = False

        def emit(self, record: logging.LogRecord) -> None:
            if not self.done and record.getMessage().startswith("insert rows"):
                self.done = True
                second.execute("another writer", f"INSERT INTO {target} (id, val) VALUES (9, 'z')")

    racing = "SELECT * FROM (VALUES (5, 'e')) v(id, val)"
    handler = OtherWriter()
    logger = logging.getLogger("etl_craft.warehouse")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    failing = next_attempt()
    try:
        with pytest.raises(WarehouseError, match="another writer committed"):
            run_sql_action(
                iceberg,
                spec(Action.APPEND_TABLE, target, racing, task_run_id=2, attempt_id=failing),
            )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert handler.done
    assert applied(iceberg, failing) is None
    assert scanned(catalog_table(iceberg, target), ("id",)) == [(1,), (2,), (3,), (9,)]

    again = "SELECT * FROM (VALUES (5, 'e')) v(id, val)"
    run(iceberg, Action.APPEND_TABLE, target, again, task_run_id=2)
    run(iceberg, Action.APPEND_TABLE, target, again, task_run_id=2)
    assert rows(iceberg, target, "id, COUNT(*)", "1 = 1 GROUP BY id") == [
        (1, 1),
        (2, 1),
        (3, 1),
        (5, 1),
        (9, 1),
    ]


def test_restore_puts_back_the_rows_an_earlier_run_left_as_a_new_snapshot(
    iceberg: IcebergConnection, schema: str
) -> None:
    target = f"{schema}.t"
    run(iceberg, Action.SETUP_TABLE, target, SOURCE, task_run_id=80)
    run(iceberg, Action.SCD1_MERGE, target, SOURCE, key=("id",), task_run_id=81)
    later = "SELECT * FROM (VALUES (1, 'A'), (4, 'd')) v(id, val)"
    run(iceberg, Action.OVERWRITE_TABLE, target, later, task_run_id=82)
    assert rows(iceberg, target, "id, val") == [(1, "A"), (4, "d")]
    history = len(catalog_table(iceberg, target).snapshots())

    done = restore_snapshot(iceberg, TargetObject.parse(target), {81, 999}, run=7, action_id=5)

    assert done.task_run_id == 81
    assert done.rows == 3
    assert rows(iceberg, target, "id, val") == [(1, "a"), (2, "b"), (3, "c")]
    table = catalog_table(iceberg, target)
    assert scanned(table, ("id", "val")) == [(1, "a"), (2, "b"), (3, "c")]
    assert len(table.snapshots()) == history + 1  # on top of the history, which stays
    current = table.current_snapshot()
    assert current is not None
    assert current.snapshot_id == done.snapshot_to
    assert current.summary is not None
    assert current.summary[RESTORED_FROM] == str(done.snapshot_from)
    # The overwritten state is still there to travel back to.
    newest_before = sorted(table.snapshots(), key=lambda s: s.sequence_number or 0)[-2]
    assert scanned_at(table, newest_before.snapshot_id) == [(1, "A"), (4, "d")]

    with pytest.raises(NotFoundError, match="no snapshot of"):
        restore_snapshot(iceberg, TargetObject.parse(target), {12345}, run=8, action_id=6)


def scanned_at(table: Table, snapshot_id: int) -> list[tuple[Any, ...]]:
    found = table.scan(snapshot_id=snapshot_id, selected_fields=("id", "val")).to_arrow()
    return sorted((row["id"], row["val"]) for row in found.to_pylist())


def test_comments_are_kept_in_the_catalog(
    iceberg: IcebergConnection, second: IcebergConnection, schema: str
) -> None:
    iceberg.execute("create", f"CREATE TABLE {schema}.t (id INTEGER, note VARCHAR(20))")
    iceberg.execute("comment", f"COMMENT ON TABLE {schema}.t IS 'one row per order'")
    iceberg.execute("comment", f"COMMENT ON COLUMN {schema}.t.id IS 'the order''s number'")
    table = catalog_table(iceberg, f"{schema}.t")
    assert table.properties["comment"] == "one row per order"
    assert table.schema().find_field("id").doc == "the order's number"
    # A connection that copies the table from the catalog reads them back.
    found = second.comments(TargetObject(schema, "t"))
    assert (found.table, dict(found.columns)) == ("one row per order", {"id": "the order's number"})
