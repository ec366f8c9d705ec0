"""The hash record per merge target (warehouse.hash_record): a merge compares columns only where
the record proves the stored HASH_KEY values for its very contract, and then writes the rows
hashing every staged row writes; everything else hashes every row and leaves the record true."""

from __future__ import annotations

from typing import Any

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.errors import WarehouseError
from etl_craft.core.time import utc_now
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.handlers.sql.spec import MissingKeys
from etl_craft.warehouse import hash_record, ledger
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.hash_record import Proof
from etl_craft.warehouse.ledger import LedgerEntry
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject
from tests.integration.warehouse.helpers import needs, next_attempt, rows, run, spec, table

TZ = "TIMESTAMP WITH TIME ZONE"
COLUMNS = f"id INTEGER, t VARCHAR(20), b BOOLEAN, d DECIMAL(12,2), ts {TZ}, dt DATE, n INTEGER"
SELECT = "SELECT id, t, b, d, ts, dt, n FROM {}.src"
FIRST = ", ".join(
    [
        f"(1, 'a', TRUE, 1.50, CAST('2024-01-02 03:04:05.123456+00' AS {TZ}), "
        "CAST('2024-01-02' AS DATE), 7)",
        f"(2, 'b', NULL, 0.00, CAST('2024-01-02 03:04:05+00' AS {TZ}), NULL, NULL)",
        "(3, 'c', FALSE, -2.25, NULL, CAST('2000-02-29' AS DATE), 0)",
        f"(4, 'd', TRUE, 10.00, CAST('2024-06-30 23:59:59+00' AS {TZ}), NULL, 1)",
        "(6, NULL, NULL, NULL, NULL, NULL, NULL)",
        "(7, 'g', TRUE, 1.00, NULL, CAST('2024-01-01' AS DATE), 3)",
        "(8, 'h', FALSE, 5.00, NULL, NULL, 4)",
        "(10, 'j', TRUE, 9.99, NULL, NULL, 9)",
    ]
)
# Each change is one a value comparison could miss or invent: case only, NULL against FALSE
# (whose canonical texts would both be 'false'), one microsecond, NULL against ''; key 8 is
# unchanged, 9 new and 10 gone.
SECOND = ", ".join(
    [
        f"(1, 'A', TRUE, 1.50, CAST('2024-01-02 03:04:05.123456+00' AS {TZ}), "
        "CAST('2024-01-02' AS DATE), 7)",
        f"(2, 'b', FALSE, 0.00, CAST('2024-01-02 03:04:05+00' AS {TZ}), NULL, NULL)",
        "(3, 'c', NULL, -2.25, NULL, CAST('2000-02-29' AS DATE), 0)",
        f"(4, 'd', TRUE, 10.00, CAST('2024-06-30 23:59:59.000001+00' AS {TZ}), NULL, 1)",
        "(6, '', NULL, NULL, NULL, NULL, NULL)",
        "(7, 'g', TRUE, 1.00, NULL, CAST('2024-01-03' AS DATE), 3)",
        "(8, 'h', FALSE, 5.00, NULL, NULL, 4)",
        "(9, 'i', NULL, 3.00, NULL, NULL, 2)",
    ]
)
CONTENT = (
    "id, t, b, CAST(d AS VARCHAR(20)), ts, dt, n, HASH_KEY, ACTIVE_FLAG, DELETE_FLAG, {} AS state"
)
HISTORY = "CASE WHEN VALID_TO IS NULL THEN 'current' ELSE 'closed' END"


@pytest.fixture(autouse=True)
def _records(warehouse: WarehouseConnection) -> None:
    needs(warehouse, warehouse.dialect.capabilities.hash_record, "hash record")


def record(conn: WarehouseConnection, target: str) -> tuple[str, Proof] | None:
    key = hash_record.record_key(conn, TargetObject.parse(target))
    return hash_record.read(conn, DEFAULT_LEDGER_SCHEMA, key)


def proof(conn: WarehouseConnection, target: str) -> Proof | None:
    found = record(conn, target)
    return None if found is None else found[1]


def compared(found: tuple[str, Proof] | None) -> list[str]:
    """The compare columns a record's contract names, in hash order."""
    assert found is not None
    return [part.split(" ")[0] for part in found[0].split(";")[3:]]


def forget(conn: WarehouseConnection, target: str) -> None:
    key = hash_record.record_key(conn, TargetObject.parse(target))
    hash_record.forget(conn, DEFAULT_LEDGER_SCHEMA, key)


def fill(conn: WarehouseConnection, schema: str, values: str) -> None:
    conn.execute("empty the source", f"DELETE FROM {schema}.src")
    conn.execute("fill the source", f"INSERT INTO {schema}.src VALUES {values}")


def content(conn: WarehouseConnection, target: str, action: Action) -> list[tuple[Any, ...]]:
    state = HISTORY if action is Action.SCD2_MERGE else "'-'"
    return rows(conn, target, CONTENT.format(state))


def merge(conn: WarehouseConnection, target: str, source: str, action: Action) -> Counts:
    options: dict[str, Any] = {"key": ("id",)}
    if action is Action.SCD2_MERGE:
        options["missing_keys"] = MissingKeys.CLOSE
    return run(conn, action, target, source, **options)


def merged_history(conn: WarehouseConnection, schema: str) -> tuple[str, str]:
    """The source of the FIRST rows and a history merged from it once: (SELECT, target)."""
    table(conn, f"{schema}.src", COLUMNS, FIRST)
    source, target = SELECT.format(schema), f"{schema}.h"
    run(conn, Action.SETUP_TABLE, target, source, history=True)
    run(conn, Action.SCD2_MERGE, target, source, key=("id",))
    return source, target


@pytest.mark.parametrize("action", [Action.SCD1_MERGE, Action.SCD2_MERGE])
def test_comparing_columns_writes_the_rows_hashing_every_row_writes(
    warehouse: WarehouseConnection, schema: str, action: Action
) -> None:
    table(warehouse, f"{schema}.src", COLUMNS, FIRST)
    source = SELECT.format(schema)
    compared, hashed = f"{schema}.compared", f"{schema}.hashed"
    for target in (compared, hashed):
        run(warehouse, Action.SETUP_TABLE, target, source, history=action is Action.SCD2_MERGE)
        merge(warehouse, target, source, action)
        # The first merge wrote every row of the empty target: nothing left to check.
        assert proof(warehouse, target) is Proof.PROVEN
    fill(warehouse, schema, SECOND)
    forget(warehouse, hashed)

    by_columns = merge(warehouse, compared, source, action)
    by_hashes = merge(warehouse, hashed, source, action)

    assert by_columns == by_hashes
    assert (by_columns.new_keys, by_columns.changed_keys, by_columns.unchanged_keys) == (1, 6, 1)
    assert content(warehouse, compared, action) == content(warehouse, hashed, action)
    changed = "ACTIVE_FLAG = 'N'" if action is Action.SCD2_MERGE else "UPDATE_DATE > CREATE_DATE"
    expected = [1, 2, 3, 4, 6, 7, *([10] if action is Action.SCD2_MERGE else [])]
    assert rows(warehouse, compared, "id", changed) == sorted(
        [(key,) for key in expected], key=repr
    )
    # Hashing every row checked the target afterwards and found it proven as well.
    assert record(warehouse, compared) == record(warehouse, hashed)
    assert proof(warehouse, compared) is Proof.PROVEN


def test_a_record_of_other_compare_columns_hashes_every_row(
    warehouse: WarehouseConnection, schema: str
) -> None:
    table(warehouse, f"{schema}.src", COLUMNS, FIRST)
    source, target = SELECT.format(schema), f"{schema}.h"
    run(warehouse, Action.SETUP_TABLE, target, source, history=True)
    run(warehouse, Action.SCD2_MERGE, target, source, key=("id",), compare=("t", "n"))
    assert compared(record(warehouse, target)) == ["t", "n"]

    # The stored hashes are of (t, n): compared as (t, b, ...) every key looks changed, and a
    # merge that trusted columns instead would have found none.
    counts = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))

    assert counts.changed_keys == 8
    assert counts.unchanged_keys == 0
    assert rows(warehouse, target, "id, COUNT(*)", "1 = 1 GROUP BY id") == [
        (key, 2) for key in (1, 10, 2, 3, 4, 6, 7, 8)
    ]
    assert proof(warehouse, target) is Proof.PROVEN
    assert compared(record(warehouse, target)) == ["t", "b", "d", "ts", "dt", "n"]
    # Now proven for this contract, the same snapshot changes nothing.
    assert run(warehouse, Action.SCD2_MERGE, target, source, key=("id",)).changed_keys == 0


def test_a_column_added_by_evolution_hashes_every_row_then_is_proven_again(
    warehouse: WarehouseConnection, schema: str
) -> None:
    _, target = merged_history(warehouse, schema)
    assert record(warehouse, target) is not None
    wider = f"SELECT id, t, b, d, ts, dt, n, CAST(n AS VARCHAR(10)) AS label FROM {schema}.src"

    counts = run(warehouse, Action.SCD2_MERGE, target, wider, key=("id",), evolve=True)

    assert counts.changed_keys == 8  # the hash covers the new column: every key has a version
    assert record(warehouse, target) is None  # the column wasn't there to compare
    assert run(warehouse, Action.SCD2_MERGE, target, wider, key=("id",)).changed_keys == 0
    assert proof(warehouse, target) is Proof.PROVEN
    assert compared(record(warehouse, target))[-1] == "label"


def test_stale_stored_hashes_are_found_and_merges_keep_hashing_every_row(
    warehouse: WarehouseConnection, schema: str
) -> None:
    source, target = merged_history(warehouse, schema)
    # As an older etl-craft would have left it: no record, and one key's hash of other values.
    forget(warehouse, target)
    stale = "'0123456789abcdef0123456789abcdef'"
    warehouse.execute("stale hash", f"UPDATE {target} SET HASH_KEY = {stale} WHERE id = 10")
    without_ten = FIRST.replace(
        "(10, 'j', TRUE, 9.99, NULL, NULL, 9)", "(5, 'e', TRUE, 1, NULL, NULL, 5)"
    )
    fill(warehouse, schema, without_ten)

    run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))  # key 10 kept, as it was

    found = record(warehouse, target)
    assert found is not None
    assert found[1] is Proof.STALE
    fill(warehouse, schema, SECOND)
    # Still hashed: key 10 is missing and stays current (KEEP), key 8 unchanged.
    counts = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))
    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (1, 6, 1)
    assert record(warehouse, target) == found
    assert rows(warehouse, target, "HASH_KEY", "id = 10") == [(stale.strip("'"),)]


def test_writes_that_stamp_other_hashes_clear_the_record(
    warehouse: WarehouseConnection, schema: str
) -> None:
    table(warehouse, f"{schema}.src", COLUMNS, FIRST)
    source, target = SELECT.format(schema), f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    run(warehouse, Action.SCD1_MERGE, target, source, key=("id",))
    proven = record(warehouse, target)
    assert proven is not None

    run(warehouse, Action.SETUP_TABLE, target, source)
    run(warehouse, Action.DELETE_ROWS, target, f"{source} WHERE id = 8", key=("id",))
    assert record(warehouse, target) == proven  # neither writes a HASH_KEY
    run(warehouse, Action.APPEND_TABLE, target, f"{source} WHERE id = 8", task_run_id=7)
    assert record(warehouse, target) is None
    # The appended row's HASH_KEY covers the key too: the merge rewrites it, then finds every
    # row proven.
    run(warehouse, Action.SCD1_MERGE, target, source, key=("id",))
    assert proof(warehouse, target) is Proof.PROVEN
    run(warehouse, Action.OVERWRITE_TABLE, target, source)
    assert record(warehouse, target) is None
    run(warehouse, Action.SCD1_MERGE, target, source, key=("id",))
    assert proof(warehouse, target) is Proof.PROVEN
    run(warehouse, Action.DROP_TABLE, target, None)
    assert record(warehouse, target) is None


def test_stage_types_other_than_the_targets_clear_the_record(
    warehouse: WarehouseConnection, schema: str
) -> None:
    table(warehouse, f"{schema}.src", COLUMNS, FIRST)
    source, target = SELECT.format(schema), f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, source)
    run(warehouse, Action.SCD1_MERGE, target, source, key=("id",))
    assert record(warehouse, target) is not None
    # A DECIMAL(12,2) column written from DECIMAL(14,4): the stored value is rounded.
    other = f"SELECT id, t, b, CAST(d AS DECIMAL(14,4)) AS d, ts, dt, n FROM {schema}.src"

    counts = run(warehouse, Action.SCD1_MERGE, target, other, key=("id",))

    assert counts.changed_keys == 0
    assert record(warehouse, target) is None


def test_a_failed_attempt_leaves_the_record_and_its_retry_writes_the_same_rows(
    warehouse: WarehouseConnection, schema: str
) -> None:
    table(warehouse, f"{schema}.src", COLUMNS, FIRST)
    source, target, hashed = SELECT.format(schema), f"{schema}.h", f"{schema}.hashed"
    for name in (target, hashed):
        run(warehouse, Action.SETUP_TABLE, name, source, history=True)
        run(warehouse, Action.SCD2_MERGE, name, source, key=("id",))
    proven = record(warehouse, target)
    fill(warehouse, schema, SECOND)
    before = content(warehouse, target, Action.SCD2_MERGE)
    # Each attempt's ledger row is taken already: its last statement fails, after every write,
    # the clearing of the record by the append included.
    for action, options in ((Action.APPEND_TABLE, {}), (Action.SCD2_MERGE, {"key": ("id",)})):
        attempt = next_attempt()
        with warehouse.transaction():
            ledger.record(warehouse, LedgerEntry(attempt, 1, "OTHER", None, Counts(), utc_now()))
        failing = spec(action, target, source, attempt_id=attempt, **options)  # type: ignore[arg-type]

        with pytest.raises(WarehouseError, match="(?i)duplicate|constraint"):
            run_sql_action(warehouse, failing)

        assert record(warehouse, target) == proven
    assert content(warehouse, target, Action.SCD2_MERGE) == before
    retried = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))
    forget(warehouse, hashed)
    assert run(warehouse, Action.SCD2_MERGE, hashed, source, key=("id",)) == retried
    assert content(warehouse, target, Action.SCD2_MERGE) == content(
        warehouse, hashed, Action.SCD2_MERGE
    )
    assert record(warehouse, target) == proven


def test_a_stored_hash_of_other_values_than_the_row_has_is_found_stale(
    warehouse: WarehouseConnection, schema: str
) -> None:
    source, target = merged_history(warehouse, schema)
    # A value changed without its HASH_KEY, which still hashes what the source returns.
    forget(warehouse, target)
    warehouse.execute("change a value", f"UPDATE {target} SET t = 'zz' WHERE id = 1")

    counts = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))

    assert counts.changed_keys == 0  # hashing every row sees no change, as before
    assert proof(warehouse, target) is Proof.STALE
    assert rows(warehouse, target, "t", "id = 1") == [("zz",)]
