"""The quick start with --profile iceberg: the warehouse in Apache Iceberg tables (a SQLite
catalog and a folder of table files), read back here through pyiceberg's catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.operations.demo.sources import CLIENTS
from etl_craft.warehouse import connect
from tests.e2e.demo.demo_site import PIPELINES, Expected, quick_start_arguments, run_etl_craft


def query(data: Path, sql: str) -> list[tuple[Any, ...]]:
    settings = Warehouse(
        type=WarehouseType.ICEBERG,
        url=None,
        path=str(data / "lakehouse.db"),
        ledger_schema="etl_craft",
        max_queries=None,
        options={"location": "lakehouse"},
    )
    with connect(settings) as conn:
        return [tuple(row) for row in conn.fetch_all("read the demo's tables", sql)]


# Two whole demo runs, each task process importing pyiceberg and pyarrow.
@pytest.mark.timeout(1800)
def test_the_demo_runs_on_iceberg_with_the_duckdb_demos_rows_and_lands_each_batch_once(
    tmp_path: Path,
) -> None:
    arguments = [*quick_start_arguments(), "--profile", "iceberg", "--format", "json"]

    documents = []
    for _ in range(2):
        # Each task process also imports pyiceberg and pyarrow: slower on a loaded machine.
        done = run_etl_craft(*arguments, cwd=tmp_path, env={}, timeout=900)
        assert done.returncode == 0, done.stderr
        documents.append(json.loads(done.stdout))

    assert [document["batch"]["batch"] for document in documents] == [1, 2]
    for document in documents:
        assert [(run["pipeline_code"], run["status"]) for run in document["runs"]] == [
            (pipeline, "SUCCESS") for pipeline in PIPELINES
        ]
    data = tmp_path / "etl-craft-demo" / "etl-craft" / "data"
    assert not (data / "warehouse.duckdb").exists()
    assert any((data / "lakehouse").rglob("*.parquet"))
    expected = Expected(batches=2)
    layers = {layer["table"]: layer["rows"] for layer in documents[-1]["layers"]}
    for client in CLIENTS:
        table = f"lnd.client_{client}_interactions"
        assert layers[table] == expected.landed(client)
        assert query(data, f"SELECT COUNT(*) FROM {table}") == [(expected.landed(client),)]
    assert layers["prs.interactions"] == expected.prs_rows()
    assert layers["dm.customer_support_fact"] == expected.dm_rows()
    current = query(
        data,
        "SELECT source_system, interaction_id FROM prs.interactions WHERE ACTIVE_FLAG = 'Y'",
    )
    assert sorted(current) == sorted(expected.latest())  # one current version per key
    facts = query(
        data,
        "SELECT source_system, interaction_id, status, rating FROM dm.customer_support_fact "
        "WHERE ACTIVE_FLAG = 'Y'",
    )
    assert {(s, i): (status, rating) for s, i, status, rating in facts} == {
        k: (v.status, v.rating) for k, v in expected.dm_current().items()
    }
