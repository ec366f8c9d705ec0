"""generate-yml: one versioned YAML document per pipeline, for an external orchestrator's DAG.

The document puts etl-craft's scheduling rules in the orchestrator (G1b, G5a): ``__init__``
creates or resolves the run for the orchestrator's run id, sensors wait on the other pipelines
and tasks it depends on, each task's trigger rule says which upstream states start it, and
``__finalize__`` records what the orchestrator decided. Every command passes the run key and
run date through environment variables the orchestrator renders (``run_id``,
``data_interval_end``), so no rendered value is ever parsed by the shell. Control steps and
sensors are named with a leading underscore, which no task code can have (B64).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, ClassVar

from etl_craft import __version__
from etl_craft.core.defaults import AIRFLOW_RANGE
from etl_craft.core.enums import DependencyType, RunCondition
from etl_craft.core.errors import OrchestratorUnsupportedError, UsageError
from etl_craft.enginedb.metadata import PipelineRow, ProjectMetadata, TaskRow
from etl_craft.operations.remote.rules import require_supported

YAML_VERSION = 1
INIT, FINALIZE = "__init__", "__finalize__"
RUN_KEY_ENV, RUN_DATE_ENV = "ETL_CRAFT_RUN_KEY", "ETL_CRAFT_RUN_DATE"
ENVIRONMENT = {
    RUN_KEY_ENV: "orchestrator:{{ run_id }}",
    RUN_DATE_ENV: "{{ data_interval_end | ds }}",
}
# run_id and data_interval_end are both template variables from Airflow 2.2.0 on (S3.C).
AIRFLOW_FLOOR = (2, 2, 0)
START_DATE = "2024-01-01"  # the DAGs never catch up, so the start only has to be in the past
SENSOR_POKE_SECONDS = 60

TRIGGER_RULES = {
    (DependencyType.SUCCESS, RunCondition.ALL): "all_success",
    (DependencyType.SUCCESS, RunCondition.ANY): "one_success",
    (DependencyType.FAILURE, RunCondition.ALL): "all_failed",
    (DependencyType.FAILURE, RunCondition.ANY): "one_failed",
    (DependencyType.ALWAYS, RunCondition.ALL): "all_done",
    (DependencyType.ALWAYS, RunCondition.ANY): "one_done",
}
# What the upstream's Airflow state means for each dependency type. A pipeline dependency
# senses the upstream DAG's __finalize__, which fails exactly when the etl-craft run failed.
SENSED_STATES: dict[DependencyType, tuple[list[str], list[str]]] = {
    DependencyType.SUCCESS: (["success"], ["failed", "upstream_failed", "skipped"]),
    DependencyType.FAILURE: (["failed"], ["success", "upstream_failed", "skipped"]),
    DependencyType.ALWAYS: (["success", "failed", "upstream_failed", "skipped"], []),
}


@dataclass(frozen=True)
class Invocation:
    """How the orchestrator's workers start etl-craft: the command and its global options."""

    executable: str = "etl-craft"
    config: str | None = None
    profile: str | None = None

    def command(self, pipeline_code: str, *options: str) -> str:
        words = [self.executable]
        if self.config:
            words += ["--config", self.config]
        if self.profile:
            words += ["--profile", self.profile]
        words += ["run", "--pipeline", pipeline_code, *options]
        quoted = " ".join(shlex.quote(word) for word in words)
        return f'{quoted} --run-key "${RUN_KEY_ENV}" --run-date "${RUN_DATE_ENV}"'


@dataclass(frozen=True)
class DagDocument:
    schema: ClassVar[str] = "etl-craft/generate-yml/1"
    pipeline_code: str
    document: dict[str, Any]


def airflow_floor(spec: str) -> tuple[int, ...]:
    """The lowest Airflow version ``spec`` allows (">=2.11", "==3.3.2", ">=2.2,<4")."""
    floors = []
    for clause in (part.strip() for part in spec.split(",") if part.strip()):
        found = re.fullmatch(r"(>=|==|~=)?\s*(\d+(?:\.\d+){0,2})(?:\.\*)?", clause)
        if found:
            floors.append(tuple(int(n) for n in found.group(2).split(".")))
        elif not re.fullmatch(r"(<=|<|!=)\s*\d+(?:\.\d+){0,2}(?:\.\*)?", clause):
            raise UsageError(
                f"--airflow-version {spec!r} has the clause {clause!r}; expected a range such "
                f"as {AIRFLOW_RANGE}, >=2.11,<4 or ==3.3.2"
            )
    if not floors:
        raise UsageError(
            f"--airflow-version {spec!r} has no lower bound; expected a range such as "
            f"{AIRFLOW_RANGE}"
        )
    return max(floors)


def require_airflow_templates(spec: str) -> None:
    floor = airflow_floor(spec)
    padded = tuple(floor) + (0,) * (3 - len(floor))
    if padded < AIRFLOW_FLOOR:
        minimum = ".".join(map(str, AIRFLOW_FLOOR))
        raise OrchestratorUnsupportedError(
            f"--airflow-version {spec!r} allows Airflow {'.'.join(map(str, floor))}, whose "
            f"templates lack run_id or data_interval_end, which every generated command passes "
            f"to etl-craft; raise the range's lower bound to {minimum} (>={minimum})"
        )


def dag_document(
    metadata: ProjectMetadata,
    pipeline: PipelineRow,
    invocation: Invocation,
    airflow_version: str = AIRFLOW_RANGE,
    gate_wait_minutes: int = 60,
) -> DagDocument:
    """The YAML document of ``pipeline``; OrchestratorUnsupportedError for what Airflow can't do."""
    require_airflow_templates(airflow_version)
    require_supported(metadata, pipeline)
    steps: list[dict[str, Any]] = [
        _control(INIT, invocation.command(pipeline.code, "--init-only"), [], "all_success")
    ]
    timeout = max(gate_wait_minutes, 1) * 60
    gates = [
        _sensor(
            f"__wait__{d.upstream_pipeline_code}",
            d.upstream_pipeline_code,
            FINALIZE,
            d.type,
            timeout,
        )
        for d in metadata.pipeline_dependencies_of(pipeline.pipeline_id)
        if d.upstream_pipeline_active
    ]
    steps += gates
    admitted = [gate["task_id"] for gate in gates] or [INIT]
    tasks = metadata.tasks_of(pipeline.pipeline_id)
    for task in tasks:
        steps += _task_steps(metadata, pipeline.code, task, invocation, admitted, timeout)
    finalize = invocation.command(pipeline.code, "--finalize-only")
    steps.append(
        _control(FINALIZE, finalize, [s["task_id"] for s in steps[1:]] or [INIT], "all_done")
    )
    return DagDocument(pipeline.code, _document(metadata, pipeline, airflow_version, steps))


def _document(
    metadata: ProjectMetadata,
    pipeline: PipelineRow,
    airflow_version: str,
    steps: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "etl_craft_yaml_version": YAML_VERSION,
        "generated_by": f"etl-craft {__version__}",
        "airflow_version": airflow_version,
        "project": metadata.project_code,
        "dag": {
            "dag_id": pipeline.code,
            "description": pipeline.description or f"etl-craft pipeline {pipeline.code}",
            "schedule": pipeline.run_schedule,
            "timezone": pipeline.schedule_timezone or metadata.timezone,
            "start_date": START_DATE,
            "catchup": False,
            "max_active_runs": 1,
            "tags": ["etl-craft", metadata.project_code],
        },
        "env": dict(ENVIRONMENT),
        "tasks": steps,
    }


def _task_steps(
    metadata: ProjectMetadata,
    pipeline_code: str,
    task: TaskRow,
    invocation: Invocation,
    admitted: list[str],
    timeout: int,
) -> list[dict[str, Any]]:
    edges = [d for d in metadata.dependencies_of(task.task_id) if d.upstream_task_active]
    own = [d for d in edges if d.upstream_pipeline_id == task.pipeline_id]
    sensors = [
        _sensor(
            f"__wait__{d.upstream_pipeline_code}__{d.upstream_task_code}",
            d.upstream_pipeline_code,
            d.upstream_task_code,
            d.type,
            timeout,
            INIT,
        )
        for d in edges
        if d.upstream_pipeline_id != task.pipeline_id
    ]
    upstream = sorted(d.upstream_task_code for d in own) or list(admitted)
    upstream += [sensor["task_id"] for sensor in sensors]
    kind = own[0].type if own else DependencyType.SUCCESS
    condition = task.run_condition if own else RunCondition.ALL
    step = {
        "task_id": task.code,
        "kind": "task",
        "bash_command": invocation.command(pipeline_code, "--task", task.code),
        "trigger_rule": TRIGGER_RULES[(kind, condition)],
        "upstream": upstream,
    }
    return [*sensors, step]


def _control(task_id: str, command: str, upstream: list[str], rule: str) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "kind": "init" if task_id == INIT else "finalize",
        "bash_command": command,
        "trigger_rule": rule,
        "upstream": upstream,
    }


def _sensor(
    task_id: str,
    dag_id: str,
    external_task: str,
    kind: DependencyType,
    timeout: int,
    *upstream: str,
) -> dict[str, Any]:
    allowed, failed = SENSED_STATES[kind]
    return {
        "task_id": task_id,
        "kind": "sensor",
        "external_dag_id": dag_id,
        "external_task_id": external_task,
        "allowed_states": list(allowed),
        "failed_states": list(failed),
        "timeout_seconds": timeout,
        "poke_interval_seconds": SENSOR_POKE_SECONDS,
        "trigger_rule": "all_success",
        "upstream": list(upstream) or [INIT],
    }


def dag_schema() -> dict[str, Any]:
    text = (files("etl_craft.operations") / "schemas" / "dag-yaml-v1.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded
