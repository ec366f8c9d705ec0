"""etl-craft migrate: etl-craft's stream, then the project's migrations/, each file once."""

from __future__ import annotations

import json

import pytest

from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.migrations import schema_version
from tests.integration.cli.conftest import PIPELINE_MIGRATION, PROJECT_CODE, Site

pytestmark = pytest.mark.integration

ACTOR = "github:alice"


def test_migrate_applies_a_project_migration_that_inserts_metadata(site: Site) -> None:
    site.run("init-db")
    site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)

    code, document = site.json("migrate")

    assert code == 0
    assert document["schema"] == "etl-craft/migrate/1"
    project = next(stream for stream in document["streams"] if stream["stream"] == "PROJECT")
    assert project["scope"] == PROJECT_CODE
    assert project["applied"] == ["0001_orders.sql"]
    rows = site.query(
        "SELECT p.PIPELINE_CODE AS pipeline, t.TASK_CODE AS task FROM CFG_TASKS t "
        "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID"
    )
    assert rows == [{"pipeline": "orders", "task": "load_orders"}]


def test_migrate_again_applies_nothing(site: Site) -> None:
    site.run("init-db")
    site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)
    site.run("migrate")

    code, document = site.json("migrate")

    assert code == 0
    assert [stream["applied"] for stream in document["streams"]] == [[], []]
    assert [stream["already_applied"] for stream in document["streams"]] == [
        schema_version(site.dialect),
        1,
    ]
    assert len(site.query("SELECT TASK_ID FROM CFG_TASKS")) == 1
    assert "up to date" in site.run("migrate").stdout


def test_migrate_refuses_an_applied_file_that_changed_naming_it(site: Site) -> None:
    site.run("init-db")
    path = site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)
    site.run("migrate")
    path.write_text(PIPELINE_MIGRATION.replace("loads the orders", "loads orders"))

    done = site.run("migrate")

    assert done.returncode == ExitCode.MIGRATION
    assert "migration 0001_orders.sql changed after it was applied" in done.stderr


def test_migrate_records_the_action_with_the_actor(site: Site) -> None:
    site.run("init-db")

    done = site.run("migrate", ETL_CRAFT_ACTOR=ACTOR)

    assert done.returncode == 0, done.stderr
    rows = site.query(
        "SELECT a.ACTOR AS actor, a.ACTOR_KIND AS kind, a.OUTCOME AS outcome, "
        "a.EXIT_CODE AS exit_code, a.ARGUMENTS AS arguments, p.PROJECT_CODE AS project "
        "FROM AUD_ACTIONS a LEFT JOIN CFG_PROJECTS p ON p.PROJECT_ID = a.PROJECT_ID "
        "WHERE a.COMMAND = 'migrate'"
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row["actor"], row["kind"], row["outcome"]) == (ACTOR, "HUMAN", "REQUESTED")
    assert row["exit_code"] is None
    assert row["project"] == PROJECT_CODE
    assert json.loads(row["arguments"])["project"] == PROJECT_CODE


def test_migrate_before_init_db_points_at_init_db(site: Site) -> None:
    done = site.run("migrate")

    assert done.returncode == ExitCode.MIGRATION
    assert "run etl-craft init-db first" in done.stderr


@pytest.mark.parametrize("actor", ["", "alice\x07"], ids=["empty", "control-character"])
@pytest.mark.parametrize("command", ["init-db", "migrate"])
def test_an_invalid_actor_is_a_configuration_error(
    sqlite_site: Site, command: str, actor: str
) -> None:
    done = sqlite_site.run(command, ETL_CRAFT_ACTOR=actor)

    assert done.returncode == ExitCode.CONFIGURATION
    assert "ETL_CRAFT_ACTOR=" in done.stderr
    assert not (sqlite_site.project / "engine.db").exists()
