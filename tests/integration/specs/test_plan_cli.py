"""etl-craft plan through the command line: --write and --sql, migrate, then --format json."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from etl_craft.cli.main import run as run_cli
from tests.fixtures.projects import make_project
from tests.integration.specs.test_plan_golden import ORDERS, SQL_FILES


def test_plan_write_then_migrate_leaves_nothing_to_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("ETL_CRAFT_ACTOR", "github:alice")
    made = make_project(tmp_path / "etl-craft")
    for name, sql in SQL_FILES.items():
        (made.root / "sql_files").mkdir(exist_ok=True)
        (made.root / "sql_files" / name).write_text(sql)
    (made.root / "pipelines").mkdir()
    (made.root / "pipelines" / "orders.yml").write_text(ORDERS)
    config = ["--config", str(made.config)]
    try:
        capsys.readouterr()
        assert run_cli([*config, "plan", "--write", "--sql"]) == 0
        written = capsys.readouterr().out
        migration = made.root / "migrations" / "0001_plan_orders.sql"
        assert f"wrote {migration}; apply it with etl-craft migrate" in written
        assert written.rstrip().endswith(migration.read_text().rstrip())
        assert "-- Add pipeline (pipeline orders), for github:alice." in migration.read_text()

        assert run_cli([*config, "migrate"]) == 0
        capsys.readouterr()
        assert run_cli([*config, "--format", "json", "plan"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["schema"] == "etl-craft/plan/1"
        assert (document["changes"], document["dag"], document["file_name"]) == ([], [], None)
        assert [e["outcome"] for e in document["inferred"]] == ["written", "written"]
    finally:
        made.engine.dispose()
