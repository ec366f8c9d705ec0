"""Metadata edits become the project's next migration file, rehearsed, then applied by migrate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import EditKind
from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.migrations import PendingMigrationsError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.metadata.edits import (
    MetadataEdit,
    MigrationConflictError,
    apply_edit,
    preview_edit,
)
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_supervisor_sql import CHAIN

EDITOR = Actor("alice_token", ActorKind.HUMAN)
TRICKY = "O'Brien's; DROP TABLE CFG_TASKS; -- not a comment */ '');"
ENRICH = (
    MetadataEdit(
        EditKind.TASK,
        {"pipeline": "orders", "task": "enrich"},
        after={"HANDLER": "SQL", "DESCRIPTION": "Orders with their summary"},
    ),
    *(
        MetadataEdit(
            EditKind.TASK_PARAMETER,
            {"pipeline": "orders", "task": "enrich", "parameter": name},
            after={"PARAMETER_VALUE": value},
        )
        for name, value in (
            ("ACTION", "CREATE_TABLE"),
            ("TARGET_OBJECT", "dm.enriched"),
            ("SOURCE_SQL", "SELECT orders FROM dm.summary"),
        )
    ),
    MetadataEdit(
        EditKind.TASK_DEPENDENCY,
        {
            "pipeline": "orders",
            "task": "enrich",
            "upstream_pipeline": "orders",
            "upstream_task": "summary",
        },
        after={"DEPENDENCY_TYPE": "SUCCESS"},
    ),
)
EXPECTED_TASK_INSERT = """\
-- Add task (pipeline orders, task enrich), for alice_token.
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER, DESCRIPTION)
SELECT p.PIPELINE_ID, 'enrich', 'SQL', 'Orders with their summary'
  FROM CFG_PROJECTS j
  JOIN CFG_PIPELINES p ON p.PROJECT_ID = j.PROJECT_ID
 WHERE j.PROJECT_CODE = 'default'
   AND j.ACTIVE_FLAG = 'Y'
   AND p.PIPELINE_CODE = 'orders'
   AND p.ACTIVE_FLAG = 'Y';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    made.migrate("0001_orders.sql", CHAIN)
    yield made
    made.engine.dispose()


@pytest.fixture
def ctx(project: ProjectOnDisk) -> OperationContext:
    return OperationContext(project.project, project.connector, project.engine, EDITOR)


def rows(project: ProjectOnDisk, sql: str, **params: Any) -> list[dict[str, Any]]:
    with project.engine.read() as conn:
        return [dict(row) for row in execute(conn, sql, **params).mappings()]


def footprint(project: ProjectOnDisk) -> tuple[list[str], list[dict[str, Any]]]:
    """The migration files on disk and how many rows every table an edit may touch holds."""
    files = sorted(path.name for path in (project.root / "migrations").iterdir())
    counted = rows(
        project,
        "SELECT (SELECT count(*) FROM CFG_TASKS) AS tasks, "
        "(SELECT count(*) FROM CFG_TASK_DEPENDENCY) AS dependencies, "
        "(SELECT count(*) FROM CFG_TASK_PARAMETERS) AS parameters, "
        "(SELECT count(*) FROM AUD_METADATA_CHANGES) AS changes, "
        "(SELECT count(*) FROM SCHEMA_MIGRATIONS) AS migrations",
    )
    return files, counted


def test_a_new_task_and_its_dependency_become_the_next_file_applied_as_the_editor(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    untouched = footprint(project)
    preview = preview_edit(ctx, ENRICH)
    assert footprint(project) == untouched  # the rehearsal left nothing behind
    assert preview.refusal is None
    assert preview.file_name == "0002_add_task_enrich.sql"
    assert [(c.table_name, c.operation) for c in preview.changes] == [
        ("CFG_TASKS", "INSERT"),
        *[("CFG_TASK_PARAMETERS", "INSERT")] * 3,
        ("CFG_TASK_DEPENDENCY", "INSERT"),
    ]
    assert preview.changes[0].after is not None
    assert preview.changes[0].after["task_code"] == "enrich"

    applied = apply_edit(ctx, ENRICH, preview.file_name)

    written = project.root / "migrations" / "0002_add_task_enrich.sql"
    assert applied.path == written
    assert written.read_text() == preview.sql
    assert preview.sql.startswith(EXPECTED_TASK_INSERT)
    assert "-- Add task parameter (pipeline orders, task enrich, parameter ACTION)" in preview.sql
    found = rows(
        project,
        "SELECT t.DESCRIPTION AS description, u.TASK_CODE AS upstream FROM CFG_TASKS t "
        "JOIN CFG_TASK_DEPENDENCY d ON d.TASK_ID = t.TASK_ID "
        "JOIN CFG_TASKS u ON u.TASK_ID = d.DEPENDS_ON_TASK_ID WHERE t.TASK_CODE = 'enrich'",
    )
    assert found == [{"description": "Orders with their summary", "upstream": "summary"}]
    audited = rows(
        project,
        "SELECT ACTOR AS actor, TABLE_NAME AS table_name FROM AUD_METADATA_CHANGES "
        "WHERE MIGRATION = :name ORDER BY CHANGE_ID",
        name=written.name,
    )
    assert {row["actor"] for row in audited} == {"alice_token"}
    assert len(audited) == 5
    ledger = rows(
        project, "SELECT APPLIED_BY AS by FROM SCHEMA_MIGRATIONS WHERE NAME = :n", n=written.name
    )
    assert ledger == [{"by": "alice_token"}]


def test_a_cycle_is_refused_with_validates_message_and_nothing_is_written(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    cycle = MetadataEdit(
        EditKind.TASK_DEPENDENCY,
        {
            "pipeline": "orders",
            "task": "land",
            "upstream_pipeline": "orders",
            "upstream_task": "summary",
        },
        after={"DEPENDENCY_TYPE": "SUCCESS"},
    )
    untouched = footprint(project)

    preview = preview_edit(ctx, cycle)

    assert preview.validation is not None
    messages = [f.message for f in preview.validation.findings if f.check == "cycle"]
    assert messages
    assert "the task dependencies form a cycle" in messages[0]
    assert preview.refusal is not None
    assert messages[0] in preview.refusal
    with pytest.raises(MetadataError, match="form a cycle"):
        apply_edit(ctx, cycle, preview.file_name)
    assert footprint(project) == untouched


def test_quotes_semicolons_and_comment_marks_land_as_data(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    edits = (
        MetadataEdit(
            EditKind.TASK,
            {"pipeline": "orders", "task": "side"},
            before={"DESCRIPTION": None},
            after={"DESCRIPTION": TRICKY},
        ),
        MetadataEdit(
            EditKind.PIPELINE_PARAMETER,
            {"pipeline": "orders", "parameter": "NOTE"},
            after={"PARAMETER_VALUE": TRICKY + "\n-- second line", "PARAMETER_TYPE": "STRING"},
        ),
    )
    tasks_before = rows(project, "SELECT TASK_CODE AS code FROM CFG_TASKS ORDER BY TASK_ID")

    preview = preview_edit(ctx, edits)
    assert preview.refusal is None, preview.refusal
    apply_edit(ctx, edits, preview.file_name)

    found = rows(
        project,
        "SELECT t.DESCRIPTION AS description, pp.PARAMETER_VALUE AS note FROM CFG_TASKS t "
        "JOIN CFG_PIPELINE_PARAMETERS pp ON pp.PIPELINE_ID = t.PIPELINE_ID "
        "WHERE t.TASK_CODE = 'side' AND pp.PARAMETER_NAME = 'NOTE'",
    )
    assert found == [{"description": TRICKY, "note": TRICKY + "\n-- second line"}]
    assert rows(project, "SELECT TASK_CODE AS code FROM CFG_TASKS ORDER BY TASK_ID") == (
        tasks_before
    )


def test_a_migration_arriving_after_the_preview_refuses_the_apply(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    preview = preview_edit(ctx, ENRICH)
    project.migrate(
        "0002_describe_orders.sql",
        "UPDATE CFG_PIPELINES SET DESCRIPTION = 'from a colleague' WHERE PIPELINE_CODE = 'orders';",
    )
    untouched = footprint(project)

    with pytest.raises(MigrationConflictError, match="0003_add_task_enrich.sql"):
        apply_edit(ctx, ENRICH, preview.file_name)
    assert footprint(project) == untouched


def test_a_change_to_a_row_someone_changed_meanwhile_is_refused(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    stale = MetadataEdit(
        EditKind.TASK,
        {"pipeline": "orders", "task": "side"},
        before={"DESCRIPTION": "as the editor showed it"},
        after={"DESCRIPTION": "new words"},
    )

    preview = preview_edit(ctx, stale)

    assert preview.refusal is not None
    assert "DESCRIPTION None now, not 'as the editor showed it'" in preview.refusal


def apply_checked(ctx: OperationContext, edit: MetadataEdit) -> str:
    preview = preview_edit(ctx, edit)
    assert preview.refusal is None, preview.refusal
    return apply_edit(ctx, edit, preview.file_name).file_name


def test_every_kind_of_object_is_added_changed_or_removed_by_its_own_file(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    orders = {"pipeline": "orders"}
    names = [
        apply_checked(ctx, edit)
        for edit in (
            MetadataEdit(
                EditKind.PIPELINE,
                {"pipeline": "audit"},
                after={"DESCRIPTION": "Audit trail", "RUN_SCHEDULE": "0 5 * * *", "PRIORITY": 3},
            ),
            MetadataEdit(
                EditKind.PIPELINE,
                {"pipeline": "audit"},
                before={"PRIORITY": 3, "SLA_MINUTES": None},
                after={"PRIORITY": 3, "SLA_MINUTES": 90},
            ),
            MetadataEdit(
                EditKind.PIPELINE_DEPENDENCY,
                {**orders, "upstream_pipeline": "audit"},
                after={"DEPENDENCY_TYPE": "ALWAYS"},
            ),
            MetadataEdit(
                EditKind.PIPELINE_PARAMETER,
                {**orders, "parameter": "DAYS"},
                after={"PARAMETER_VALUE": "3", "PARAMETER_TYPE": "INT"},
            ),
            MetadataEdit(
                EditKind.BUSINESS_RULE,
                {**orders, "task": "side", "rule": "positive"},
                after={
                    "RULE_TYPE": "REPORT",
                    "TARGET_TABLE": "dm.side",
                    "KEY_COLUMNS": "one",
                    "RULE_SQL": "SELECT one FROM dm.side WHERE one < 0",
                },
            ),
            MetadataEdit(
                EditKind.TASK_PARAMETER,
                {**orders, "task": "side", "parameter": "RETRIES"},
                after={"PARAMETER_VALUE": "2"},
            ),
            MetadataEdit(
                EditKind.TASK_PARAMETER,
                {**orders, "task": "side", "parameter": "RETRIES"},
                before={"PARAMETER_VALUE": "2"},
            ),
            MetadataEdit(
                EditKind.TASK_DEPENDENCY,
                {
                    **orders,
                    "task": "summary",
                    "upstream_pipeline": "orders",
                    "upstream_task": "land",
                },
                before={"CONSUME_REPAIRS": "Y"},
                after={"CONSUME_REPAIRS": "N"},
            ),
        )
    ]

    assert names == [
        "0002_add_pipeline_audit.sql",
        "0003_change_pipeline_audit.sql",
        "0004_add_pipeline_dependency_audit.sql",
        "0005_add_pipeline_parameter_DAYS.sql",
        "0006_add_business_rule_side_positive.sql",
        "0007_add_task_parameter_side_RETRIES.sql",
        "0008_remove_task_parameter_side_RETRIES.sql",
        "0009_change_task_dependency_summary_orders_land.sql",
    ]
    found = rows(
        project,
        "SELECT p.PRIORITY AS priority, p.SLA_MINUTES AS sla, d.DEPENDENCY_TYPE AS dep, "
        "pp.PARAMETER_VALUE AS days, r.KEY_COLUMNS AS rule_keys, "
        "(SELECT count(*) FROM CFG_TASK_PARAMETERS WHERE PARAMETER_NAME = 'RETRIES') AS retries, "
        "(SELECT min(CONSUME_REPAIRS) FROM CFG_TASK_DEPENDENCY) AS repairs "
        "FROM CFG_PIPELINES p, CFG_PIPELINE_DEPENDENCY d, CFG_PIPELINE_PARAMETERS pp, "
        "CFG_BUSINESS_RULES r WHERE p.PIPELINE_CODE = 'audit'",
    )
    assert found == [
        {
            "priority": 3,
            "sla": 90,
            "dep": "ALWAYS",
            "days": "3",
            "rule_keys": "one",
            "retries": 0,
            "repairs": "N",
        }
    ]


def test_a_file_the_engine_db_has_not_applied_yet_is_named_and_the_edit_waits_for_it(
    project: ProjectOnDisk, ctx: OperationContext
) -> None:
    (project.root / "migrations" / "0002_from_git.sql").write_text(
        "UPDATE CFG_PIPELINES SET PRIORITY = 5 WHERE PIPELINE_CODE = 'orders';"
    )
    untouched = footprint(project)

    with pytest.raises(PendingMigrationsError, match="0002_from_git.sql .* run etl-craft migrate"):
        preview_edit(ctx, ENRICH)
    assert footprint(project) == untouched
