"""RULE_SQL reads its pipeline's code and parameters as literals, as a SQL task's SELECT does, on
PostgreSQL and DuckDB warehouses and both Engine DBs."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from tests.integration.rules.helpers import RuleTask, insert, orders_table

HOSTILE = "x'; DELETE FROM orders; --"
BELOW = (
    "SELECT order_id FROM {table} WHERE amount < $$param.LIMIT "
    "AND $$param.LABEL = {label} AND $$pipeline_code = 'client_a'"
)


def test_a_rule_flags_what_its_pipeline_parameters_say(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    label = "'" + HOSTILE.replace("'", "''") + "'"
    rule = task.add_rule("BELOW", table, BELOW.format(table=table, label=label))
    run = task.new_run()
    insert(warehouse, table, [(1, -5), (2, 10), (3, 2)], run)

    task.check(
        warehouse,
        run,
        pipeline_code="client_a",
        pipeline_parameters={"LIMIT": "3", "LABEL": HOSTILE},
        pipeline_parameter_types={"LIMIT": "DECIMAL", "LABEL": "STRING"},
    )

    assert task.standing(rule) == {'["1"]', '["3"]'}
    assert [tuple(r) for r in warehouse.fetch_all("count", f"SELECT COUNT(*) FROM {table}")] == [
        (3,)
    ]


def test_a_rule_reading_an_undeclared_parameter_is_refused(
    engine_db: EngineDB, warehouse: WarehouseConnection, schema: str
) -> None:
    table = orders_table(warehouse, schema)
    task = RuleTask(engine_db)
    task.add_rule("BELOW", table, f"SELECT order_id FROM {table} WHERE amount < $$param.LIMIT")

    with pytest.raises(MetadataError) as refused:
        task.check(warehouse, task.new_run(), pipeline_code="client_a")

    assert "RULE_SQL of business rule BELOW reads $$param.LIMIT, but pipeline client_a" in str(
        refused.value
    )
