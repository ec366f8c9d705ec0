"""etl-craft lineage through the installed script, on an SQLite Engine DB and DuckDB dialect."""

from __future__ import annotations

import duckdb
import pytest

from tests.integration.cli.conftest import PROJECT_CODE, Site

# Two pipelines: load writes pub.orders, report reads it (without a dependency on load) and
# a third task reads a table nothing in the project writes with SELECT *.
MIGRATION = f"""\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'load' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{PROJECT_CODE}';
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'report' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{PROJECT_CODE}';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'write_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'load';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'sum_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'report';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'copy_raw', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'report';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.NAME, x.VALUE
  FROM CFG_TASKS t
  JOIN (SELECT 'write_orders' AS TASK, 'ACTION' AS NAME, 'OVERWRITE_TABLE' AS VALUE
        UNION ALL SELECT 'write_orders', 'TARGET_OBJECT', 'pub.orders'
        UNION ALL SELECT 'write_orders', 'SOURCE_SQL',
                         'SELECT r.id, r.amount * 100 AS cents FROM raw.orders r'
        UNION ALL SELECT 'sum_orders', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'sum_orders', 'TARGET_OBJECT', 'pub.totals'
        UNION ALL SELECT 'sum_orders', 'SOURCE_SQL',
                         'SELECT o.id AS order_id, SUM(o.cents) AS total FROM pub.orders o GROUP BY o.id'
        UNION ALL SELECT 'copy_raw', 'ACTION', 'CREATE_TABLE'
        UNION ALL SELECT 'copy_raw', 'TARGET_OBJECT', 'pub.raw_copy'
        UNION ALL SELECT 'copy_raw', 'SOURCE_SQL', 'SELECT * FROM raw.customers') x
    ON x.TASK = t.TASK_CODE;
"""


@pytest.fixture
def site(sqlite_site: Site) -> Site:
    assert sqlite_site.run("init-db").returncode == 0
    sqlite_site.write_migration("0001_orders.sql", MIGRATION)
    # The project reads a table without ordering the read on purpose (validate's FAIL below), so
    # migrate's own validation, which would refuse it, is bypassed.
    done = sqlite_site.run("migrate", "--no-validate")
    assert done.returncode == 0, done.stderr
    return sqlite_site


def test_the_summary_lists_table_edges_and_the_untraced_task(site: Site) -> None:
    done = site.run("lineage")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"lineage of project {PROJECT_CODE}: 5 tables")
    assert "  raw.orders -> pub.orders [load.write_orders]" in lines
    assert "  pub.orders -> pub.totals [report.sum_orders]" in lines
    [untraced] = [line for line in lines if "not traced" in line]
    assert "report.copy_raw (writes pub.raw_copy): SELECT * reads raw.customers" in untraced


def test_strict_fails_on_the_untraced_select(site: Site) -> None:
    code, document = site.json("lineage", "--strict")

    assert code == 1
    assert document["schema"] == "etl-craft/lineage/1"
    assert [(t["pipeline_code"], t["task_code"]) for t in document["untraced"]] == [
        ("report", "copy_raw")
    ]


def test_a_column_walks_upstream_across_pipelines_as_json(site: Site) -> None:
    code, document = site.json(
        "lineage", "--table", "pub.totals", "--column", "total", "--upstream"
    )

    assert code == 0
    assert document["schema"] == "etl-craft/lineage-path/1"
    assert [
        (c["source_table"], c["source_column"], c["target_column"], c["kind"], c["depth"])
        for c in document["columns"]
    ] == [
        ("pub.orders", "cents", "total", "derived", 1),
        ("raw.orders", "amount", "cents", "derived", 2),
    ]


def test_depth_limits_a_downstream_walk(site: Site) -> None:
    code, document = site.json("lineage", "--table", "raw.orders", "--downstream", "--depth", "1")

    assert code == 0
    assert [(t["source"], t["target"]) for t in document["tables"]] == [
        ("raw.orders", "pub.orders")
    ]


def test_an_unknown_table_names_the_known_ones(site: Site) -> None:
    done = site.run("lineage", "--table", "pub.nowhere")

    assert done.returncode != 0
    assert "table 'pub.nowhere' is neither written nor read" in done.stderr
    assert "pub.orders" in done.stderr


def test_validate_fails_the_read_without_a_dependency(site: Site) -> None:
    done = site.run("validate")

    assert done.returncode == 1
    assert (
        "FAIL unordered-read report.sum_orders: it reads pub.orders, which task "
        "load.write_orders writes" in done.stdout
    )


def test_with_warehouse_traces_a_star_of_a_table_only_the_warehouse_knows(site: Site) -> None:
    with duckdb.connect(str(site.project / "warehouse.duckdb")) as conn:
        conn.execute("CREATE SCHEMA raw")
        conn.execute("CREATE TABLE raw.customers (id INTEGER, Name VARCHAR)")

    code, document = site.json("lineage", "--with-warehouse", "--strict")

    assert (code, document["untraced"]) == (0, [])
    code, walk = site.json(
        "lineage", "--with-warehouse", "--table", "pub.raw_copy", "--column", "name"
    )
    assert [(c["source_table"], c["source_column"], c["kind"]) for c in walk["columns"]] == [
        ("raw.customers", "name", "copy")
    ]
