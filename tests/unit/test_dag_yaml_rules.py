"""generate-yml's refusals one by one, the documents it builds, and their schema."""

from __future__ import annotations

import shlex
from types import MappingProxyType

import jsonschema
import pytest

from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.core.errors import ExitCode, OrchestratorUnsupportedError, UsageError
from etl_craft.enginedb.metadata import (
    PipelineDependencyRow,
    PipelineRow,
    ProjectMetadata,
    TaskDependencyRow,
    TaskRow,
)
from etl_craft.operations.dag_yaml import (
    Invocation,
    airflow_floor,
    dag_document,
    dag_schema,
    require_airflow_templates,
)
from etl_craft.operations.remote.rules import require_supported, unsupported

Edge = tuple[str, str, DependencyType]  # downstream, upstream ("pipe.task" for another pipeline)


def project(
    tasks: dict[str, RunCondition],
    edges: list[Edge],
    pipeline_dependencies: tuple[DependencyType, ...] = (),
) -> ProjectMetadata:
    pipelines = (
        PipelineRow(1, "orders", None, "0 * * * *", None, True),
        PipelineRow(2, "upstream", None, None, None, True),
    )
    rows = [
        TaskRow(
            i,
            1,
            code,
            Handler.SQL,
            condition,
            2 if condition is RunCondition.N else None,
            True,
            MappingProxyType({}),
        )
        for i, (code, condition) in enumerate(tasks.items(), start=1)
    ]
    rows.append(
        TaskRow(99, 2, "publish", Handler.SQL, RunCondition.ALL, None, True, MappingProxyType({}))
    )
    ids = {row.code: row.task_id for row in rows}
    dependencies = tuple(
        TaskDependencyRow(
            n,
            ids[down],
            ids[up.split(".")[-1]],
            kind,
            up.split(".")[-1],
            Handler.SQL,
            True,
            2 if "." in up else 1,
            "upstream" if "." in up else "orders",
            True,
        )
        for n, (down, up, kind) in enumerate(edges, start=1)
    )
    gates = tuple(
        PipelineDependencyRow(n, 1, 2, kind, "upstream", True)
        for n, kind in enumerate(pipeline_dependencies, start=1)
    )
    return ProjectMetadata(1, "default", "UTC", pipelines, tuple(rows), (), dependencies, gates, ())


def rules(metadata: ProjectMetadata) -> list[tuple[str | None, str]]:
    return [
        (item.task_code, item.rule) for item in unsupported(metadata, metadata.pipeline("orders"))
    ]


ALL, ANY, N = RunCondition.ALL, RunCondition.ANY, RunCondition.N
S, F, H, A = (
    DependencyType.SUCCESS,
    DependencyType.FAILURE,
    DependencyType.HAS_DATA,
    DependencyType.ALWAYS,
)


def test_an_n_run_condition_is_refused() -> None:
    metadata = project({"a": ALL, "b": ALL, "c": N}, [("c", "a", S), ("c", "b", S)])
    assert rules(metadata) == [("c", "N_RUN_CONDITION")]


def test_a_has_data_dependency_is_refused() -> None:
    assert rules(project({"a": ALL, "b": ALL}, [("b", "a", H)])) == [("b", "HAS_DATA_DEPENDENCY")]


def test_a_has_data_pipeline_dependency_is_refused() -> None:
    assert rules(project({"a": ALL}, [], (H,))) == [(None, "HAS_DATA_DEPENDENCY")]


def test_dependencies_of_different_types_are_refused() -> None:
    metadata = project({"a": ALL, "b": ALL, "c": ALL}, [("c", "a", S), ("c", "b", A)])
    assert rules(metadata) == [("c", "MIXED_DEPENDENCY_TYPES")]


def test_a_failure_edge_to_another_pipeline_beside_its_own_is_refused() -> None:
    metadata = project({"a": ALL, "b": ALL}, [("b", "a", F), ("b", "upstream.publish", F)])
    assert rules(metadata) == [("b", "CROSS_PIPELINE_BESIDE_OWN")]


def test_the_refusal_names_pipeline_task_rule_remedy_and_exits_with_its_own_code() -> None:
    metadata = project({"a": ALL, "b": ALL}, [("b", "a", H)])
    with pytest.raises(OrchestratorUnsupportedError) as refused:
        require_supported(metadata, metadata.pipeline("orders"))
    message = str(refused.value)
    for part in (
        "pipeline orders",
        "task b",
        "HAS_DATA_DEPENDENCY",
        "does not support",
        "make the",
    ):
        assert part in message
    assert refused.value.exit_code is ExitCode.ORCHESTRATOR_UNSUPPORTED


def test_supported_rules_become_trigger_rules_sensors_and_control_steps() -> None:
    metadata = project(
        {"a": ALL, "b": ALL, "alert": ANY, "tidy": ALL, "c": ALL},
        [
            ("b", "a", S),
            ("alert", "a", F),
            ("alert", "b", F),
            ("tidy", "b", A),
            ("c", "upstream.publish", S),
        ],
        (S,),
    )
    document = dag_document(metadata, metadata.pipeline("orders"), Invocation()).document
    jsonschema.validate(document, dag_schema())
    steps = {step["task_id"]: step for step in document["tasks"]}
    assert document["tasks"][0]["task_id"] == "__init__"
    assert {name: steps[name]["trigger_rule"] for name in ("a", "b", "alert", "tidy", "c")} == {
        "a": "all_success",
        "b": "all_success",
        "alert": "one_failed",
        "tidy": "all_done",
        "c": "all_success",
    }
    assert steps["a"]["upstream"] == ["__wait__upstream"]
    assert steps["__wait__upstream"]["external_task_id"] == "__finalize__"
    assert steps["c"]["upstream"] == ["__wait__upstream", "__wait__upstream__publish"]
    assert steps["__wait__upstream__publish"]["external_task_id"] == "publish"
    assert steps["__finalize__"]["trigger_rule"] == "all_done"
    assert set(steps["__finalize__"]["upstream"]) == set(steps) - {"__init__", "__finalize__"}
    assert document["dag"]["max_active_runs"] == 1


def test_commands_quote_every_word_and_take_the_run_from_the_environment() -> None:
    command = Invocation("/opt/etl craft/bin/etl-craft", "/srv/it's/craft-connector.yml").command(
        "orders", "--task", "load"
    )
    assert shlex.split(command) == [
        "/opt/etl craft/bin/etl-craft",
        "--config",
        "/srv/it's/craft-connector.yml",
        "run",
        "--pipeline",
        "orders",
        "--task",
        "load",
        "--run-key",
        "$ETL_CRAFT_RUN_KEY",
        "--run-date",
        "$ETL_CRAFT_RUN_DATE",
    ]
    assert "{{" not in command  # rendered values reach the shell only as quoted variables


def test_the_schema_refuses_an_unknown_version_and_a_step_named_like_a_control_step() -> None:
    metadata = project({"a": ALL}, [])
    document = dag_document(metadata, metadata.pipeline("orders"), Invocation()).document
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**document, "etl_craft_yaml_version": 2}, dag_schema())
    tampered = {
        **document,
        "tasks": [*document["tasks"], {**document["tasks"][1], "task_id": "_x"}],
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(tampered, dag_schema())


@pytest.mark.parametrize(
    ("spec", "floor"), [(">=2.2.0", (2, 2, 0)), (">=2.11,<4", (2, 11)), ("==3.3.2", (3, 3, 2))]
)
def test_the_airflow_range_floor(spec: str, floor: tuple[int, ...]) -> None:
    assert airflow_floor(spec) == floor
    require_airflow_templates(spec)


def test_a_range_below_the_template_minimum_or_without_a_floor_is_refused() -> None:
    with pytest.raises(OrchestratorUnsupportedError, match=r"run_id or data_interval_end"):
        require_airflow_templates(">=2.1")
    with pytest.raises(UsageError, match="no lower bound"):
        require_airflow_templates("<3")
