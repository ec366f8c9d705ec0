"""The demo's warehouse tables, layer by layer, and how many rows each holds."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.config.sections import Warehouse
from etl_craft.warehouse import TargetObject, WarehouseConnection, connect, statements

# (layer, table, keeps SCD2 history): the order the data flows through them.
TABLES = (
    ("ref", "ref.support_areas", False),
    ("ref", "ref.agents", False),
    ("ref", "ref.customer_types", False),
    ("lnd", "lnd.client_alpha_interactions", False),
    ("lnd", "lnd.client_beta_interactions", False),
    ("lnd", "lnd.client_gamma_interactions", False),
    ("prs", "prs.interactions", True),
    ("cdc", "cdc.interactions", False),
    ("pre_dm", "pre_dm.interactions", False),
    ("dm", "dm.customer_support_fact", True),
    ("dm", "dm.source_volume", False),
)
REJECTED = "rejected__pre_dm__interactions"


@dataclass(frozen=True)
class LayerCount:
    layer: str
    table: str
    rows: int | None  # None: the table does not exist (yet)
    current: int | None  # rows with ACTIVE_FLAG = 'Y' where the table keeps history


def count_layers(settings: Warehouse) -> tuple[LayerCount, ...]:
    tables = (*TABLES, ("rules", f"{settings.ledger_schema}.{REJECTED}", False))
    with connect(settings) as conn:
        return tuple(_count(conn, layer, table, history) for layer, table, history in tables)


def _count(conn: WarehouseConnection, layer: str, table: str, history: bool) -> LayerCount:
    if not conn.exists(TargetObject.parse(table)):
        return LayerCount(layer, table, None, None)
    rows = int(conn.fetch_value(f"count {table}", statements.count_rows(table).sql) or 0)
    current = None
    if history:
        statement = statements.count_rows(f"{table} t", statements.current_version())
        current = int(conn.fetch_value(f"count current versions in {table}", statement.sql) or 0)
    return LayerCount(layer, table, rows, current)
