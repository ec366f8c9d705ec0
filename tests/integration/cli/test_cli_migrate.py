"""etl-craft migrate: etl-craft's stream, then the project's migrations/, each file once."""

from __future__ import annotations

import json

import pytest

from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.migrations import schema_version
from tests.integration.cli.conftest import PIPELINE_MIGRATION, PROJECT_CODE, RING, Site

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


# The ring's cycle, an unknown ACTION and a cron that never parses, each in one file.
BROKEN = (
    RING
    + """
UPDATE CFG_PIPELINES SET RUN_SCHEDULE = '61 * * * *' WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'upsert', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'ACTION' AS N, 'UPSERT_ALL' AS V
  UNION ALL SELECT 'TARGET_OBJECT', 'lnd.ring'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT 1 AS id'
) x ON 1 = 1 WHERE t.TASK_CODE = 'upsert';
"""
)


def test_migrate_rolls_back_a_file_that_breaks_a_pipeline_naming_each_rule(site: Site) -> None:
    site.run("init-db")
    site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)
    site.write_migration("0002_ring.sql", BROKEN)

    done = site.run("migrate")

    assert done.returncode == ExitCode.METADATA, done.stderr
    assert "migration 0002_ring.sql was rolled back" in done.stderr
    assert "pipeline ring: cycle: the task dependencies form a cycle" in done.stderr
    assert "pipeline ring: schedule: RUN_SCHEDULE '61 * * * *'" in done.stderr
    assert "pipeline ring, task upsert, parameter ACTION: parameter-value" in done.stderr
    assert "--no-validate" in done.stderr
    # The file before it stays applied; nothing of the broken one is left, not even its ledger row.
    assert site.query("SELECT PIPELINE_CODE AS code FROM CFG_PIPELINES") == [{"code": "orders"}]
    assert [row["name"] for row in _project_ledger(site)] == ["0001_orders.sql"]


def test_migrate_no_validate_applies_a_breaking_file_and_records_the_bypass(site: Site) -> None:
    site.run("init-db")
    site.write_migration("0001_ring.sql", BROKEN)

    done = site.run("migrate", "--no-validate")

    assert done.returncode == 0, done.stderr
    assert [row["name"] for row in _project_ledger(site)] == ["0001_ring.sql"]
    arguments = [
        json.loads(row["arguments"])
        for row in site.query(
            "SELECT ARGUMENTS AS arguments FROM AUD_ACTIONS WHERE COMMAND = 'migrate'"
        )
    ]
    assert [a["validate"] for a in arguments] == [False]


def _project_ledger(site: Site) -> list[dict[str, object]]:
    return site.query(
        "SELECT NAME AS name FROM SCHEMA_MIGRATIONS WHERE STREAM = 'PROJECT' ORDER BY VERSION"
    )
