"""etl-craft plan against a real Engine DB, its text compared with golden files.

Each test starts from a project whose spec was written with plan --write and applied with
migrate, changes one thing, and compares what plan says with golden/<test>.txt. Run with
UPDATE_GOLDEN=1 to rewrite the files after a deliberate change, and review their diff.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from etl_craft.cli.actions.plan import render
from etl_craft.core.errors import MetadataError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.lineage import project_lineage
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.plan import SpecPlan, plan_specs, write_plan
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import make_project

GOLDEN = Path(__file__).parent / "golden"
# Saturday before the night Paris moves its clocks from 02:00 to 03:00 (28 March 2027).
BEFORE_DST = datetime(2027, 3, 27, 12, 0, tzinfo=UTC)
ORDERS = """\
description: Orders into the daily summary
schedule: "0 1 * * *"
timezone: Europe/Paris
tasks:
  load_orders:
    action: CREATE_TABLE
    target: stg.orders
    source_sql: SELECT 1 AS order_id, 10 AS amount
  daily:
    action: CREATE_TABLE
    target: dm.daily
    sql: daily.sql
  publish:
    action: CREATE_TABLE
    target: pub.daily
    sql: publish.sql
  alert:
    handler: EMAIL_ALERT
    parameters: {FLAVOUR: FAILURE, RECIPIENTS: ops@example.com}
    depends_on:
      - {task: daily, type: FAILURE}
      - {task: publish, type: FAILURE}
"""
SQL_FILES = {
    "daily.sql": "SELECT order_id, amount * 2 AS doubled FROM stg.orders\n",
    "publish.sql": "SELECT order_id, doubled FROM dm.daily\n",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OperationContext]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    for name, sql in SQL_FILES.items():
        _write(made.root / "sql_files" / name, sql)
    _write(made.root / "pipelines" / "orders.yml", ORDERS)
    ctx = OperationContext(made.project, made.connector, made.engine, TESTER)
    write_plan(ctx, now=BEFORE_DST)
    migrate(ctx)
    yield ctx
    made.engine.dispose()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _spec(ctx: OperationContext) -> Path:
    assert ctx.project is not None
    return ctx.project.pipelines_dir / "orders.yml"


def _edit_spec(ctx: OperationContext, old: str, new: str) -> None:
    text = _spec(ctx).read_text()
    assert old in text
    _spec(ctx).write_text(text.replace(old, new))


def assert_golden(plan: SpecPlan, name: str) -> None:
    text = render(plan) + "\n"
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_the_first_plan_adds_the_pipeline_with_its_inferred_edges(tmp_path: Path) -> None:
    made = make_project(tmp_path / "etl-craft")
    for name, sql in SQL_FILES.items():
        _write(made.root / "sql_files" / name, sql)
    _write(made.root / "pipelines" / "orders.yml", ORDERS)
    ctx = OperationContext(made.project, made.connector, made.engine, TESTER)
    try:
        assert_golden(plan_specs(ctx, now=BEFORE_DST), "first_plan")
    finally:
        made.engine.dispose()


def test_a_plan_of_applied_specs_changes_nothing(project: OperationContext) -> None:
    plan = plan_specs(project, now=BEFORE_DST)
    assert (plan.changes, plan.dag, plan.file_name) == ((), (), None)


def test_an_added_task(project: OperationContext) -> None:
    _edit_spec(
        project,
        "  alert:\n",
        "  audit_daily:\n"
        "    action: CREATE_TABLE\n"
        "    target: dm.daily_audit\n"
        "    source_sql: SELECT COUNT(*) AS days FROM dm.daily\n"
        "  alert:\n",
    )
    assert_golden(plan_specs(project, now=BEFORE_DST), "added_task")


def test_a_changed_sql_file_lists_the_columns_downstream(project: OperationContext) -> None:
    project_lineage(project)  # the stored traces a plan compares the SQL files with
    assert project.project is not None
    daily = project.project.sql_files_dir / "daily.sql"
    daily.write_text("SELECT order_id, amount * 3 AS doubled FROM stg.orders\n")
    assert_golden(plan_specs(project, now=BEFORE_DST), "changed_sql_file")


def test_a_removed_dependency(project: OperationContext) -> None:
    _edit_spec(project, "      - {task: publish, type: FAILURE}\n", "")
    plan = plan_specs(project, now=BEFORE_DST)
    assert_golden(plan, "removed_dependency")
    write_plan(project, now=BEFORE_DST)
    migrate(project)
    with project.engine.read() as conn:
        flags = execute(
            conn,
            "SELECT u.TASK_CODE, d.ACTIVE_FLAG FROM CFG_TASK_DEPENDENCY d"
            " JOIN CFG_TASKS t ON t.TASK_ID = d.TASK_ID"
            " JOIN CFG_TASKS u ON u.TASK_ID = d.DEPENDS_ON_TASK_ID"
            " WHERE t.TASK_CODE = 'alert' ORDER BY u.TASK_CODE",
        ).all()
    assert [tuple(row) for row in flags] == [("daily", "Y"), ("publish", "N")]


def test_a_removed_task_is_switched_off_with_the_edges_on_it(project: OperationContext) -> None:
    _edit_spec(
        project,
        "  publish:\n    action: CREATE_TABLE\n    target: pub.daily\n    sql: publish.sql\n",
        "",
    )
    _edit_spec(project, "      - {task: publish, type: FAILURE}\n", "")
    assert_golden(plan_specs(project, now=BEFORE_DST), "removed_task")
    write_plan(project, now=BEFORE_DST)
    migrate(project)
    again = plan_specs(project, now=BEFORE_DST)
    assert (again.changes, again.file_name) == ((), None)


def test_a_select_lineage_cannot_trace_is_named(project: OperationContext) -> None:
    assert project.project is not None
    (project.project.sql_files_dir / "publish.sql").write_text("SELECT FROM WHERE\n")
    plan = plan_specs(project, now=BEFORE_DST)
    (untraced,) = plan.untraced
    assert untraced.startswith("orders.publish: sqlglot can't parse it")
    assert "not traced, so no dependency is inferred" in render(plan)


def test_a_schedule_change_across_a_dst_boundary(project: OperationContext) -> None:
    _edit_spec(project, 'schedule: "0 1 * * *"', 'schedule: "30 2 * * *"')
    assert_golden(plan_specs(project, now=BEFORE_DST), "schedule_across_dst")


def test_a_hand_applied_difference_shows_in_the_plan(project: OperationContext) -> None:
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE CFG_PIPELINES SET DESCRIPTION = 'changed by hand', PRIORITY = 5"
            " WHERE PIPELINE_CODE = 'orders'",
        )
        execute(
            conn,
            "DELETE FROM CFG_TASK_PARAMETERS WHERE PARAMETER_NAME = 'RECIPIENTS'",
        )
    assert_golden(plan_specs(project, now=BEFORE_DST), "hand_applied")


def test_a_plan_with_pending_migrations_is_refused(project: OperationContext) -> None:
    assert project.project is not None
    pending = project.project.migrations_dir / "0002_by_hand.sql"
    pending.write_text(textwrap.dedent("UPDATE CFG_PIPELINES SET PRIORITY = 1;\n"))
    _edit_spec(project, "Orders into", "Orders to")
    with pytest.raises(Exception, match="0002_by_hand.sql .* not applied yet"):
        plan_specs(project, now=BEFORE_DST)


def test_a_plan_validate_would_fail_is_shown_and_not_written(project: OperationContext) -> None:
    _edit_spec(project, "    target: pub.daily\n", "")
    plan = plan_specs(project, now=BEFORE_DST)
    assert plan.refusal is not None
    assert "publish" in plan.refusal
    with pytest.raises(MetadataError, match="would be refused by migrate"):
        write_plan(project, now=BEFORE_DST)
    assert project.project is not None
    assert sorted(p.name for p in project.project.migrations_dir.iterdir()) == [
        "0001_plan_orders.sql"
    ]


def test_a_sql_file_that_does_not_parse_fails_the_plan_at_its_spec_key(
    project: OperationContext,
) -> None:
    # Stated, the edge lineage inferred from publish.sql stays: no CFG_ row changes.
    _edit_spec(project, "    sql: publish.sql\n", "    sql: publish.sql\n    depends_on: [daily]\n")
    assert project.project is not None
    (project.project.sql_files_dir / "publish.sql").write_text("SELECT FROM WHERE\n")

    plan = plan_specs(project, now=BEFORE_DST)

    assert (plan.changes, plan.file_name) == ((), None)
    assert plan.refusal is not None
    assert (
        "pipelines/orders.yml:16 tasks.publish.sql: sql: the SELECT in sql_files/publish.sql "
        "can't be parsed" in plan.refusal
    )
    assert "a run would fail: validate finds 1 failure(s) in the specs" in render(plan)


def test_a_wrong_value_is_told_at_its_spec_key_with_the_cfg_column_as_a_detail(
    project: OperationContext,
) -> None:
    _edit_spec(project, "  daily:\n    action: CREATE_TABLE\n", "  daily:\n    action: CREATE\n")

    plan = plan_specs(project, now=BEFORE_DST)

    assert plan.refusal is not None
    assert (
        "pipelines/orders.yml:10 tasks.daily.action: parameter-value: ACTION is 'CREATE'; "
        "expected one of CREATE_TABLE" in plan.refusal
    )
    assert "(in CFG_ terms: pipeline orders, task daily, parameter ACTION)" in plan.refusal
    assert "in CFG_TASK_PARAMETERS" not in plan.refusal


def test_a_task_cycle_is_one_failure_naming_it(project: OperationContext) -> None:
    _edit_spec(project, "    sql: daily.sql\n", "    sql: daily.sql\n    depends_on: [alert]\n")

    plan = plan_specs(project, now=BEFORE_DST)

    assert plan.refusal is not None
    assert "validate finds 1 failure(s) in the specs" in plan.refusal
    assert (
        "pipelines/orders.yml:4 tasks: cycle: the task dependencies form a cycle: "
        "alert -> daily -> alert" in plan.refusal
    )
