"""REJECT keys land in a warehouse table a downstream SELECT can exclude them with."""

from __future__ import annotations

from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from tests.integration.rules.helpers import RuleTask, insert, orders_table


def test_a_downstream_select_excludes_rejected_keys(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    task.add_rule(
        "NEGATIVE",
        table,
        f"SELECT order_id FROM {table} WHERE amount < 0 -- ends in a comment",
        rule_type="REJECT",
    )
    run = task.new_run()
    insert(warehouse, table, [(1, -5), (2, 10), (3, -1)], run)
    result = task.check(warehouse, run)
    assert result.rejected_tables == (f"etl_craft.rejected__{schema}__orders",)
    downstream = (
        f"SELECT o.order_id FROM {table} o WHERE NOT EXISTS (SELECT 1 FROM "
        f"{result.rejected_tables[0]} r WHERE r.order_id = o.order_id) ORDER BY o.order_id"
    )
    assert warehouse.fetch_all("downstream", downstream) == [(2,)]

    warehouse.execute("fix order 1", f"UPDATE {table} SET amount = 1 WHERE order_id = 1")
    task.check(warehouse, run)
    assert warehouse.fetch_all("downstream", downstream) == [(1,), (2,)]
