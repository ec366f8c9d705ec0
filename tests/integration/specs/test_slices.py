"""Pipelines that each write, and read back, their own slice of one shared table: validate
accepts them, still fails a read across the slices, and plan --write --no-validate records
its bypass in the file it writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.core.errors import ExitCode, MetadataError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.setup import migrate
from etl_craft.operations.specs.plan import plan_specs, write_plan
from etl_craft.operations.validate.report import validate
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import make_project

# Each client appends its new orders, reading back the highest id of its own slice only.
CLIENTS = """\
parameters:
  CLIENT: {type: STRING}
tasks:
  load:
    action: APPEND_TABLE
    target: dm.orders
    slice: {column: source_system, value: $$param.CLIENT}
    source_sql: >-
      SELECT o.id, o.client AS source_system, o.amount FROM src.orders o
      WHERE o.client = $$param.CLIENT
        AND o.id > (SELECT COALESCE(MAX(t.id), 0) FROM dm.orders t
                    WHERE t.source_system = $$param.CLIENT)
instances:
  client_a: {parameters: {CLIENT: acme}}
  client_b: {parameters: {CLIENT: bolt}}
  client_c: {parameters: {CLIENT: core}}
"""
# Reads every client's slice, and waits for none of them.
REPORT = """\
tasks:
  totals:
    action: CREATE_TABLE
    target: dm.totals
    source_sql: >-
      SELECT t.source_system, SUM(t.amount) AS amount FROM dm.orders t GROUP BY t.source_system
"""


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[OperationContext]:
    made = make_project(tmp_path / "etl-craft")
    (made.root / "pipelines").mkdir()
    (made.root / "pipelines" / "clients.yml").write_text(CLIENTS)
    yield OperationContext(made.project, made.connector, made.engine, TESTER)
    made.engine.dispose()


def _unordered(ctx: OperationContext) -> list[tuple[str, str | None, str]]:
    return [
        (f.pipeline_code, f.task_code, f.message.split(", but")[0])
        for f in validate(ctx).findings
        if f.check == "unordered-read"
    ]


def test_three_pipelines_writing_their_own_slices_validate_clean(ctx: OperationContext) -> None:
    written = write_plan(ctx)
    migrate(ctx)

    assert written.refusal is None
    assert validate(ctx).failures == 0


def test_a_read_across_the_slices_fails_and_plan_writes_it_only_without_validation(
    ctx: OperationContext,
) -> None:
    assert ctx.project is not None
    (ctx.project.pipelines_dir / "report.yml").write_text(REPORT)

    refusal = plan_specs(ctx).refusal
    with pytest.raises(MetadataError, match="plan --write --no-validate"):
        write_plan(ctx)
    written = write_plan(ctx, validated=False)
    migrate(ctx, validated=False)

    assert refusal is not None
    assert "reads dm.orders, which task client_a.load" in refusal
    assert written.written is not None
    header = written.written.read_text().split("\n-- Add", 1)[0]
    assert header.startswith(
        "-- Written by etl-craft plan --write --no-validate, for tester@tests: not validated.\n"
        "-- Apply it with etl-craft migrate --no-validate. What validate found:\n"
    )
    told = "pipelines/report.yml:2 tasks.totals: unordered-read: it reads dm.orders"
    assert header.count(told) == 3
    assert header.count("(in CFG_ terms: pipeline report, task totals)") == 3
    assert _unordered(ctx) == [
        ("report", "totals", f"it reads dm.orders, which task {writer}.load writes")
        for writer in ("client_a", "client_b", "client_c")
    ]


def test_the_cli_writes_the_refused_plan_only_when_told_not_to_validate(
    ctx: OperationContext, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ctx.project is not None
    (ctx.project.pipelines_dir / "report.yml").write_text(REPORT)
    config = ["--config", str(ctx.project.root / "craft-connector.yml")]

    alone = run_cli([*config, "plan", "--no-validate"])
    refused = run_cli([*config, "plan", "--write"])
    written = run_cli([*config, "plan", "--write", "--no-validate"])

    out = capsys.readouterr().out
    assert (alone, refused, written) == (int(ExitCode.USAGE), int(ExitCode.METADATA), 0)
    assert "without validation (recorded in its header)" in out
    assert "apply it with etl-craft migrate --no-validate" in out
    assert [p.name for p in ctx.project.migrations_dir.iterdir()] == [
        "0001_plan_client_a_client_b_client_c_report.sql"
    ]
