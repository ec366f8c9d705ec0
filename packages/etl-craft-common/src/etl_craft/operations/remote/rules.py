"""The rules an external orchestrator cannot express, found before they would be dropped.

In remote mode the orchestrator decides when each task runs, from the trigger rules and sensors
generate-yml writes. A rule with no Airflow equivalent would silently stop applying, so
generate-yml, validate (in remote mode) and run --init-only refuse it instead (G5a):

- RUN_CONDITION N (at least REQUIRED_COUNT of the dependencies): no trigger rule counts;
- a HAS_DATA dependency: the orchestrator sees a task's state, never its row count;
- one task's dependencies of different types: a trigger rule judges every upstream the same way;
- a task that depends on another pipeline's task beside its own pipeline's tasks, when its type
  is not SUCCESS: the sensor's success means "met", which only an all_success rule reads right.
"""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.enums import DependencyType, RunCondition
from etl_craft.core.errors import OrchestratorUnsupportedError, RunStateError, UsageError
from etl_craft.enginedb.metadata import PipelineRow, ProjectMetadata, TaskRow
from etl_craft.operations.context import OperationContext
from etl_craft.operations.validate.findings import Finding, Severity, Subject

ORCHESTRATOR = "the remote orchestrator (Airflow)"


@dataclass(frozen=True)
class Unsupported:
    pipeline_code: str
    task_code: str | None
    rule: str  # N_RUN_CONDITION, HAS_DATA_DEPENDENCY, MIXED_DEPENDENCY_TYPES, ...
    message: str
    remedy: str

    def sentence(self) -> str:
        where = (
            f"pipeline {self.pipeline_code}"
            if self.task_code is None
            else f"task {self.task_code} of pipeline {self.pipeline_code}"
        )
        return (
            f"{where}: {self.message}; {ORCHESTRATOR} does not support it ({self.rule}); "
            f"{self.remedy}"
        )


def unsupported(metadata: ProjectMetadata, pipeline: PipelineRow) -> list[Unsupported]:
    """Every rule of ``pipeline`` the orchestrator cannot express, in task order."""
    found: list[Unsupported] = []
    for dependency in metadata.pipeline_dependencies_of(pipeline.pipeline_id):
        if dependency.type is DependencyType.HAS_DATA and dependency.upstream_pipeline_active:
            found.append(
                Unsupported(
                    pipeline.code,
                    None,
                    "HAS_DATA_DEPENDENCY",
                    f"it depends on pipeline {dependency.upstream_pipeline_code} with "
                    "DEPENDENCY_TYPE HAS_DATA",
                    "make the pipeline dependency SUCCESS, or run the pipeline in local mode",
                )
            )
    for task in metadata.tasks_of(pipeline.pipeline_id):
        found.extend(_task_rules(metadata, pipeline, task))
    return found


def check_remote(subject: Subject) -> list[Finding]:
    """validate in remote mode: each rule the orchestrator would drop, as a FAIL."""
    if not subject.remote:
        return []
    return [
        Finding(
            Severity.FAIL,
            "remote-mode",
            item.pipeline_code,
            item.task_code,
            None,
            f"{item.message}; {ORCHESTRATOR} does not support it ({item.rule})",
            item.remedy,
        )
        for pipeline in subject.pipelines()
        for item in unsupported(subject.metadata, pipeline)
    ]


def require_supported(metadata: ProjectMetadata, pipeline: PipelineRow) -> None:
    found = unsupported(metadata, pipeline)
    if found:
        raise OrchestratorUnsupportedError(
            f"pipeline {pipeline.code} cannot run under {ORCHESTRATOR}: "
            + "; ".join(item.sentence() for item in found)
        )


def _task_rules(
    metadata: ProjectMetadata, pipeline: PipelineRow, task: TaskRow
) -> list[Unsupported]:
    found: list[Unsupported] = []
    edges = [d for d in metadata.dependencies_of(task.task_id) if d.upstream_task_active]

    def add(rule: str, message: str, remedy: str) -> None:
        found.append(Unsupported(pipeline.code, task.code, rule, message, remedy))

    if task.run_condition is RunCondition.N:
        add(
            "N_RUN_CONDITION",
            f"its RUN_CONDITION is N (at least {task.required_count} dependencies)",
            "use ALL or ANY, or run the pipeline in local mode (Orchestration mode: local)",
        )
    has_data = sorted(d.upstream_task_code for d in edges if d.type is DependencyType.HAS_DATA)
    if has_data:
        add(
            "HAS_DATA_DEPENDENCY",
            f"it depends on {', '.join(has_data)} with DEPENDENCY_TYPE HAS_DATA",
            "make the dependency SUCCESS and let the task find no new rows, or run the pipeline "
            "in local mode",
        )
    types = sorted({d.type for d in edges})
    if len(types) > 1:
        add(
            "MIXED_DEPENDENCY_TYPES",
            f"its dependencies have different types ({', '.join(types)})",
            "give every dependency of the task one type, or split the task in two",
        )
    external = [d for d in edges if d.upstream_pipeline_id != task.pipeline_id]
    internal = [d for d in edges if d.upstream_pipeline_id == task.pipeline_id]
    if external and internal and types and types[0] is not DependencyType.SUCCESS:
        add(
            "CROSS_PIPELINE_BESIDE_OWN",
            f"it depends on another pipeline's task ({external[0].upstream_pipeline_code}."
            f"{external[0].upstream_task_code}) beside its own pipeline's tasks, with type "
            f"{types[0]}",
            "depend on the other pipeline through a SUCCESS dependency, or move the "
            "cross-pipeline dependency to a task of its own",
        )
    return found


def is_remote(ctx: OperationContext) -> bool:
    return ctx.connector is not None and ctx.connector.orchestration.remote


def require_remote(ctx: OperationContext, option: str) -> None:
    if not is_remote(ctx):
        raise UsageError(
            f"run {option} is a step of an external orchestrator's DAG, but this project runs "
            "in local mode; set Orchestration mode: remote in craft-connector.yml (for the "
            "profile the orchestrator uses), or run the pipeline with etl-craft run"
        )


def refuse_in_remote_mode(ctx: OperationContext, command: str) -> None:
    """mark and cancel belong to the orchestrator in remote mode: its state would disagree."""
    if is_remote(ctx):
        raise RunStateError(
            f"etl-craft {command} is refused: this project runs in remote mode (Orchestration "
            f"mode: remote), where the orchestrator decides every run's and task's state; "
            f"{command} it in the orchestrator (for Airflow: mark or clear the DAG run or task "
            "there), which runs etl-craft's commands again"
        )
