"""Real warehouses: a throwaway PostgreSQL database per test module, a DuckDB file per test, and
Iceberg tables in a SQL catalog (a SQLite file per test, or the module's PostgreSQL database)
with their files in a folder per test."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.spark import connect_spark
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.snowflake import LIVE, Emulator, live_connection

WAREHOUSES = ("postgresql", "duckdb", "iceberg-sqlite", "iceberg-postgresql", "snowflake", "spark")


@pytest.fixture(scope="module")
def pg_warehouse_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_warehouse")
    url = create_database(pg_admin_url, name)
    yield url
    drop_database(pg_admin_url, name)


# The emulated Snowflake runs the contract (every action, SCD1 and SCD2 cases, evolution,
# appends, the guards, fencing and the golden SQL); the live suite (-m cloud) runs the same
# modules against an account. Left out: fault injection (it relies on a key constraint, which
# Snowflake never enforces and the emulator answers with an HTTP 500), rehearsals (Snowflake
# commits DDL at once, so a preview stops before it: the Snowflake guide's limits) and the
# connection module's type spellings and COMMENT statements, which the emulator renders its own way.
SNOWFLAKE_CONTRACT = frozenset(
    {
        "test_actions",
        "test_fence",
        "test_hash_and_evolution",
        "test_concurrency",
        "test_snowflake_golden",
        "test_snowflake_live",
        "test_scd2_validity",
        "test_guards",
    }
)
# The modules whose every case has run green on Spark, or skips it by a capability Spark lacks
# (transactions, DROP COLUMN); a module not listed skips Spark, saying so. test_schema_creation
# is PostgreSQL's alone.
SPARK_READY = frozenset(
    {
        "test_actions",
        "test_concurrency",
        "test_connection",
        "test_faults_and_ledger",
        "test_fence",
        "test_guards",
        "test_hash_and_evolution",
        "test_rehearsal",
        "test_scd2_validity",
    }
)

# On Spark, where each case costs seconds, a test repeated for every action (or every spelling)
# whose outcome is a refusal decided before anything is written, by code no warehouse changes
# (the SELECT's columns and statements, the catalog's answer, the staged keys), runs its first
# case only; the cases that write (each action, history, evolution, faults after each write,
# the ledger row of each action) all run.
SPARK_FIRST_CASE_ONLY = frozenset(
    {
        "test_guards.py::test_null_merge_keys",
        "test_guards.py::test_engine_managed_columns",
        "test_guards.py::test_names_needing_quotes",
        "test_guards.py::test_dedupe_ties_between_differing_rows",
        "test_guards.py::test_missing_target",
        "test_guards.py::test_float_compare_columns",
        "test_guards.py::test_only_one_read_only_select",
        "test_guards.py::test_trailing_semicolon_and_comment",
        "test_faults_and_ledger.py::test_warehouse_fault_in_the_select",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    seen: set[str] = set()
    for item in items:
        callspec = getattr(item, "callspec", None)
        name = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        if (
            callspec is None
            or callspec.params.get("warehouse_kind") != "spark"
            or name not in SPARK_FIRST_CASE_ONLY
        ):
            kept.append(item)
        elif name in seen:
            dropped.append(item)
        else:
            seen.add(name)
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# Spark's cases share the session's Spark Connect server: the marker puts them all on one xdist
# worker (tests/fixtures/scheduling.py); -m 'not spark' leaves them out (see the Spark guide).
@pytest.fixture(
    params=[
        pytest.param(kind, marks=pytest.mark.spark) if kind == "spark" else kind
        for kind in WAREHOUSES
    ]
)
def warehouse_kind(request: pytest.FixtureRequest) -> str:
    if request.param == "snowflake" and request.module.__name__.split(".")[-1] not in (
        SNOWFLAKE_CONTRACT
    ):
        pytest.skip(
            "the emulated Snowflake runs the warehouse contract's modules only "
            "(tests/integration/warehouse/conftest.py SNOWFLAKE_CONTRACT): this one relies on "
            "key constraints, DDL rolled back or type spellings that Snowflake or its emulator "
            "doesn't share"
        )
    module = request.module.__name__.rsplit(".", 1)[-1]
    if request.param == "spark" and module not in SPARK_READY:
        pytest.skip(
            f"{module} isn't run on Spark yet: it runs there once it has run green and is added "
            "to SPARK_READY (tests/integration/warehouse/conftest.py); see the Spark guide's "
            "section on what the contract proves on Spark"
        )
    return str(request.param)


@pytest.fixture
def warehouse_location(warehouse_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A PostgreSQL URL, a DuckDB file path, or an Iceberg catalog and its folder (joined by a
    space), for opening more connections to one warehouse."""
    if warehouse_kind == "postgresql":
        return str(request.getfixturevalue("pg_warehouse_url"))
    if warehouse_kind == "iceberg-sqlite":
        return f"{tmp_path / 'catalog.db'} {tmp_path / 'lakehouse'}"
    if warehouse_kind == "iceberg-postgresql":
        return f"{request.getfixturevalue('pg_warehouse_url')} {tmp_path / 'lakehouse'}"
    if warehouse_kind == "snowflake":
        emulator: Emulator = request.getfixturevalue("snowflake_emulator")
        return f"{emulator.host}:{emulator.port}/{emulator.new_database()}"
    if warehouse_kind == "spark":
        return str(request.getfixturevalue("spark_remote"))
    return str(tmp_path / "warehouse.duckdb")


def open_warehouse(kind: str, location: str) -> WarehouseConnection:
    if kind == "postgresql":
        return PostgreSQLConnection(location)
    if kind.startswith("iceberg"):
        return connect(iceberg_warehouse(location))
    if kind == "snowflake" and location == LIVE:
        return live_connection()
    if kind == "snowflake":
        address, database = location.split("/")
        host, port = address.split(":")
        return Emulator(host, int(port)).connect(database)
    if kind == "spark":
        driver = importlib.import_module("pyspark.sql.connect.session")
        return connect_spark(driver, location, None, None)
    return DuckDBConnection(location)


def iceberg_warehouse(location: str) -> Warehouse:
    catalog, folder = location.split(" ")
    url, path = (catalog, None) if "://" in catalog else (None, catalog)
    return Warehouse(
        type=WarehouseType.ICEBERG,
        url=url,
        path=path,
        ledger_schema="etl_craft",
        max_queries=None,
        options={"location": folder},
    )


@pytest.fixture
def warehouse(warehouse_kind: str, warehouse_location: str) -> Iterator[WarehouseConnection]:
    conn = open_warehouse(warehouse_kind, warehouse_location)
    if warehouse_kind == "spark":
        # One Spark server serves the session: each test starts from an empty ledger, as a
        # DuckDB test starts from a new file.
        conn.execute("start from an empty ledger", "DROP SCHEMA IF EXISTS etl_craft CASCADE")
    yield conn
    conn.close()


@pytest.fixture
def schema(warehouse: WarehouseConnection) -> str:
    """A fresh schema per test, so tests sharing a module database never see each other."""
    name = unique_name("s")
    warehouse.execute("create the test schema", f"CREATE SCHEMA {name}")
    return name
