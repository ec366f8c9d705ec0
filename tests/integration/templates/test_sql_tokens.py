"""`$$pipeline_code`, `$$run_key` and `$$param.NAME` on real warehouses: one SQL file serves
several pipelines, and every value lands as data of its type, never as SQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from etl_craft.config.rules import WarehouseType
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.lineage.build import build_lineage
from etl_craft.lineage.graph import Direction
from etl_craft.warehouse import SQL_DIALECTS
from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site
from tests.integration.preview.preview_site import preview
from tests.integration.rehash.rehash_site import Site
from tests.integration.templates.token_site import (
    HOSTILE,
    ODD,
    ORDERS_SQL,
    client_pipelines_sql,
    load_orders,
    run,
)

PIPELINES: dict[str, dict[str, str | None]] = {
    "client_a": {"CLIENT": "acme", "MIN_AMOUNT": "10", "CUTOFF": "2026-01-31", "VIP": "Y"},
    "client_b": {"CLIENT": HOSTILE, "MIN_AMOUNT": "-10.5", "CUTOFF": "2026-02-28", "VIP": "N"},
    "client_c": {"CLIENT": ODD, "MIN_AMOUNT": "0", "CUTOFF": None, "VIP": "true"},
    # A value DECIMAL can't read, and a pipeline that lacks a parameter the SQL reads.
    "bad_value": {"CLIENT": "acme", "MIN_AMOUNT": "ten", "CUTOFF": "2026-01-31", "VIP": "Y"},
    "no_cutoff": {"CLIENT": "acme", "MIN_AMOUNT": "1", "VIP": "Y"},
}
COLUMNS = "id, client, pipeline_code, run_key, min_amount, cutoff, vip"


@pytest.fixture(params=SITES, ids=SITE_IDS)
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    with project_on_site(request, tmp_path, "etl_craft_tokens") as (project, warehouse_kind):
        (project.root / "sql_files").mkdir()
        (project.root / "sql_files" / "orders.sql").write_text(ORDERS_SQL)
        project.migrate("0001_clients.sql", client_pipelines_sql(PIPELINES))
        made = Site(project, warehouse_kind)
        load_orders(made)
        yield made


def typed(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Rows with the warehouse's number types made comparable."""
    return [(int(str(r[0])), r[1], r[2], r[3], Decimal(str(r[4])), r[5], r[6]) for r in rows]


def test_one_sql_file_runs_each_pipeline_with_its_own_values(site: Site) -> None:
    for code in ("client_a", "client_b", "client_c"):
        assert run(site, code, f"manual:{code}'s; run")[0] == "SUCCESS"

    read = f"SELECT {COLUMNS} FROM dm.%s ORDER BY id"
    assert typed(site.rows(read % "client_a")) == [
        (2, "acme", "client_a", "manual:client_a's; run", Decimal(10), date(2026, 1, 31), True)
    ]
    assert typed(site.rows(read % "client_b")) == [
        (
            3,
            HOSTILE,
            "client_b",
            "manual:client_b's; run",
            Decimal("-10.5"),
            date(2026, 2, 28),
            False,
        ),
        (
            4,
            HOSTILE,
            "client_b",
            "manual:client_b's; run",
            Decimal("-10.5"),
            date(2026, 2, 28),
            False,
        ),
    ]
    assert typed(site.rows(read % "client_c")) == [
        (5, ODD, "client_c", "manual:client_c's; run", Decimal(0), None, True)
    ]
    # The hostile value ran no statement of its own: the table it names is whole.
    assert [tuple(r) for r in site.rows("SELECT COUNT(*) FROM src.orders")] == [(6,)]


def test_a_value_its_type_cannot_read_fails_the_run_naming_it(site: Site) -> None:
    status, errors = run(site, "bad_value", "manual:bad")

    assert status == "FAILED"
    error = errors["load"] or ""
    assert "parameter MIN_AMOUNT of pipeline bad_value is 'ten'" in error
    assert "PARAMETER_TYPE DECIMAL can't read; expected a decimal number such as 12.50" in error
    assert "fix PARAMETER_VALUE or PARAMETER_TYPE in CFG_PIPELINE_PARAMETERS" in error


def test_a_token_of_an_undeclared_parameter_fails_the_run_naming_it(site: Site) -> None:
    status, errors = run(site, "no_cutoff", "manual:missing")

    assert status == "FAILED"
    error = errors["load"] or ""
    assert "reads $$param.CUTOFF, but pipeline no_cutoff declares no parameter CUTOFF" in error
    assert "(it declares: CLIENT, MIN_AMOUNT, VIP)" in error


def test_validate_reports_the_bad_value_and_the_undeclared_token(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = site.cli("--format", "json", "validate", capsys=capsys)

    assert code == 1
    found = {
        (f["severity"], f["check"], f["pipeline_code"]): f["message"]
        for f in json.loads(out)["findings"]
    }
    assert "expected a decimal number" in found[("FAIL", "pipeline-parameter", "bad_value")]
    assert "reads $$param.CUTOFF" in found[("FAIL", "sql-token", "no_cutoff")]
    assert not [key for key in found if key[2].startswith("client_") and key[0] == "FAIL"]


def test_preview_shows_the_rows_a_run_of_that_pipeline_reads(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, _ = preview(site, capsys, "--pipeline_code", "client_b", "--task_code", "load")

    assert code == 0
    assert [row[:3] for row in document["rows"]] == [
        [3, HOSTILE, "client_b"],
        [4, HOSTILE, "client_b"],
    ]


def test_lineage_traces_the_shared_file_for_every_pipeline(site: Site) -> None:
    with site.project.engine.read() as conn:
        metadata = read_project_metadata(conn, "default")
    kind = WarehouseType.POSTGRESQL if site.warehouse_kind == "postgresql" else WarehouseType.DUCKDB
    graph = build_lineage(metadata, site.project.project, SQL_DIALECTS[kind]).graph

    # A token of a parameter the pipeline doesn't declare leaves SQL no one can parse.
    assert [t.name for t in graph.untraced()] == ["no_cutoff.load"]
    for code in ("client_a", "client_b", "client_c"):
        assert graph.columns_of(f"dm.{code}") == tuple(COLUMNS.split(", "))
        edges = graph.walk_column(f"dm.{code}", "id", Direction.UPSTREAM)
        assert {(e.source_table, e.source_column) for e in edges} == {("src.orders", "id")}
