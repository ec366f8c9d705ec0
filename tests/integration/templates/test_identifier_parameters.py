"""One SQL file for three clients whose tables differ by name: IDENTIFIER parameters put each
client's source table, amount column and landing table where the names stand, quoted by
sqlglot, and lineage orders each pipeline by its own tables. On both warehouses and both
Engine DBs."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from etl_craft.operations.context import OperationContext
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.plan import SpecPlan, write_plan
from tests.fixtures.metadata import TESTER
from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site
from tests.integration.rehash.rehash_site import Site
from tests.integration.templates.token_site import run

# Which table, which column and which landing table: all come from the pipeline.
LAND_SQL = """\
SELECT s.id, s.$$ident.AMOUNT AS amount, $$param.CLIENT AS client
  FROM $$ident.SOURCE s
"""
PUBLISH_SQL = """\
SELECT l.id, l.amount, l.client FROM lnd.$$ident.CLIENT l WHERE l.active_flag = 'Y'
"""
TEMPLATE = """\
parameters:
  CLIENT: {type: IDENTIFIER}
  SOURCE: {type: IDENTIFIER}
  AMOUNT: {type: IDENTIFIER, value: amount}
tasks:
  land:
    action: CREATE_TABLE
    target: lnd.$$ident.CLIENT
    sql: land.sql
  publish:
    action: CREATE_TABLE
    target: dm.$$ident.CLIENT
    sql: publish.sql
instances:
  client_a:
    parameters: {CLIENT: acme, SOURCE: src.acme_orders}
  client_b:
    parameters: {CLIENT: bolt, SOURCE: src.bolt_orders, AMOUNT: total}
  client_c:
    parameters: {CLIENT: core, SOURCE: src.core_orders, AMOUNT: order}
"""
CLIENTS = {"client_a": "acme", "client_b": "bolt", "client_c": "core"}


@pytest.fixture(params=SITES, ids=SITE_IDS)
def planned(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Site, SpecPlan]]:
    with project_on_site(request, tmp_path, "etl_craft_identifiers") as (project, kind):
        for folder, name, text in (
            ("sql_files", "land.sql", LAND_SQL),
            ("sql_files", "publish.sql", PUBLISH_SQL),
            ("pipelines", "clients.yml", TEMPLATE),
        ):
            (project.root / folder).mkdir(exist_ok=True)
            (project.root / folder / name).write_text(text)
        ctx = OperationContext(project.project, project.connector, project.engine, TESTER)
        plan = write_plan(ctx)
        migrate(ctx)
        site = Site(project, kind)
        site.sql(
            "CREATE SCHEMA src",
            "CREATE TABLE src.acme_orders (id INTEGER, amount DECIMAL(12,2))",
            "CREATE TABLE src.bolt_orders (id INTEGER, total DECIMAL(12,2))",
            'CREATE TABLE src.core_orders (id INTEGER, "order" DECIMAL(12,2))',
            "INSERT INTO src.acme_orders VALUES (1, 5.00), (2, 50.00)",
            "INSERT INTO src.bolt_orders VALUES (3, 70.00)",
            "INSERT INTO src.core_orders VALUES (4, 20.00), (5, -9.00)",
        )
        yield site, plan


def test_lineage_orders_each_pipeline_by_its_own_landing_table(
    planned: tuple[Site, SpecPlan],
) -> None:
    _, plan = planned

    assert plan.refusal is None
    assert plan.untraced == ()
    assert sorted(
        (e.pipeline, e.task, e.upstream_task, e.table, e.outcome) for e in plan.inferred
    ) == [(code, "publish", "land", f"lnd.{client}", "written") for code, client in CLIENTS.items()]


def test_one_sql_file_serves_three_pipelines_each_with_its_own_tables(
    planned: tuple[Site, SpecPlan],
) -> None:
    site, _ = planned
    for code in CLIENTS:
        assert run(site, code, f"manual:{code}") == ("SUCCESS", {"land": None, "publish": None})

    def read(table: str) -> list[tuple[int, Decimal, str]]:
        rows = site.rows(f"SELECT id, amount, client FROM {table} ORDER BY id")
        return [(int(str(r[0])), Decimal(str(r[1])), str(r[2])) for r in rows]

    assert read("dm.acme") == [(1, Decimal("5.00"), "acme"), (2, Decimal("50.00"), "acme")]
    assert read("dm.bolt") == [(3, Decimal("70.00"), "bolt")]
    # The reserved word `order` is a name here, quoted by sqlglot: never SQL.
    assert read("dm.core") == [(4, Decimal("20.00"), "core"), (5, Decimal("-9.00"), "core")]
    assert read("lnd.core") == read("dm.core")
