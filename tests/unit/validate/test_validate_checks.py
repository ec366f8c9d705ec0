"""validate's checks over metadata built in memory: no Engine DB involved."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.enginedb.metadata import (
    PipelineDependencyRow,
    PipelineRow,
    ProjectMetadata,
    TaskRow,
)
from etl_craft.operations.validate import validate_metadata
from etl_craft.operations.validate_findings import Subject

pytestmark = pytest.mark.unit


def _task(task_id: int, code: str, **parameters: str) -> TaskRow:
    return TaskRow(
        task_id, 1, code, Handler.SQL, RunCondition.ALL, None, True, MappingProxyType(parameters)
    )


def _subject(*tasks: TaskRow, dialect: str = "duckdb") -> Subject:
    metadata = ProjectMetadata(
        project_id=1,
        project_code="demo",
        timezone="UTC",
        pipelines=(PipelineRow(1, "orders", None, None, None, True),),
        tasks=tasks,
        pipeline_parameters=(),
        task_dependencies=(),
        pipeline_dependencies=(),
        business_rules=(),
    )
    return Subject(metadata, frozenset({1}), None, dialect)


def _merge(select: str, **more: str) -> TaskRow:
    return _task(
        1,
        "merge",
        ACTION="SCD1_MERGE",
        TARGET_OBJECT="pub.t",
        SOURCE_SQL=select,
        MERGE_KEY="id",
        **more,
    )


def _checks(subject: Subject) -> list[str]:
    return [f.check for f in validate_metadata(subject).findings]


@pytest.mark.parametrize(
    ("select", "dialect"),
    [
        ("SELECT id, amount::double AS amount FROM s.t", "duckdb"),
        ("SELECT id, CAST(amount AS REAL) AS amount FROM s.t", "postgres"),
        ("SELECT id, (amount::float8) AS amount FROM s.t", "postgres"),
        ("SELECT id, 1e3 AS amount FROM s.t", "duckdb"),
    ],
)
def test_a_float_compare_column_fails(select: str, dialect: str) -> None:
    assert _checks(_subject(_merge(select), dialect=dialect)) == ["float-compare-column"]


@pytest.mark.parametrize(
    "select",
    [
        "SELECT id, CAST(amount AS DECIMAL(12, 2)) AS amount FROM s.t",
        "SELECT id, amount FROM s.t",  # its type is only known at run time
        "SELECT id, 1.5 AS amount FROM s.t",  # a DECIMAL literal on both warehouses
    ],
)
def test_other_compare_columns_pass(select: str) -> None:
    assert _checks(_subject(_merge(select))) == []


def test_compare_columns_default_to_every_non_key_column() -> None:
    subject = _subject(_merge("SELECT id::double AS id, x::double AS x FROM s.t"))

    (finding,) = validate_metadata(subject).findings

    assert "includes x" in finding.message


def test_tokens_are_substituted_before_parsing() -> None:
    select = "SELECT id FROM s.t WHERE $$pipeline_id_filter AND d = $$run_date"
    task = _task(1, "load", ACTION="APPEND_TABLE", TARGET_OBJECT="s.u", SOURCE_SQL=select)

    assert _checks(_subject(task)) == []


def test_a_parameter_the_action_does_not_read_warns() -> None:
    task = _task(
        1,
        "load",
        ACTION="APPEND_TABLE",
        TARGET_OBJECT="s.u",
        SOURCE_SQL="SELECT 1 AS a",
        MERGE_KEY="a",
    )

    (finding,) = validate_metadata(_subject(task)).findings

    assert (finding.severity, finding.check, finding.parameter) == (
        "WARN",
        "unread-parameter",
        "MERGE_KEY",
    )


def test_bad_values_and_bare_targets_fail_naming_the_value() -> None:
    task = _task(1, "load", ACTION="UPSERT", TARGET_OBJECT="orders", SOURCE_SQL="SELECT 1 AS a")

    findings = validate_metadata(_subject(task)).findings

    assert {(f.check, f.parameter) for f in findings} == {
        ("parameter-value", "ACTION"),
        ("parameter-value", "TARGET_OBJECT"),
    }
    assert any("'UPSERT'" in f.message for f in findings)


def test_scope_limits_findings_but_not_cycle_detection() -> None:
    pipelines = (
        PipelineRow(1, "a", None, None, None, True),
        PipelineRow(2, "b", None, "61 * * * *", None, True),
    )
    dependencies = (
        PipelineDependencyRow(1, 1, 2, DependencyType.SUCCESS, "b", True),
        PipelineDependencyRow(2, 2, 1, DependencyType.SUCCESS, "a", True),
    )
    metadata = ProjectMetadata(1, "demo", "UTC", pipelines, (), (), (), dependencies, ())

    report = validate_metadata(Subject(metadata, frozenset({1}), None, "duckdb"))

    assert [(f.check, f.pipeline_code) for f in report.findings] == [("cycle", "a")]
    assert "a -> b -> a" in report.findings[0].message


def _history(**more: str) -> TaskRow:
    return _task(
        1,
        "history",
        ACTION="SCD2_MERGE",
        TARGET_OBJECT="pub.h",
        SOURCE_SQL="SELECT id, name, changed_at FROM s.t",
        MERGE_KEY="id",
        **more,
    )


def _findings(task: TaskRow) -> set[tuple[str, str, str | None]]:
    return {(f.severity, f.check, f.parameter) for f in validate_metadata(_subject(task)).findings}


def test_scd2_validity_and_missing_keys_settings_pass() -> None:
    task = _history(
        SCD2_VALID_FROM="COLUMN",
        SCD2_VALID_FROM_COLUMN="changed_at",
        SCD2_MISSING_KEYS="NEW_RECORD",
    )

    assert _findings(task) == set()


def test_scd2_bad_values_fail_naming_the_value_and_the_choices() -> None:
    task = _history(SCD2_VALID_FROM="SOURCE", SCD2_MISSING_KEYS="DELETE")

    findings = validate_metadata(_subject(task)).findings

    assert {(f.check, f.parameter) for f in findings} == {
        ("parameter-value", "SCD2_VALID_FROM"),
        ("parameter-value", "SCD2_MISSING_KEYS"),
    }
    messages = " ".join(f.message for f in findings)
    assert "'SOURCE'" in messages
    assert "RUN_TIME, RUN_DATE, COLUMN" in messages
    assert "KEEP, CLOSE, NEW_RECORD" in messages


def test_scd2_valid_from_column_is_one_column_and_goes_with_column() -> None:
    assert _findings(_history(SCD2_VALID_FROM="COLUMN")) == {
        ("FAIL", "required-parameter", "SCD2_VALID_FROM_COLUMN")
    }
    assert _findings(_history(SCD2_VALID_FROM_COLUMN="changed_at")) == {
        ("WARN", "unread-parameter", "SCD2_VALID_FROM_COLUMN")
    }
    two = _history(SCD2_VALID_FROM="COLUMN", SCD2_VALID_FROM_COLUMN="a, b")
    assert _findings(two) == {("FAIL", "parameter-value", "SCD2_VALID_FROM_COLUMN")}


def test_scd2_settings_on_another_action_warn() -> None:
    task = _merge("SELECT id, name FROM s.t", SCD2_MISSING_KEYS="CLOSE")

    assert _findings(task) == {("WARN", "unread-parameter", "SCD2_MISSING_KEYS")}
