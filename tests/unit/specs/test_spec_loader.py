"""Reading pipelines/<code>.yml: what a valid spec becomes, and how a wrong one is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.core.enums import DependencyType, Handler
from etl_craft.specs.loader import load_spec_file, load_specs
from etl_craft.specs.model import SpecError, TaskDependencySpec
from etl_craft.specs.rows import spec_rows

VALID = """\
description: Orders
schedule: "0 6 * * *"
catchup: true
parameters:
  region: EU
  since: {value: 2026-01-01, type: DATE}
depends_on: [customers, {pipeline: products, type: ALWAYS, consume_repairs: false}]
tasks:
  land:
    handler: PYTHON
    script: land.py
    offset_type: INT
    target: lnd.orders
    input_params: {folder: ../in, batch: 10}
  merge:
    action: SCD1_MERGE
    sql: orders.sql
    target: dm.orders
    keys: [order_id, line]
    parameters: {RETRIES: 2, PRESERVE_TARGET: true}
    depends_on: [land, customers.load, {task: land, pipeline: other, type: HAS_DATA}]
  check:
    handler: BUSINESS_RULES
    target: dm.orders
    rules:
      no_amount:
        type: REJECT
        keys: order_id
        sql: SELECT order_id FROM dm.orders WHERE amount IS NULL
"""


def write(tmp_path: Path, text: str, name: str = "orders.yml") -> Path:
    path = tmp_path / "pipelines" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def refusal(tmp_path: Path, text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load_spec_file(write(tmp_path, text))
    return caught.value


def test_a_valid_spec_becomes_the_pipeline_its_file_names(tmp_path: Path) -> None:
    (spec,) = load_spec_file(write(tmp_path, VALID))
    assert spec.code == "orders"
    assert dict(spec.settings) == {
        "DESCRIPTION": "Orders",
        "RUN_SCHEDULE": "0 6 * * *",
        "CATCHUP": "Y",
    }
    assert [(p.name, p.value, p.type) for p in spec.parameters] == [
        ("region", "EU", "STRING"),
        ("since", "2026-01-01", "DATE"),
    ]
    assert [(d.upstream_pipeline, d.type, d.consume_repairs) for d in spec.depends_on] == [
        ("customers", DependencyType.SUCCESS, True),
        ("products", DependencyType.ALWAYS, False),
    ]
    land, merge, check = spec.tasks
    assert land.handler is Handler.PYTHON
    assert dict(land.parameters) == {
        "SCRIPT": "land.py",
        "OFFSET_TYPE": "INT",
        "TARGET_OBJECT": "lnd.orders",
        "INPUT_PARAMS": '{"folder": "../in", "batch": 10}',
    }
    assert dict(merge.parameters) == {
        "ACTION": "SCD1_MERGE",
        "SOURCE_SQL_FILE": "orders.sql",
        "TARGET_OBJECT": "dm.orders",
        "MERGE_KEY": "order_id, line",
        "RETRIES": "2",
        "PRESERVE_TARGET": "Y",
    }
    assert merge.depends_on == (
        TaskDependencySpec("land", "orders"),
        TaskDependencySpec("load", "customers"),
        TaskDependencySpec("land", "other", DependencyType.HAS_DATA),
    )
    assert dict(check.parameters) == {"TARGET_TABLE": "dm.orders"}
    (rule,) = check.rules
    assert (rule.target_table, rule.key_columns, rule.wave) == ("dm.orders", "order_id", 1)


def test_rows_fill_every_field_and_write_only_what_differs_from_the_default(
    tmp_path: Path,
) -> None:
    (spec,) = load_spec_file(write(tmp_path, VALID))
    rows = {(row.kind, tuple(row.key.values())): row for row in spec_rows(spec)}
    pipeline = rows[("pipeline", ("orders",))]
    assert pipeline.fields["OVERLAP_POLICY"] == "SKIP"
    assert pipeline.non_default() == {
        "DESCRIPTION": "Orders",
        "RUN_SCHEDULE": "0 6 * * *",
        "CATCHUP": "Y",
    }
    assert rows[("task_dependency", ("orders", "merge", "other", "land"))].non_default() == {
        "DEPENDENCY_TYPE": "HAS_DATA"
    }
    assert ("business_rule", ("orders", "check", "no_amount")) in rows


def test_a_value_outside_the_schema_names_file_place_value_and_expectation(
    tmp_path: Path,
) -> None:
    error = refusal(tmp_path, "tasks:\n  load:\n    run_condition: SOME\n")
    assert error.path == "/tasks/load/run_condition"
    assert error.found == '"SOME"'
    assert error.expected == "one of ALL, ANY, N"
    assert str(error).startswith('pipelines/orders.yml:3 tasks.load.run_condition: found "SOME"')
    assert error.source == tmp_path / "pipelines" / "orders.yml"


def test_an_unknown_key_lists_the_known_ones(tmp_path: Path) -> None:
    error = refusal(tmp_path, "tasks:\n  load:\n    acton: CREATE_TABLE\n")
    assert error.path == "/tasks/load"
    assert "acton" in error.expected
    assert "action, active" in error.expected


def test_a_task_code_breaking_the_code_rule_is_refused(tmp_path: Path) -> None:
    error = refusal(tmp_path, "tasks:\n  1load:\n    action: CREATE_TABLE\n")
    assert error.path == "/tasks"
    assert error.found == '"1load"'


def test_text_yaml_cannot_read_names_its_line(tmp_path: Path) -> None:
    error = refusal(tmp_path, "tasks:\n  load: {action: [\n")
    assert "line 3" in error.found


def test_a_document_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    error = refusal(tmp_path, "- load\n")
    assert (error.path, error.found) == ("/", "a list")


def test_a_shorthand_and_its_parameter_both_given_are_refused(tmp_path: Path) -> None:
    error = refusal(
        tmp_path, "tasks:\n  load:\n    target: a.b\n    parameters: {TARGET_OBJECT: a.c}\n"
    )
    assert error.path == "/tasks/load/parameters/TARGET_OBJECT"
    assert "keep target:" in error.remedy


def test_a_dependency_on_a_task_the_pipeline_lacks_is_refused(tmp_path: Path) -> None:
    error = refusal(tmp_path, "tasks:\n  load:\n    depends_on: [lnad]\n")
    assert error.path == "/tasks/load/depends_on/0"
    assert error.expected == "a task of pipeline orders: load"


def test_a_rule_without_a_target_is_refused(tmp_path: Path) -> None:
    error = refusal(
        tmp_path,
        "tasks:\n  check:\n    handler: BUSINESS_RULES\n    rules:\n"
        "      r1: {type: REPORT, keys: id, sql: SELECT 1 AS id}\n",
    )
    assert error.path == "/tasks/check/rules/r1/target"


def test_a_pipeline_in_two_files_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "tasks: {load: {action: CREATE_TABLE}}\n", "orders.yml")
    write(tmp_path, "tasks: {load: {action: CREATE_TABLE}}\n", "orders.yaml")
    with pytest.raises(SpecError, match="describes too"):
        load_specs(tmp_path / "pipelines")


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("max_parallel_tasks: 99999999999999999999999\n", "max_parallel_tasks"),
        ("max_catchup_runs: 0\n", "max_catchup_runs"),
        ("priority: 10000000000\n", "priority"),
        ("sla_minutes: 0\n", "sla_minutes"),
        (
            "instances:\n  orders_eu:\n    max_parallel_tasks: 10001\n",
            "instances/orders_eu/max_parallel_tasks",
        ),
    ],
)
def test_a_pipeline_number_outside_its_range_is_refused_naming_the_range(
    tmp_path: Path, written: str, key: str
) -> None:
    error = refusal(tmp_path, written + "tasks:\n  load:\n    action: CREATE_TABLE\n")
    assert error.path == f"/{key}"
    assert "a whole number from" in error.expected


@pytest.mark.parametrize(
    "task",
    [
        "    run_condition: N\n    required_count: 100000\n",
        "    handler: BUSINESS_RULES\n    target: a.b\n    rules:\n"
        "      r1: {type: REPORT, keys: id, sql: SELECT 1 AS id, wave: 1001}\n",
    ],
)
def test_a_task_number_outside_its_range_is_refused(tmp_path: Path, task: str) -> None:
    error = refusal(tmp_path, "tasks:\n  load:\n" + task)
    assert "out of range" not in error.found
    assert "a whole number from 1 to" in error.expected


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "description: Orders\ntasks:\n  load:\n    action: CREATE_TABLE\n"
            "  merge:\n    depends_on: [load, lnad]\n",
            "pipelines/orders.yml:6 tasks.merge.depends_on.1: found 'lnad'",
        ),
        (
            "tasks:\n  load:\n    target: a.b\n    parameters:\n      TARGET_OBJECT: a.c\n",
            "pipelines/orders.yml:5 tasks.load.parameters.TARGET_OBJECT: found TARGET_OBJECT given",
        ),
        (
            "schedule: null\n\nmax_parallel_tasks: 0\ntasks: {load: {action: CREATE_TABLE}}\n",
            "pipelines/orders.yml:3 max_parallel_tasks: found 0; expected a number of tasks",
        ),
        ("tasks:\n  load: {action: [\n", "pipelines/orders.yml:3 (the document): found text YAML"),
    ],
)
def test_a_spec_problem_names_file_line_and_key_path(tmp_path: Path, text: str, where: str) -> None:
    assert str(refusal(tmp_path, text)).startswith(where)
