"""The quick start with --profile postgres: a PostgreSQL Engine DB and a PostgreSQL warehouse."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.e2e.demo.demo_site import PIPELINES, Expected, quick_start_arguments, run_etl_craft
from tests.fixtures.databases import create_database, drop_database, unique_name

pytestmark = pytest.mark.postgres


@pytest.fixture
def databases(pg_admin_url: str) -> Iterator[dict[str, str]]:
    """An empty Engine DB and an empty warehouse, as the demo's postgres profile names them."""
    names = {
        "ETL_CRAFT_DEMO_ENGINE_URL": unique_name("etl_craft_demo_engine"),
        "ETL_CRAFT_DEMO_WAREHOUSE_URL": unique_name("etl_craft_demo_warehouse"),
    }
    urls = {variable: create_database(pg_admin_url, name) for variable, name in names.items()}
    yield urls
    for name in names.values():
        drop_database(pg_admin_url, name)


def query(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_the_demo_runs_on_postgresql_and_lands_each_batch_once(
    tmp_path: Path, databases: dict[str, str]
) -> None:
    arguments = [*quick_start_arguments(), "--profile", "postgres", "--format", "json"]

    documents = []
    for _ in range(2):
        done = run_etl_craft(*arguments, cwd=tmp_path, env=databases)
        assert done.returncode == 0, done.stderr
        documents.append(json.loads(done.stdout))

    assert [document["batch"]["batch"] for document in documents] == [1, 2]
    for document in documents:
        assert [(run["pipeline_code"], run["status"]) for run in document["runs"]] == [
            (pipeline, "SUCCESS") for pipeline in PIPELINES
        ]
        assert document["engine_db"].endswith(databases["ETL_CRAFT_DEMO_ENGINE_URL"][-30:])
    assert not (tmp_path / "etl-craft-demo" / "etl-craft" / "data").exists()
    warehouse, expected = databases["ETL_CRAFT_DEMO_WAREHOUSE_URL"], Expected(batches=2)
    landed = query(warehouse, "SELECT COUNT(*) FROM lnd.client_beta_interactions")
    assert landed == [(expected.landed("beta"),)]
    current = query(
        warehouse,
        "SELECT source_system, interaction_id FROM prs.interactions WHERE ACTIVE_FLAG = 'Y'",
    )
    assert sorted(current) == sorted(expected.latest())  # one current version per key
    facts = query(
        warehouse,
        "SELECT source_system, interaction_id, status, rating FROM dm.customer_support_fact "
        "WHERE ACTIVE_FLAG = 'Y'",
    )
    assert {(s, i): (status, rating) for s, i, status, rating in facts} == {
        k: (v.status, v.rating) for k, v in expected.dm_current().items()
    }
    runs = query(
        databases["ETL_CRAFT_DEMO_ENGINE_URL"],
        "SELECT STATUS, COUNT(*) FROM AUD_PIPELINES_RUN_LOG GROUP BY STATUS",
    )
    assert runs == [("SUCCESS", 10)]
