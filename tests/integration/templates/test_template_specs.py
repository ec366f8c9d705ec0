"""A pipeline template in pipelines/, instantiated for three clients: plan --write compiles one
CFG_ pipeline per instance, every one reading the same SQL file, and each run writes its own
client's rows, on both warehouses and both Engine DBs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.lineage.build import build_lineage
from etl_craft.operations.catalog.snapshot import read_catalog
from etl_craft.operations.context import OperationContext
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.effects import spec_metadata
from etl_craft.operations.specs.plan import write_plan
from etl_craft.specs.loader import load_specs
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site
from tests.integration.rehash.rehash_site import Site
from tests.integration.templates.token_site import HOSTILE, ODD, ORDERS_SQL, load_orders, run


def yaml_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# One definition, three parameter sets: the SQL file and the task are written once.
TEMPLATE = f"""\
description: One client's orders over its threshold
parameters:
  CLIENT: {{type: STRING}}
  MIN_AMOUNT: {{type: DECIMAL, value: 0}}
  CUTOFF: {{type: DATE, value: "2026-12-31"}}
  VIP: {{type: BOOLEAN, value: false}}
tasks:
  load:
    action: CREATE_TABLE
    target: dm.orders
    sql: orders.sql
instances:
  client_a:
    parameters: {{CLIENT: acme, MIN_AMOUNT: 10, VIP: true}}
    tasks:
      load: {{target: dm.client_a}}
  client_b:
    description: The client whose name is hostile SQL
    parameters:
      CLIENT: {yaml_text(HOSTILE)}
      MIN_AMOUNT: -10.5
      CUTOFF: "2026-02-28"
    tasks:
      load: {{target: dm.client_b}}
  client_c:
    parameters: {{CLIENT: {yaml_text(ODD)}, CUTOFF: null}}
    tasks:
      load: {{target: dm.client_c}}
"""
COLUMNS = "id, client, pipeline_code, run_key, min_amount, cutoff, vip"


@pytest.fixture(params=SITES, ids=SITE_IDS)
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    with project_on_site(request, tmp_path, "etl_craft_templates") as (project, warehouse_kind):
        for folder, name, text in (
            ("sql_files", "orders.sql", ORDERS_SQL),
            ("pipelines", "clients.yml", TEMPLATE),
        ):
            (project.root / folder).mkdir()
            (project.root / folder / name).write_text(text)
        ctx = OperationContext(project.project, project.connector, project.engine, TESTER)
        planned = write_plan(ctx)
        assert planned.refusal is None
        assert planned.pipelines == ("client_a", "client_b", "client_c")
        migrate(ctx)
        made = Site(project, warehouse_kind)
        load_orders(made)
        yield made


def test_the_template_compiles_to_a_pipeline_per_instance_sharing_one_sql_file(
    site: Site,
) -> None:
    with site.project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT p.PIPELINE_CODE, p.DESCRIPTION, x.PARAMETER_NAME, x.PARAMETER_VALUE "
            "FROM CFG_TASK_PARAMETERS x JOIN CFG_TASKS t ON t.TASK_ID = x.TASK_ID "
            "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID "
            "WHERE x.PARAMETER_NAME IN ('SOURCE_SQL_FILE', 'TARGET_OBJECT') "
            "ORDER BY p.PIPELINE_CODE, x.PARAMETER_NAME",
        ).all()
        parameters = execute(
            conn,
            "SELECT x.PARAMETER_NAME, x.PARAMETER_VALUE, x.PARAMETER_TYPE "
            "FROM CFG_PIPELINE_PARAMETERS x JOIN CFG_PIPELINES p ON p.PIPELINE_ID = x.PIPELINE_ID "
            "WHERE p.PIPELINE_CODE = 'client_b' ORDER BY x.PARAMETER_NAME",
        ).all()

    description = "One client's orders over its threshold"
    assert [tuple(r) for r in rows] == [
        ("client_a", description, "SOURCE_SQL_FILE", "orders.sql"),
        ("client_a", description, "TARGET_OBJECT", "dm.client_a"),
        ("client_b", "The client whose name is hostile SQL", "SOURCE_SQL_FILE", "orders.sql"),
        ("client_b", "The client whose name is hostile SQL", "TARGET_OBJECT", "dm.client_b"),
        ("client_c", description, "SOURCE_SQL_FILE", "orders.sql"),
        ("client_c", description, "TARGET_OBJECT", "dm.client_c"),
    ]
    assert [tuple(r) for r in parameters] == [
        ("CLIENT", HOSTILE, "STRING"),
        ("CUTOFF", "2026-02-28", "DATE"),
        ("MIN_AMOUNT", "-10.5", "DECIMAL"),
        ("VIP", "N", "BOOLEAN"),
    ]


def test_three_instances_run_three_pipelines_from_one_sql_file(site: Site) -> None:
    for code in ("client_a", "client_b", "client_c"):
        assert run(site, code, f"manual:{code}")[0] == "SUCCESS"

    def read(table: str) -> list[tuple[object, ...]]:
        rows = site.rows(f"SELECT {COLUMNS} FROM dm.{table} ORDER BY id")
        return [(int(str(r[0])), *r[1:4], Decimal(str(r[4])), r[5], r[6]) for r in rows]

    assert read("client_a") == [
        (2, "acme", "client_a", "manual:client_a", Decimal(10), date(2026, 12, 31), True)
    ]
    # The quote and the semicolon are data: they select the client's rows and are stored.
    assert read("client_b") == [
        (3, HOSTILE, "client_b", "manual:client_b", Decimal("-10.5"), date(2026, 2, 28), False),
        (4, HOSTILE, "client_b", "manual:client_b", Decimal("-10.5"), date(2026, 2, 28), False),
    ]
    assert read("client_c") == [(5, ODD, "client_c", "manual:client_c", Decimal(0), None, False)]
    assert [tuple(r) for r in site.rows("SELECT COUNT(*) FROM src.orders")] == [(6,)]


def test_the_catalog_shows_each_pipeline_its_own_sql(site: Site) -> None:
    project = site.project
    ctx = OperationContext(project.project, project.connector, project.engine, TESTER)

    shown = {task.name: task.sql or "" for task in read_catalog(ctx).tasks}

    assert "WHERE o.client = 'acme'" in shown["client_a.load"]
    assert "$$pipeline_code AS" not in shown["client_b.load"]
    assert "'client_b' AS pipeline_code" in shown["client_b.load"]
    assert "o.client = 'O''Brien''; DROP TABLE src.orders; --'" in shown["client_b.load"]
    # The run's own values are known only to a run.
    assert "$$run_key AS run_key" in shown["client_c.load"]


def test_plan_traces_a_new_instance_with_its_own_parameters(site: Site) -> None:
    pipelines = site.project.root / "pipelines"
    (pipelines / "clients.yml").write_text(
        TEMPLATE + "  client_d:\n    parameters: {CLIENT: delta}\n"
    )
    with site.project.engine.read() as conn:
        metadata = read_project_metadata(conn, "default")

    planned = spec_metadata(metadata, load_specs(pipelines))
    graph = build_lineage(planned, site.project.project, "duckdb").graph

    assert [t.name for t in graph.untraced()] == []
    assert graph.columns_of("dm.orders") == tuple(COLUMNS.split(", "))
