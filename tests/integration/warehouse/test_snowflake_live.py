"""The warehouse contract against a real Snowflake account (marker ``cloud``, deselected by
default).

It runs the same tests the emulated Snowflake runs (actions, SCD1/SCD2, evolution, appends,
fencing), collected here a second time with the warehouse being the account that the
environment names:

    SNOWFLAKE_ACCOUNT, SNOWFLAKE_USER, SNOWFLAKE_DATABASE (required), SNOWFLAKE_ROLE,
    SNOWFLAKE_WAREHOUSE, and SNOWFLAKE_PASSWORD or SNOWFLAKE_PRIVATE_KEY_FILE (with
    SNOWFLAKE_PRIVATE_KEY_PASSPHRASE)

    uv run pytest -m cloud tests/integration/warehouse/test_snowflake_live.py

Each test works in a schema of its own, dropped at its end. docs/guides/snowflake.md says what a
run costs. Without the variables every test here is skipped, naming them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.databases import unique_name
from tests.fixtures.snowflake import LIVE, live_connection
from tests.integration.warehouse.test_actions import *  # noqa: F403
from tests.integration.warehouse.test_concurrency import (
    test_failed_then_retried_append_leaves_rows_once,
)
from tests.integration.warehouse.test_fence import (
    test_a_ledger_without_its_fence_table_gets_one,
    test_an_older_attempt_is_refused_once_a_later_one_published,
)
from tests.integration.warehouse.test_hash_and_evolution import (
    test_a_table_wider_than_a_function_takes_arguments_is_hashed,
    test_evolution_adds_full_types,
    test_golden_digests,
)

pytestmark = pytest.mark.cloud
__all__ = [
    "test_a_ledger_without_its_fence_table_gets_one",
    "test_a_table_wider_than_a_function_takes_arguments_is_hashed",
    "test_an_older_attempt_is_refused_once_a_later_one_published",
    "test_evolution_adds_full_types",
    "test_failed_then_retried_append_leaves_rows_once",
    "test_golden_digests",
]


@pytest.fixture
def warehouse_kind() -> str:
    return "snowflake"


@pytest.fixture
def warehouse_location() -> str:
    return LIVE


@pytest.fixture
def warehouse() -> Iterator[WarehouseConnection]:
    conn = live_connection()
    yield conn
    conn.close()


@pytest.fixture
def schema(warehouse: WarehouseConnection) -> Iterator[str]:
    name = unique_name("s")
    warehouse.execute("create the test schema", f"CREATE SCHEMA {name}")
    yield name
    warehouse.execute("drop the test schema", f"DROP SCHEMA IF EXISTS {name} CASCADE")
