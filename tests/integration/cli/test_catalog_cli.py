"""etl-craft catalog build --strict: a SELECT without column lineage fails the build unpublished."""

from __future__ import annotations

import re

import pytest

from tests.integration.cli.conftest import Site
from tests.integration.cli.test_lineage_cli import MIGRATION


@pytest.fixture
def site(sqlite_site: Site) -> Site:
    assert sqlite_site.run("init-db").returncode == 0
    sqlite_site.write_migration("0001_orders.sql", MIGRATION)
    done = sqlite_site.run("migrate", "--no-validate")  # it reads a table unordered on purpose
    assert done.returncode == 0, done.stderr
    return sqlite_site


def test_strict_fails_on_the_untraced_select_and_publishes_nothing(site: Site) -> None:
    output = site.root / "site"

    code, document = site.json("catalog", "build", "--output", str(output), "--strict")

    assert code == 1  # what `etl-craft lineage --strict` exits with
    assert document["schema"] == "etl-craft/catalog-build/1"
    assert document["release"] is None
    [untraced] = document["untraced"]
    assert (untraced["pipeline_code"], untraced["task_code"]) == ("report", "copy_raw")
    assert not output.exists()


def test_without_strict_the_untraced_task_stays_on_its_table_graph_with_its_reason(
    site: Site,
) -> None:
    output = site.root / "site"

    done = site.run("catalog", "build", "--output", str(output))

    assert done.returncode == 0, done.stderr
    assert "no column lineage: report.copy_raw (writes pub.raw_copy)" in done.stdout
    page = (output / "tables" / "pub.raw_copy.html").read_text()
    assert re.search(r'<g class="node node-task"[^>]* data-id="k:report\.copy_raw"', page)
    assert "no column lineage" in page
    assert "SELECT * reads raw.customers" in page
    gaps = (output / "dags.html").read_text()
    assert 'href="tasks/report/copy_raw.html">report.copy_raw</a>' in gaps
