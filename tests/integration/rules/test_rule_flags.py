"""Business rules open, re-see and clear flags; closed SCD2 versions and other runs' rows are
judged only when they should be, on PostgreSQL and DuckDB warehouses and both Engine DBs."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import TaskError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from tests.integration.rules.helpers import RuleTask, insert, orders_table

# Trailing `;` and comments, as people write them.
NEGATIVE = "SELECT order_id FROM {table} WHERE amount < 0; -- refunds are separate\n"


def test_flag_reflag_clear_and_key_deleted(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    rule = task.add_rule("NEGATIVE", table, NEGATIVE.format(table=table))
    run = task.new_run()
    insert(warehouse, table, [(1, -5), (2, 10), (3, -1)], run)

    first = task.check(warehouse, run).rules[0]
    assert (first.broken, first.opened, first.still_standing) == (2, 2, 0)
    assert task.standing(rule) == {'["1"]', '["3"]'}

    again = task.check(warehouse, run).rules[0]
    assert (again.opened, again.still_standing) == (0, 2)

    warehouse.execute("fix order 1", f"UPDATE {table} SET amount = 5 WHERE order_id = 1")
    fixed = task.check(warehouse, run).rules[0]
    assert (fixed.cleared_passed, fixed.still_standing) == (1, 1)

    warehouse.execute("delete order 3", f"DELETE FROM {table} WHERE order_id = 3")
    gone = task.check(warehouse, task.new_run()).rules[0]
    assert gone.cleared_deleted == 1
    assert task.flags(rule) == {'["1"]': "PASSED", '["3"]': "KEY_DELETED"}


def test_a_key_that_breaks_again_opens_a_new_flag(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    rule = task.add_rule("NEGATIVE", table, NEGATIVE.format(table=table))
    run = task.new_run()
    insert(warehouse, table, [(1, -5)], run)
    task.check(warehouse, run)
    warehouse.execute("fix", f"UPDATE {table} SET amount = 5")
    task.check(warehouse, run)
    warehouse.execute("break", f"UPDATE {table} SET amount = -7")
    assert task.check(warehouse, run).rules[0].opened == 1
    assert task.standing(rule) == {'["1"]'}


def test_closed_scd2_versions_are_not_judged(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    rule = task.add_rule("NEGATIVE", table, NEGATIVE.format(table=table))
    run = task.new_run()
    insert(warehouse, table, [(1, -5), (2, -5)], run, active="N")  # closed versions
    insert(warehouse, table, [(1, 5)], run)  # key 1's current version passes; key 2 is gone
    for forced in (False, True):
        result = task.check(warehouse, run, forced=forced).rules[0]
        assert (result.broken, result.opened) == (0, 0)
    assert task.flags(rule) == {}


def test_a_flag_whose_key_has_only_closed_versions_clears_as_deleted(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    rule = task.add_rule("NEGATIVE", table, NEGATIVE.format(table=table))
    run = task.new_run()
    insert(warehouse, table, [(2, -5)], run)
    task.check(warehouse, run)
    warehouse.execute("close key 2", f"UPDATE {table} SET ACTIVE_FLAG = 'N'")
    assert task.check(warehouse, task.new_run()).rules[0].cleared_deleted == 1
    assert task.flags(rule) == {'["2"]': "KEY_DELETED"}


def test_a_normal_run_judges_only_its_rows_and_a_forced_run_the_table(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    rule = task.add_rule("NEGATIVE", table, NEGATIVE.format(table=table))
    earlier, current = task.new_run(), task.new_run()
    insert(warehouse, table, [(1, -5)], earlier)
    insert(warehouse, table, [(2, -5)], current)

    assert task.check(warehouse, current).rules[0].opened == 1
    assert task.standing(rule) == {'["2"]'}
    assert task.check(warehouse, current, forced=True).rules[0].opened == 1
    assert task.standing(rule) == {'["1"]', '["2"]'}

    # Key 1 passes now, but a normal run of another run never saw it: its flag stands.
    warehouse.execute("fix order 1", f"UPDATE {table} SET amount = 5 WHERE order_id = 1")
    assert task.check(warehouse, current).rules[0].cleared_passed == 0
    assert task.standing(rule) == {'["1"]', '["2"]'}
    assert task.check(warehouse, current, forced=True).rules[0].cleared_passed == 1
    assert task.standing(rule) == {'["2"]'}


def test_rules_run_in_waves_and_one_failure_keeps_no_flag(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    late = task.add_rule("LATE", table, f"SELECT order_id FROM {table} /* all */", wave=2)
    early = task.add_rule("EARLY", table, NEGATIVE.format(table=table), wave=1)
    run = task.new_run()
    insert(warehouse, table, [(1, -5), (2, 5)], run)
    result = task.check(warehouse, run)
    assert [(r.rule_code, r.wave, r.opened) for r in result.rules] == [
        ("EARLY", 1, 1),
        ("LATE", 2, 2),
    ]
    assert "rule EARLY (REPORT, wave 1): 1 key(s) break it, 1 flag(s) opened" in result.task_log

    warehouse.execute("fix order 1", f"UPDATE {table} SET amount = 5")
    task.add_rule("BROKEN", table, f"SELECT no_such_column FROM {table}", wave=3)
    with pytest.raises(TaskError, match="(?s)business rule BROKEN .wave 3. on .*fix its RULE_SQL"):
        task.check(warehouse, run)
    # The EARLY clear of wave 1 rolled back with the failure of wave 3.
    assert task.standing(early) == {'["1"]'}
    assert task.standing(late) == {'["1"]', '["2"]'}


def test_a_rule_returning_null_keys_is_refused(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    task.add_rule("NULLS", table, f"SELECT CAST(NULL AS INTEGER) AS order_id FROM {table}")
    run = task.new_run()
    insert(warehouse, table, [(1, 1)], run)
    with pytest.raises(TaskError, match="NULLS returns 1 key.* NULL in order_id"):
        task.check(warehouse, run, forced=True)


def test_incomplete_rules_hold_the_task(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    task.add_rule("MISSING", table, NEGATIVE.format(table=table), rule_type="INCOMPLETE")
    run = task.new_run()
    insert(warehouse, table, [(1, -5)], run)
    error = task.check(warehouse, run).incomplete()
    assert error is not None
    assert "MISSING (1 key(s))" in str(error)
