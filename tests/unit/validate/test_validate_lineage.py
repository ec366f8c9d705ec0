"""validate's lineage checks over metadata built in memory: reads without order, missing keys."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.enginedb.metadata import (
    BusinessRuleRow,
    PipelineDependencyRow,
    PipelineParameterRow,
    PipelineRow,
    ProjectMetadata,
    TaskDependencyRow,
    TaskRow,
)
from etl_craft.lineage.build import build_lineage
from etl_craft.operations.validate.findings import Subject
from etl_craft.operations.validate.report import Finding, validate_metadata

PIPELINES = (
    PipelineRow(1, "load", None, None, None, True),
    PipelineRow(2, "report", None, None, None, True),
)


def _task(
    task_id: int, pipeline_id: int, code: str, handler: Handler = Handler.SQL, **p: str
) -> TaskRow:
    return TaskRow(
        task_id, pipeline_id, code, handler, RunCondition.ALL, None, True, MappingProxyType(p)
    )


WRITER = _task(
    1,
    1,
    "write_orders",
    ACTION="OVERWRITE_TABLE",
    TARGET_OBJECT="pub.orders",
    SOURCE_SQL="SELECT id, amount FROM raw.orders",
)
READER = _task(
    2,
    2,
    "sum_orders",
    ACTION="CREATE_TABLE",
    TARGET_OBJECT="pub.totals",
    SOURCE_SQL="SELECT SUM(o.amount) AS total FROM pub.orders o",
)


def _subject(
    *tasks: TaskRow,
    task_dependencies: tuple[TaskDependencyRow, ...] = (),
    pipeline_dependencies: tuple[PipelineDependencyRow, ...] = (),
    rules: tuple[BusinessRuleRow, ...] = (),
) -> Subject:
    metadata = ProjectMetadata(
        project_id=1,
        project_code="shop",
        timezone="UTC",
        pipelines=PIPELINES,
        tasks=tasks,
        pipeline_parameters=(),
        task_dependencies=task_dependencies,
        pipeline_dependencies=pipeline_dependencies,
        business_rules=rules,
    )
    return Subject(metadata, frozenset({1, 2}), None, "duckdb")


def _lineage_findings(subject: Subject) -> list[Finding]:
    checks = ("unordered-read", "key-column")
    return [f for f in validate_metadata(subject).findings if f.check in checks]


def test_a_read_of_a_table_another_task_writes_without_a_dependency_fails() -> None:
    [finding] = _lineage_findings(_subject(WRITER, READER))

    assert (finding.severity.value, finding.pipeline_code, finding.task_code) == (
        "FAIL",
        "report",
        "sum_orders",
    )
    assert "reads pub.orders, which task load.write_orders writes" in finding.message
    assert "add a dependency of report.sum_orders on load.write_orders" in finding.remedy


def test_a_task_dependency_orders_the_read() -> None:
    dependency = TaskDependencyRow(
        1, 2, 1, DependencyType.SUCCESS, "write_orders", Handler.SQL, True, 1, "load", True
    )

    assert _lineage_findings(_subject(WRITER, READER, task_dependencies=(dependency,))) == []


def test_a_transitive_pipeline_dependency_orders_the_read() -> None:
    middle = _task(3, 3, "noop", Handler.EMAIL_ALERT)
    pipelines = (
        PipelineDependencyRow(1, 2, 3, DependencyType.SUCCESS, "middle", True),
        PipelineDependencyRow(2, 3, 1, DependencyType.SUCCESS, "load", True),
    )
    subject = _subject(WRITER, READER, middle, pipeline_dependencies=pipelines)
    metadata = ProjectMetadata(
        **{
            **subject.metadata.__dict__,
            "pipelines": (*PIPELINES, PipelineRow(3, "middle", None, None, None, True)),
        }
    )

    assert _lineage_findings(Subject(metadata, subject.scope, None, "duckdb")) == []


def test_a_merge_key_missing_from_the_select_fails() -> None:
    merge = _task(
        4,
        1,
        "merge_orders",
        ACTION="SCD1_MERGE",
        TARGET_OBJECT="pub.orders_current",
        SOURCE_SQL="SELECT o.amount FROM raw.orders o",
        MERGE_KEY="id",
    )

    [finding] = _lineage_findings(_subject(merge))

    assert (finding.check, finding.task_code, finding.parameter) == (
        "key-column",
        "merge_orders",
        "MERGE_KEY",
    )
    assert "MERGE_KEY names id, which the SELECT does not return" in finding.message


def test_a_delete_key_missing_from_the_select_fails() -> None:
    delete = _task(
        5,
        1,
        "delete_orders",
        ACTION="DELETE_ROWS",
        TARGET_OBJECT="pub.orders",
        SOURCE_SQL="SELECT r.order_ref FROM raw.cancelled r",
        MERGE_KEY="id",
    )

    assert [f.check for f in _lineage_findings(_subject(delete))] == ["key-column"]


def test_a_merge_key_behind_an_unknown_star_is_not_judged() -> None:
    merge = _task(
        4,
        1,
        "merge_orders",
        ACTION="SCD1_MERGE",
        TARGET_OBJECT="pub.orders_current",
        SOURCE_SQL="SELECT * FROM raw.orders",
        MERGE_KEY="id",
    )

    assert _lineage_findings(_subject(merge)) == []


def test_a_business_rule_key_missing_from_the_tables_select_fails() -> None:
    rules_task = _task(6, 1, "check_orders", Handler.BUSINESS_RULES, TARGET_TABLE="pub.orders")
    dependency = TaskDependencyRow(
        1, 6, 1, DependencyType.SUCCESS, "write_orders", Handler.SQL, True, 1, "load", True
    )
    rule = BusinessRuleRow(1, 6, "no_negative", "REJECT", "pub.orders", "order_id", "SELECT 1", 1)

    [finding] = _lineage_findings(
        _subject(WRITER, rules_task, task_dependencies=(dependency,), rules=(rule,))
    )

    assert (finding.check, finding.task_code) == ("key-column", "check_orders")
    assert "KEY_COLUMNS of rule no_negative names order_id" in finding.message
    assert "load.write_orders" in finding.message


def test_a_file_load_writes_its_target_from_its_files() -> None:
    load = _task(
        3,
        1,
        "load_orders",
        Handler.PYTHON,
        FILE_PATTERN="landing/*.csv",
        FILE_FORMAT="CSV",
        TARGET_OBJECT="pub.orders",
    )
    built = build_lineage(_subject(load, READER).metadata, None, "duckdb")
    [loaded] = [t for t in built.graph.tasks if t.task_code == "load_orders"]
    assert (loaded.external_source, loaded.target) == ("files landing/*.csv", "pub.orders")
    [finding] = _lineage_findings(_subject(load, READER))
    assert "reads pub.orders, which task load.load_orders writes" in finding.message


HISTORY = _task(
    7,
    1,
    "keep_customers",
    ACTION="SCD2_MERGE",
    TARGET_OBJECT="dm.customers",
    MERGE_KEY="id",
    SOURCE_SQL="SELECT c.id, c.segment FROM raw.customers c",
)


def test_a_read_filtering_another_pipelines_history_on_its_flags_fails_unordered() -> None:
    current = _task(
        8,
        2,
        "segments",
        ACTION="CREATE_TABLE",
        TARGET_OBJECT="pub.segments",
        SOURCE_SQL="SELECT h.segment FROM dm.customers h "
        "WHERE h.active_flag = 'Y' AND h.valid_to IS NULL",
    )

    [finding] = _lineage_findings(_subject(HISTORY, current))

    assert (finding.check, finding.task_code) == ("unordered-read", "segments")
    assert "reads dm.customers, which task load.keep_customers writes" in finding.message


def test_a_rule_reading_another_pipelines_target_without_a_dependency_fails() -> None:
    rules_task = _task(9, 2, "check_totals", Handler.BUSINESS_RULES, TARGET_TABLE="pub.totals")
    rule = BusinessRuleRow(
        2,
        9,
        "known_customer",
        "REJECT",
        "pub.totals",
        "id",
        "SELECT t.id FROM pub.totals t WHERE NOT EXISTS "
        "(SELECT 1 FROM dm.customers c WHERE c.id = t.id AND c.active_flag = 'Y')",
        1,
    )
    ordered = PipelineDependencyRow(1, 2, 1, DependencyType.SUCCESS, "load", True)

    [finding] = _lineage_findings(_subject(HISTORY, rules_task, rules=(rule,)))
    after = _subject(HISTORY, rules_task, rules=(rule,), pipeline_dependencies=(ordered,))

    assert (finding.check, finding.task_code) == ("unordered-read", "check_totals")
    assert "reads dm.customers, which task load.keep_customers writes" in finding.message
    assert _lineage_findings(after) == []


OWN_SLICE = "t.source_system = $$param.CLIENT"


def _client(task_id: int, pipeline_id: int, read_back: str = OWN_SLICE) -> TaskRow:
    return _task(
        task_id,
        pipeline_id,
        "load",
        ACTION="APPEND_TABLE",
        TARGET_OBJECT="dm.orders",
        SLICE_COLUMN="source_system",
        SLICE_VALUE="$$param.CLIENT",
        SOURCE_SQL="SELECT o.id, o.client AS source_system FROM raw.orders o "
        f"WHERE o.id > (SELECT MAX(t.id) FROM dm.orders t WHERE {read_back})",
    )


def _clients(acme: str, other: str, read_back: str = OWN_SLICE) -> Subject:
    subject = _subject(_client(10, 1, read_back), _client(11, 2))
    parameters = (
        PipelineParameterRow(1, "CLIENT", acme, "STRING"),
        PipelineParameterRow(2, "CLIENT", other, "STRING"),
    )
    metadata = replace(subject.metadata, pipeline_parameters=parameters)
    return Subject(metadata, subject.scope, None, "duckdb")


def test_pipelines_reading_back_their_own_slices_of_a_table_need_no_order() -> None:
    assert _lineage_findings(_clients("acme", "bolt")) == []


def test_two_pipelines_declaring_the_same_slice_still_need_an_order() -> None:
    findings = _lineage_findings(_clients("acme", "acme"))

    assert [(f.check, f.pipeline_code) for f in findings] == [
        ("unordered-read", "load"),
        ("unordered-read", "report"),
    ]
    assert "both declare the slice source_system = 'acme' of dm.orders" in findings[0].remedy


@pytest.mark.parametrize(
    "read_back",
    [
        "t.id > 0",
        "t.source_system = 'bolt'",
        "t.source_system = $$param.CLIENT OR t.id > 0",
    ],
)
def test_a_declared_slice_its_sql_does_not_keep_to_still_needs_an_order(read_back: str) -> None:
    findings = _lineage_findings(_clients("acme", "bolt", read_back))

    assert [(f.check, f.pipeline_code) for f in findings] == [("unordered-read", "load")]
    assert "does not require source_system = 'acme': filter every read" in findings[0].remedy
