"""list, graph and steps through the installed script, in a project etl-craft new made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.cli.conftest import run_cli


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect") / "shop"
    for command in (("new", str(root)), ("init-db",), ("migrate",)):
        done = run_cli(*command, cwd=root if command[0] != "new" else root.parent, env={})
        assert done.returncode == 0, done.stderr
    return root


def test_list_text_shows_schedule_zone_and_state(project: Path) -> None:
    done = run_cli("list", cwd=project, env={})

    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert header.split()[:3] == ["PIPELINE", "SCHEDULE", "TIME"]
    assert row.startswith("orders")
    assert "0 6 * * *" in row
    assert row.split()[-2:] == ["never", "active"]


def test_list_json_has_a_utc_next_run(project: Path) -> None:
    done = run_cli("--format", "json", "list", cwd=project, env={})

    document = json.loads(done.stdout)
    assert document["schema"] == "etl-craft/list/1"
    (pipeline,) = document["pipelines"]
    assert pipeline["next_run"].endswith("06:00:00+00:00")
    assert pipeline["paused"] is False


def test_graph_text_shows_edges_with_their_types(project: Path) -> None:
    done = run_cli("graph", "--pipeline_code", "orders", cwd=project, env={})

    assert done.returncode == 0, done.stderr
    assert "build_daily_orders (SQL, ALL) <- ingest_orders [HAS_DATA]" in done.stdout
    assert "setup_published_orders (SQL, ALL) <- build_daily_orders [SUCCESS]" in done.stdout
    assert "publish_daily_orders (SQL, ALL) <- setup_published_orders [SUCCESS]" in done.stdout


def test_graph_of_an_unknown_pipeline_exits_not_found(project: Path) -> None:
    done = run_cli("graph", "--pipeline_code", "nope", cwd=project, env={})

    assert done.returncode == 14
    assert "expected one of: orders" in done.stderr
