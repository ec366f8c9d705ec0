"""etl-craft validate and etl-craft new through the installed script, on an SQLite Engine DB."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.connection import EngineDB
from tests.integration.cli.conftest import PROJECT_CODE, Site, run_cli, write_project
from tests.integration.validate.broken_project import EXPECTED, seed_broken_project, write_files


@pytest.fixture
def broken_site(tmp_path: Path) -> Site:
    project = write_project(tmp_path)
    site = Site(tmp_path, "sqlite", f"sqlite:///{project / 'engine.db'}")
    assert site.run("init-db").returncode == 0
    db = EngineDB(site.engine_url)
    try:
        seed_broken_project(db, PROJECT_CODE)
    finally:
        db.dispose()
    write_files(site.project)
    return site


def test_one_line_per_error_with_object_and_remedy_and_exit_1(broken_site: Site) -> None:
    done = broken_site.run("validate")

    assert done.returncode == 1, done.stderr
    findings = [line for line in done.stdout.splitlines() if line.startswith(("FAIL ", "WARN "))]
    assert len(findings) == len(EXPECTED)
    for severity, check, pipeline, task in EXPECTED:
        where = f"{pipeline}.{task}" if task else pipeline
        matching = [line for line in findings if line.startswith(f"{severity} {check} {where}")]
        assert len(matching) == 1, (severity, check, where, findings)
        assert "remedy: " in matching[0]
    assert done.stdout.splitlines()[-1].startswith(f"{len(EXPECTED) - 1} failed, 1 warning(s)")


def test_json_output_validates_against_the_shipped_schema(broken_site: Site) -> None:
    code, document = broken_site.json("validate", "--pipeline_code", "bad_cron")

    schema = json.loads(
        (files("etl_craft.operations") / "schemas" / "validate.schema.json").read_text()
    )
    jsonschema.validate(document, schema)
    assert code == 1
    assert [f["check"] for f in document["findings"]] == ["schedule"]


def test_new_scaffolds_a_project_that_migrates_and_validates(tmp_path: Path) -> None:
    root = tmp_path / "shop"

    created = run_cli("new", str(root), cwd=tmp_path, env={})

    assert created.returncode == 0, created.stderr
    assert (root / "etl-craft" / "craft-connector.yml").is_file()
    for command in ("init-db", "migrate", "validate"):
        done = run_cli(command, cwd=root, env={})
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert "0 failed, 0 warning(s) in project shop (orders)" in done.stdout
    steps = run_cli("--format", "json", "steps", "--pipeline_code", "orders", cwd=root, env={})
    waves = json.loads(steps.stdout)["waves"]
    assert [[t["task_code"] for t in w["tasks"]] for w in waves] == [
        ["ingest_orders"],
        ["build_daily_orders"],
        ["setup_published_orders"],
        ["publish_daily_orders"],
    ]


def test_new_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")

    done = run_cli("new", str(tmp_path), cwd=tmp_path, env={})

    assert done.returncode == ExitCode.USAGE
    assert f"{tmp_path} is not empty" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
