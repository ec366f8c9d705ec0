"""The canonical change hash agrees across warehouses; evolution keeps full types."""

from __future__ import annotations

import hashlib

from etl_craft.handlers.sql import Action
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.targets import TargetObject
from tests.integration.warehouse.helpers import definition, rows, run, table

TZ = "TIMESTAMP WITH TIME ZONE"
GOLDEN_ROWS = ", ".join(
    [
        f"(1, '', 'x', 0, 1.50, CAST('2024-01-02 03:04:05.123456+02' AS {TZ}), "
        "CAST('2024-01-02 03:04:05' AS TIMESTAMP), CAST('2024-01-02' AS DATE), TRUE)",
        "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        f"(3, 'ab', 'c', -7, -0.50, CAST('2024-06-30 23:59:59-07' AS {TZ}), "
        "CAST('1999-12-31 23:59:59.5' AS TIMESTAMP), CAST('2000-02-29' AS DATE), FALSE)",
        f"(4, 'a', 'bc', 12, 10, CAST('2024-01-01 00:00:00+00' AS {TZ}), NULL, NULL, NULL)",
        "(5, 'N', 'V1:', NULL, 0.00, NULL, NULL, NULL, NULL)",
        "(6, 'é|:', '', NULL, 0, NULL, NULL, NULL, NULL)",
    ]
)
# Pinned: a change to the canonical text form changes these and fails the test.
GOLDEN_DIGESTS = [
    (1, "57bd8e223ead957d101b9ff7c44ba878"),
    (2, "7466cee40b57a2a437fcdcddf2f67f5f"),
    (3, "7d5a4e6e885cfdb091de0248cff6589d"),
    (4, "d3b246670326fd340f72da149164c3a0"),
    (5, "bf7b5c5485a1a1edc212ca8d5eb601ac"),
    (6, "3d376435af4f1dcd5415a4df56806283"),
]


def test_golden_digest_follows_the_definition() -> None:
    """Row 1 by hand: 'V' <length> ':' <canonical text> per column, 'N' for NULL, MD5 over all."""
    parts = ["", "x", "0", "1.50", "2024-01-02T01:04:05.123456", "2024-01-02T03:04:05.000000"]
    text = "".join(f"V{len(part)}:{part}" for part in [*parts, "2024-01-02", "true"])
    assert hashlib.md5(text.encode()).hexdigest() == GOLDEN_DIGESTS[0][1]
    assert hashlib.md5(b"N" * 8).hexdigest() == GOLDEN_DIGESTS[1][1]


def golden_hashes(warehouse: WarehouseConnection, schema: str) -> list[tuple[int, str]]:
    name = f"{schema}.golden"
    columns = warehouse.columns(TargetObject(schema, "golden"))
    hashed = warehouse.dialect.change_hash("g", columns[1:])
    found = warehouse.fetch_all("hash", f"SELECT g.id, {hashed} FROM {name} g ORDER BY g.id")
    return [(int(i), str(h)) for i, h in found]


def test_golden_digests(warehouse: WarehouseConnection, schema: str) -> None:
    table(
        warehouse,
        f"{schema}.golden",
        f"id INTEGER, t1 VARCHAR(20), t2 VARCHAR(20), i INTEGER, d DECIMAL(12,2), ts {TZ}, "
        "nts TIMESTAMP, dt DATE, b BOOLEAN",
        GOLDEN_ROWS,
    )
    digests = golden_hashes(warehouse, schema)
    assert digests == GOLDEN_DIGESTS
    assert len({digest for _, digest in digests}) == len(digests)
    # The session's zone must not matter: values are read in UTC by the hash itself.
    warehouse.execute("move the session", "SET TimeZone = 'America/New_York'")
    assert golden_hashes(warehouse, schema) == GOLDEN_DIGESTS


def test_evolution_adds_full_types(warehouse: WarehouseConnection, schema: str) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, "SELECT 1 AS id")
    run(warehouse, Action.APPEND_TABLE, target, "SELECT 1 AS id", task_run_id=1)
    precise = "(3)" if warehouse.dialect.name == "postgresql" else ""
    added = (
        "SELECT 2 AS id, CAST(2.5 AS DECIMAL(12,2)) AS amount, CAST('x' AS VARCHAR(20)) AS label, "
        f"CAST('abc' AS CHAR(3)) AS code, CAST('2024-01-02 03:04:05.123+00' AS TIMESTAMP{precise} "
        "WITH TIME ZONE) AS seen_at"
    )
    stage = f"{schema}.stage_types"
    warehouse.execute("types as the SELECT has them", f"CREATE TABLE {stage} AS {added}")
    run(warehouse, Action.APPEND_TABLE, target, added, task_run_id=2, evolve=True)
    types = dict(definition(warehouse, target))
    for name, kind in definition(warehouse, stage)[1:]:
        if warehouse.dialect.name == "snowflake" and kind.startswith("VARCHAR"):
            # The emulator describes a temporary table's text columns at the largest length.
            assert types[name] in (kind, "VARCHAR(16777216)")
            continue
        assert types[name] == kind
    assert types["amount"].lower() in ("numeric(12,2)", "decimal(12,2)", "number(12,2)")
    assert rows(warehouse, target, "id, amount, label") == [(1, None, None), (2, "2.50", "x")]


def test_a_table_wider_than_a_function_takes_arguments_is_hashed(
    warehouse: WarehouseConnection, schema: str
) -> None:
    """PostgreSQL's CONCAT takes at most 100 arguments; 120 columns hash as the definition says."""
    values = [f"v{n}" for n in range(120)]
    columns = ", ".join(f"CAST('{value}' AS VARCHAR(10)) AS c{n}" for n, value in enumerate(values))
    target = f"{schema}.wide"
    run(warehouse, Action.SETUP_TABLE, target, f"SELECT 1 AS id, {columns}")
    run(warehouse, Action.SCD1_MERGE, target, f"SELECT 1 AS id, {columns}", key=("id",))

    text = "".join(f"V{len(value)}:{value}" for value in values)
    assert rows(warehouse, target, "id, HASH_KEY") == [(1, hashlib.md5(text.encode()).hexdigest())]
