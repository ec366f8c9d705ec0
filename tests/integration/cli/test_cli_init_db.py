"""etl-craft init-db: the schema on an empty Engine DB, found from the project or the variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.cli.conftest import PROJECT_CODE, Site, run_cli, write_project


def test_init_db_creates_the_schema_and_records_the_action(site: Site) -> None:
    code, document = site.json("init-db", ETL_CRAFT_ACTOR="github:bob")

    assert code == 0
    assert document["schema"] == "etl-craft/init-db/1"
    assert document["project"] == PROJECT_CODE
    assert document["engine"]["applied"] == ["schema.sql"]
    assert site.query("SELECT PROJECT_CODE AS code FROM CFG_PROJECTS") == [{"code": PROJECT_CODE}]
    actions = site.query("SELECT ACTOR AS actor FROM AUD_ACTIONS WHERE COMMAND = 'init-db'")
    assert actions == [{"actor": "github:bob"}]


def test_init_db_again_applies_nothing(site: Site) -> None:
    site.run("init-db")

    code, document = site.json("init-db")

    assert code == 0
    assert document["engine"]["applied"] == []
    assert len(site.query("SELECT PROJECT_ID FROM CFG_PROJECTS")) == 1


def test_config_option_names_the_project_from_anywhere(
    sqlite_site: Site, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Outside the project's tree, so discovery from the working folder can't find it.
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    config = sqlite_site.project / "craft-connector.yml"

    done = run_cli("--config", str(config), "init-db", cwd=elsewhere, env={})

    assert done.returncode == 0, done.stderr
    assert (sqlite_site.project / "engine.db").is_file()


def test_the_engine_url_variable_overrides_the_config(tmp_path: Path) -> None:
    write_project(tmp_path / "project")
    override = tmp_path / "override.db"

    done = run_cli(
        "init-db", cwd=tmp_path / "project", env={"ETL_CRAFT_ENGINE_URL": f"sqlite:///{override}"}
    )

    assert done.returncode == 0, done.stderr
    assert override.is_file()
    assert not (tmp_path / "project" / "etl-craft" / "engine.db").exists()


def test_outside_a_project_the_engine_url_variable_is_enough(tmp_path: Path) -> None:
    engine = tmp_path / "engine.db"

    done = run_cli("init-db", cwd=tmp_path, env={"ETL_CRAFT_ENGINE_URL": f"sqlite:///{engine}"})

    assert done.returncode == 0, done.stderr
    assert "project: default" in done.stdout


def test_outside_a_project_without_the_variable_is_a_configuration_error(tmp_path: Path) -> None:
    done = run_cli("init-db", cwd=tmp_path, env={})

    assert done.returncode == ExitCode.CONFIGURATION
    assert "ETL_CRAFT_ENGINE_URL" in done.stderr


def test_a_missing_config_file_is_a_configuration_error(tmp_path: Path) -> None:
    done = run_cli("--config", "nowhere.yml", "init-db", cwd=tmp_path, env={})

    assert done.returncode == ExitCode.CONFIGURATION
    assert "--config nowhere.yml" in done.stderr


def test_a_command_before_init_db_says_to_run_it(site: Site) -> None:
    # An Engine DB without etl-craft's tables is reachable and the login is right: the remedy
    # is the schema, not the URL or the password.
    done = site.run("list")

    assert done.returncode == ExitCode.MIGRATION, done.stderr
    assert "has no table CFG_" in done.stderr
    assert "run etl-craft init-db" in done.stderr
    assert "password" not in done.stderr
