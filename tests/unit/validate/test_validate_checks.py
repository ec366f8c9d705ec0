"""validate's checks over metadata built in memory: no Engine DB involved."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.enginedb.metadata import (
    PipelineDependencyRow,
    PipelineEdge,
    PipelineRow,
    ProjectMetadata,
    TaskRow,
)
from etl_craft.operations.validate.findings import Subject
from etl_craft.operations.validate.report import validate_metadata


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


def test_a_cycle_through_another_project_is_found_in_each_project_it_runs_through() -> None:
    # demo.a waits for sales.b, which waits for demo.a: neither project alone holds the cycle.
    pipelines = (PipelineRow(1, "a", None, None, None, True),)
    upstream = PipelineDependencyRow(1, 1, 2, DependencyType.SUCCESS, "b", False, "sales")
    metadata = ProjectMetadata(1, "demo", "UTC", pipelines, (), (), (), (upstream,), ())
    edges = (PipelineEdge(1, 2, "demo", "a"), PipelineEdge(2, 1, "sales", "b"))
    subject = Subject(metadata, frozenset({1}), None, "duckdb", pipeline_edges=edges)

    found = [(f.check, f.message) for f in validate_metadata(subject).findings]

    assert found == [
        (
            "cycle",
            "the pipelines depend on each other in a cycle across projects: a (demo) -> b "
            "(sales) -> a (demo); expected an order in which they can run",
        ),
        (
            "inactive-dependency",
            "it depends on pipeline b of project sales, which is inactive (ACTIVE_FLAG = 'N'); "
            "expected an active upstream",
        ),
    ]
    alone = replace(subject, pipeline_edges=edges[:1])
    assert [f.check for f in validate_metadata(alone).findings] == ["inactive-dependency"]


def _file_load(**parameters: str) -> TaskRow:
    base = {"FILE_PATTERN": "landing/*.csv", "FILE_FORMAT": "CSV", "TARGET_OBJECT": "lnd.t"}
    return replace(_task(1, "load", **(base | parameters)), handler=Handler.PYTHON)


def _findings(task: TaskRow) -> list[tuple[str, str | None, str, str]]:
    found = validate_metadata(_subject(task)).findings
    return [(f.check, f.parameter, f.message, f.remedy) for f in found]


def test_a_file_load_with_its_parameters_passes() -> None:
    task = _file_load(FILE_COLUMNS="id BIGINT, amount DECIMAL(10,2)", CSV_DELIMITER=";")
    assert _findings(task) == []


def test_a_python_task_runs_a_script_or_loads_files_never_both_nor_neither() -> None:
    neither = replace(_task(1, "load"), handler=Handler.PYTHON)
    assert [(c, p) for c, p, _, _ in _findings(neither)] == [("required-parameter", "SCRIPT")]
    both = _file_load(SCRIPT="pull.py")
    assert _findings(both)[0] == (
        "required-parameter",
        "FILE_PATTERN",
        "both SCRIPT ('pull.py') and FILE_PATTERN ('landing/*.csv') are set; expected exactly "
        "one: a script runs, or the built-in file load lands the files",
        "delete one of them from CFG_TASK_PARAMETERS",
    )


def test_file_load_parameters_that_do_not_fit_fail_naming_the_value_and_remedy() -> None:
    task = _file_load(FILE_FORMAT="XLSX", FILE_COLUMNS="id MONEY", OFFSET_TYPE="INT")
    assert _findings(task) == [
        (
            "parameter-value",
            "FILE_FORMAT",
            "FILE_FORMAT is 'XLSX'; expected one of CSV, JSONL, PARQUET",
            "fix the value of FILE_FORMAT in CFG_TASK_PARAMETERS",
        ),
        (
            "parameter-value",
            "FILE_COLUMNS",
            "FILE_COLUMNS is 'id MONEY'; column id has type 'MONEY'; expected one of BIGINT, "
            "INTEGER, INT, SMALLINT, BOOLEAN, DATE, TEXT, VARCHAR(n), REAL, DOUBLE PRECISION, "
            "DECIMAL(p,s), TIMESTAMP, TIMESTAMP WITH TIME ZONE",
            "fix the value of FILE_COLUMNS in CFG_TASK_PARAMETERS",
        ),
        (
            "parameter-value",
            "OFFSET_TYPE",
            "OFFSET_TYPE is 'INT'; a file load keeps the files it landed as a TEXT offset",
            "delete OFFSET_TYPE (or set it to TEXT) in CFG_TASK_PARAMETERS",
        ),
    ]


def test_a_file_load_without_format_or_target_and_unread_parameters_are_reported() -> None:
    task = replace(
        _task(1, "load", FILE_PATTERN="in/*.parquet", CSV_HEADER="N", INPUT_PARAMS="{}"),
        handler=Handler.PYTHON,
    )
    assert [(c, p) for c, p, _, _ in _findings(task)] == [
        ("required-parameter", "FILE_FORMAT"),
        ("required-parameter", "TARGET_OBJECT"),
        ("required-parameter", "FILE_COLUMNS"),
        ("unread-parameter", "INPUT_PARAMS"),
        ("unread-parameter", "CSV_HEADER"),
    ]
    script = replace(_task(1, "pull", SCRIPT="pull.py", FILE_FORMAT="CSV"), handler=Handler.PYTHON)
    assert [(c, p) for c, p, _, _ in _findings(script)] == [
        ("script", "SCRIPT"),
        ("unread-parameter", "FILE_FORMAT"),
    ]


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


def _graded(task: TaskRow) -> set[tuple[str, str, str | None]]:
    return {(f.severity, f.check, f.parameter) for f in validate_metadata(_subject(task)).findings}


def test_scd2_validity_and_missing_keys_settings_pass() -> None:
    task = _history(
        SCD2_VALID_FROM="COLUMN",
        SCD2_VALID_FROM_COLUMN="changed_at",
        SCD2_MISSING_KEYS="NEW_RECORD",
    )

    assert _graded(task) == set()


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
    assert _graded(_history(SCD2_VALID_FROM="COLUMN")) == {
        ("FAIL", "required-parameter", "SCD2_VALID_FROM_COLUMN")
    }
    assert _graded(_history(SCD2_VALID_FROM_COLUMN="changed_at")) == {
        ("WARN", "unread-parameter", "SCD2_VALID_FROM_COLUMN")
    }
    two = _history(SCD2_VALID_FROM="COLUMN", SCD2_VALID_FROM_COLUMN="a, b")
    assert _graded(two) == {("FAIL", "parameter-value", "SCD2_VALID_FROM_COLUMN")}


def test_scd2_settings_on_another_action_warn() -> None:
    task = _merge("SELECT id, name FROM s.t", SCD2_MISSING_KEYS="CLOSE")

    assert _graded(task) == {("WARN", "unread-parameter", "SCD2_MISSING_KEYS")}
