"""The demo with --profile snowflake on the emulated Snowflake: every pipeline succeeds, and each
table of each layer holds as many rows as the same batch leaves on DuckDB (the default)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.e2e.demo.demo_site import PIPELINES, Expected, quick_start_arguments
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.processes import ETL_CRAFT, clean_env
from tests.fixtures.snowflake import Emulator

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
LAYERS = ("lnd", "prs", "cdc", "pre_dm", "dm", "ref")
# The demo's own database on the emulator (examples/demo/etl-craft/craft-connector.yml).
DATABASE = "SUPPORT_INSIGHTS"


@pytest.fixture
def engine_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_demo_sf_engine")
    yield create_database(pg_admin_url, name)
    drop_database(pg_admin_url, name)


def demo(cwd: Path, *profile: str, env: dict[str, str] | None = None) -> dict[str, object]:
    arguments = [*quick_start_arguments(), *profile, "--format", "json"]
    done = subprocess.run(
        [ETL_CRAFT, *arguments],
        cwd=cwd,
        env=clean_env(**(env or {})),
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    document: dict[str, object] = json.loads(done.stdout)
    return document


def duckdb_counts(folder: Path) -> dict[str, int]:
    path = folder / "etl-craft-demo" / "etl-craft" / "data" / "warehouse.duckdb"
    with duckdb.connect(str(path), read_only=True) as conn:
        tables = conn.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name IN "
            f"({', '.join(repr(layer) for layer in LAYERS)})"
        ).fetchall()
        return {
            f"{schema}.{table}".lower(): int(
                conn.execute(f"SELECT COUNT(*) FROM {schema}.{table}").fetchall()[0][0]
            )
            for schema, table in tables
        }


def snowflake_counts(emulator: Emulator) -> dict[str, int]:
    with emulator.connect(DATABASE) as conn:
        layers = ", ".join(f"'{layer.upper()}'" for layer in LAYERS)
        tables = conn.fetch_all(
            "list the demo's tables",
            f"SELECT TABLE_SCHEMA, TABLE_NAME FROM {DATABASE}.INFORMATION_SCHEMA.TABLES "
            f"WHERE TABLE_SCHEMA IN ({layers}) AND TABLE_TYPE = 'BASE TABLE'",
        )
        return {
            f"{schema}.{table}".lower(): int(
                conn.fetch_value("count", f"SELECT COUNT(*) FROM {schema}.{table}")
            )
            for schema, table in tables
        }


# Five pipelines at tens of milliseconds a statement on the emulator, then the same on DuckDB.
@pytest.mark.timeout(1200)
def test_the_demo_runs_on_snowflake_with_the_row_counts_it_has_on_duckdb(
    tmp_path: Path, engine_url: str, snowflake_emulator: Emulator
) -> None:
    on_snowflake, on_duckdb = tmp_path / "snowflake", tmp_path / "duckdb"
    on_snowflake.mkdir()
    on_duckdb.mkdir()
    env = {
        "ETL_CRAFT_DEMO_ENGINE_URL": engine_url,
        "ETL_CRAFT_DEMO_SNOWFLAKE_URL": snowflake_emulator.url,
        "ETL_CRAFT_DEMO_SNOWFLAKE_PASSWORD": "emulated",
    }
    document = demo(on_snowflake, "--profile", "snowflake", env=env)
    runs = document["runs"]
    assert isinstance(runs, list)
    assert [(run["pipeline_code"], run["status"]) for run in runs] == [
        (pipeline, "SUCCESS") for pipeline in PIPELINES
    ]
    demo(on_duckdb)

    counts = snowflake_counts(snowflake_emulator)
    assert counts == duckdb_counts(on_duckdb)
    expected = Expected(batches=1)
    assert counts["lnd.client_beta_interactions"] == expected.landed("beta")
    assert counts["prs.interactions"] == expected.prs_rows()
    assert counts["dm.customer_support_fact"] == expected.dm_rows()
