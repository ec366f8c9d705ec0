"""validate over a project with one of each error: one finding per error, on both Engine DBs."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from etl_craft.config.project import Project
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import OperationContext
from etl_craft.operations.serialize import to_json
from etl_craft.operations.validate.report import ValidateReport, validate
from tests.fixtures.metadata import TESTER
from tests.integration.validate.broken_project import (
    EXPECTED,
    PIPELINE,
    seed_broken_project,
    write_files,
)


@pytest.fixture(scope="module")
def ctx(engine_db: EngineDB, tmp_path_factory: pytest.TempPathFactory) -> OperationContext:
    root = tmp_path_factory.mktemp("project")
    write_files(root)
    seed_broken_project(engine_db, "default")
    return OperationContext(project=Project(root), connector=None, engine=engine_db, actor=TESTER)


def _keys(report: ValidateReport) -> list[tuple[str, str, str, str | None]]:
    return [(f.severity.value, f.check, f.pipeline_code, f.task_code) for f in report.findings]


def test_each_error_yields_exactly_one_finding(ctx: OperationContext) -> None:
    report = validate(ctx)

    keys = _keys(report)
    assert sorted(keys, key=str) == sorted(EXPECTED, key=str)
    assert len(keys) == len(EXPECTED)
    assert not report.valid
    assert (report.failures, report.warnings) == (len(EXPECTED) - 1, 1)


def test_every_finding_names_the_value_and_a_remedy(ctx: OperationContext) -> None:
    by_task = {f.task_code: f for f in validate(ctx).findings if f.task_code}

    assert "MERGE_KEY" in by_task["typo"].message  # the nearest known name
    assert by_task["typo"].parameter == "MERGE_KYE"
    assert "DELETE" in by_task["sql_dml"].message
    assert "2 statements" in by_task["sql_multi"].message
    assert "can't be parsed as duckdb SQL" in by_task["sql_garbled"].message
    assert "'..'" in by_task["sql_escape"].message
    assert "ROW_ID" in by_task["sql_managed"].message.upper()
    assert "'order id'" in by_task["sql_quoted"].message
    assert "amount" in by_task["merge_float"].message
    assert "{pipeline}" in by_task["bad_alert"].message
    assert "line 1" in by_task["bad_script"].message
    assert "retired" in by_task["dep_inactive"].message
    assert all(f.remedy and f.message for f in by_task.values())


def test_the_json_document_matches_the_shipped_schema(ctx: OperationContext) -> None:
    schema = json.loads(
        (files("etl_craft.operations") / "schemas" / "validate.schema.json").read_text()
    )
    document: dict[str, Any] = to_json(validate(ctx))

    jsonschema.validate(document, schema)
    assert document["schema"] == "etl-craft/validate/1"


def test_one_pipeline_still_sees_cycles_through_the_others(ctx: OperationContext) -> None:
    ring = validate(ctx, "ring_b")

    assert _keys(ring) == [("FAIL", "cycle", "ring_b", None)]
    assert ring.pipelines == ("ring_b",)
    assert {f.pipeline_code for f in validate(ctx, PIPELINE).findings} == {PIPELINE}


def test_an_unknown_pipeline_is_named(ctx: OperationContext) -> None:
    with pytest.raises(NotFoundError, match="'nope' is not an active pipeline"):
        validate(ctx, "nope")


def test_a_missing_project_folder_is_reported_not_raised(
    ctx: OperationContext, tmp_path: Path
) -> None:
    elsewhere = OperationContext(Project(tmp_path), None, ctx.engine, TESTER)

    report = validate(elsewhere, PIPELINE)

    multi = next(f for f in report.findings if f.task_code == "sql_multi")
    assert "found no file" in multi.message
