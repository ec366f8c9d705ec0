"""validate looks up in the warehouse what each SELECT reads: a table or a column that exists
nowhere is a FAIL naming the task, the SQL file and its line, on DuckDB and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from etl_craft.operations.context import OperationContext
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.plan import write_plan
from etl_craft.operations.validate.report import Finding, validate
from etl_craft.warehouse import connect
from tests.fixtures.metadata import TESTER
from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site

SPEC = """\
tasks:
  customers:
    action: CREATE_TABLE
    target: dm.customers
    sql: customers.sql
  orders:
    action: CREATE_TABLE
    target: dm.orders
    source_sql: "SELECT order_id\\n  FROM src.orders"
  names:
    action: CREATE_TABLE
    target: dm.names
    source_sql: SELECT customer_id, name FROM dm.customers
"""
# Holds a DuckDB file open read-write, as a running task does, until its stdin closes.
HOLD_OPEN = (
    "import sys; from etl_craft.warehouse import DuckDBConnection; "
    "c = DuckDBConnection(sys.argv[1]); print('open', flush=True); sys.stdin.read(); c.close()"
)
# The customer's name is misspelt on line 3; the table is right.
CUSTOMERS = "-- every customer\nSELECT customer_id,\n       nmae AS name\n  FROM src.customers\n"


@pytest.fixture(params=SITES, ids=SITE_IDS)
def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OperationContext]:
    with project_on_site(request, tmp_path, "etl_craft_reads") as (made, _):
        with connect(made.connector.warehouse) as warehouse:
            warehouse.execute("set up", "CREATE SCHEMA src")
            warehouse.execute("set up", "CREATE TABLE src.customers (customer_id INT, name TEXT)")
        (made.root / "pipelines").mkdir()
        (made.root / "pipelines" / "shop.yml").write_text(SPEC)
        (made.root / "sql_files").mkdir()
        (made.root / "sql_files" / "customers.sql").write_text(CUSTOMERS)
        context = OperationContext(made.project, made.connector, made.engine, TESTER)
        write_plan(context)
        migrate(context)
        yield context


def _found(ctx: OperationContext) -> dict[tuple[str, str | None], Finding]:
    report = validate(ctx)
    return {
        (f.check, f.task_code): f
        for f in report.findings
        if f.check in ("missing-table", "missing-column")
    }


def test_a_table_that_exists_nowhere_fails_naming_task_file_and_line(
    ctx: OperationContext,
) -> None:
    missing = _found(ctx)[("missing-table", "orders")]

    assert missing.parameter == "SOURCE_SQL"
    assert missing.spec == "pipelines/shop.yml:9 tasks.orders.source_sql"
    assert missing.message.startswith(
        "the SELECT in SOURCE_SQL (line 2) reads src.orders, which is neither in the warehouse "
        "nor the target of any task"
    )


def test_a_column_that_exists_nowhere_fails_naming_task_file_and_line(
    ctx: OperationContext,
) -> None:
    found = _found(ctx)

    missing = found[("missing-column", "customers")]
    assert missing.parameter == "SOURCE_SQL_FILE"
    assert missing.spec == "pipelines/shop.yml:5 tasks.customers.sql"
    assert missing.message == (
        "the SELECT in sql_files/customers.sql (line 3) takes nmae from src.customers, which "
        "has no such column (it has customer_id, name)"
    )
    # dm.customers gets its name column from the customers task: no finding for its reader.
    assert ("missing-column", "names") not in found
    assert set(found) == {("missing-table", "orders"), ("missing-column", "customers")}


def test_once_fixed_the_reads_are_valid(ctx: OperationContext) -> None:
    assert ctx.project is not None
    with connect(ctx.connector.warehouse) as warehouse:  # type: ignore[union-attr]
        warehouse.execute("set up", "CREATE TABLE src.orders (order_id INT)")
    (ctx.project.sql_files_dir / "customers.sql").write_text(CUSTOMERS.replace("nmae", "name"))

    assert _found(ctx) == {}


def test_a_duckdb_file_a_run_holds_is_not_waited_for(ctx: OperationContext) -> None:
    warehouse = ctx.connector.warehouse  # type: ignore[union-attr]
    if warehouse.path is None:
        pytest.skip("a DuckDB warehouse is a file only")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_OPEN, warehouse.path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        with ThreadPoolExecutor(1) as pool:
            found = pool.submit(_found, ctx)
            try:
                # Without the look-ups, rather than waiting for the holder to let go.
                assert found.result(timeout=60) == {}
            finally:
                holder.communicate("", timeout=30)
    finally:
        holder.kill()
