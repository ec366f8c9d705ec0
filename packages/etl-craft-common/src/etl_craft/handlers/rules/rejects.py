"""REJECT keys in the warehouse, where a downstream SQL task can exclude them.

For each table a REJECT rule judges, etl-craft keeps ``<ledger schema>.rejected__<schema>__<table>``
holding the key columns (typed as in the table) of every key a REJECT rule flags and no check has
cleared. A downstream SELECT excludes them with::

    SELECT o.* FROM sales.orders o
    WHERE NOT EXISTS (
        SELECT 1 FROM etl_craft.rejected__sales__orders r WHERE r.order_id = o.order_id
    )

The table is rebuilt after every BUSINESS_RULES attempt, in one warehouse transaction, from the
flags that attempt leaves; readers see the old or the new set, never a half.
"""

from __future__ import annotations

import hashlib

from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.rule_flags import CHUNK, chunks, standing_reject_keys
from etl_craft.handlers.rules.model import Rule, decode_key
from etl_craft.warehouse import statements
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.rule_sql import empty_rejects_table, fill_rejects_table

# PostgreSQL cuts longer names silently, and two cut names could then collide.
MAX_NAME = 63


def rejected_table(rule: Rule, ledger_schema: str) -> str:
    name = f"rejected__{rule.target.schema}__{rule.target.table}".lower()
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(rule.target.sql.lower().encode()).hexdigest()[:16]
        name = f"rejected__{digest}"
    return f"{ledger_schema}.{name}"


def refresh_rejected(
    engine: EngineConnection, warehouse: WarehouseConnection, rule: Rule, ledger_schema: str
) -> tuple[str, int]:
    """Rebuild the table of ``rule.target``'s rejected keys; returns its name and row count."""
    table = rejected_table(rule, ledger_schema)
    keys = standing_reject_keys(engine, rule.row.target_table)
    placeholder = warehouse.dialect.placeholder
    with warehouse.transaction():
        warehouse.execute("create the ledger schema", statements.create_schema(ledger_schema).sql)
        warehouse.execute(f"drop {table}", statements.drop_table(table).sql)
        warehouse.execute(f"create {table}", empty_rejects_table(table, rule.target, rule.keys))
        for chunk in chunks(keys, CHUNK):
            warehouse.execute(
                f"fill {table}",
                fill_rejects_table(table, rule.target, rule.keys, len(chunk), placeholder),
                [value for key in chunk for value in decode_key(key)],
            )
    return table, len(keys)
