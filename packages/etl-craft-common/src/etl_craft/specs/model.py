"""The pipeline spec: what one ``pipelines/<code>.yml`` describes, and how its document is read.

The document has already passed the JSON schema (schema.json) when it reaches this module, so
only what the schema can't say is checked here (a shorthand and its parameter both given).

``pipeline_spec`` reads one pipeline's document; specs.templates decides which documents a file
holds (itself, or one per instance of a template), so nothing downstream of ``PipelineSpec``
knows templates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.core.errors import MetadataError
from etl_craft.specs.positions import KeyPath, dotted, line_of, pointer_path, shown
from etl_craft.warehouse.substitution import IDENTIFIER_PREFIX, parameters_used, substitute

FieldValue = str | int | None
Document = Mapping[str, Any]

# Task keys that stand for one CFG_TASK_PARAMETERS row each.
TASK_SHORTHANDS = {
    "action": "ACTION",
    "sql": "SOURCE_SQL_FILE",
    "source_sql": "SOURCE_SQL",
    "target": "TARGET_OBJECT",
    "keys": "MERGE_KEY",
    "script": "SCRIPT",
    "input_params": "INPUT_PARAMS",
    "offset_type": "OFFSET_TYPE",
}
# Task parameters that name a table: `$$ident.NAME` in them is the pipeline's name.
NAMED_PARAMETERS = ("TARGET_OBJECT", "TARGET_TABLE", "SLICE_TABLE")
# The slice: keys of a task's slice of a shared table (lineage.slices).
SLICE_KEYS = {"column": "SLICE_COLUMN", "value": "SLICE_VALUE", "table": "SLICE_TABLE"}
# A BUSINESS_RULES task judges the table it names; it writes none.
RULES_TARGET = "TARGET_TABLE"
# The pipeline settings a spec may give, by document key, and their CFG_PIPELINES column.
PIPELINE_SETTINGS = {
    "description": "DESCRIPTION",
    "schedule": "RUN_SCHEDULE",
    "timezone": "SCHEDULE_TIMEZONE",
    "catchup": "CATCHUP",
    "max_catchup_runs": "MAX_CATCHUP_RUNS",
    "overlap_policy": "OVERLAP_POLICY",
    "priority": "PRIORITY",
    "max_parallel_tasks": "MAX_PARALLEL_TASKS",
    "sla_minutes": "SLA_MINUTES",
    "active": "ACTIVE_FLAG",
}


class SpecError(MetadataError):
    """A spec file that can't be read: where, what was found, what was expected, the remedy."""

    def __init__(
        self,
        source: Path,
        path: str,
        found: str,
        expected: str,
        remedy: str,
        line: int | None = None,
    ) -> None:
        self.source = source
        self.path = path or "/"  # where in the document, as /tasks/load/depends_on/0
        self.found = found
        self.expected = expected
        self.remedy = remedy
        self.line = line
        where = shown(source) + (f":{line}" if line is not None else "")
        key = dotted(pointer_path(self.path))
        super().__init__(f"{where} {key}: found {found}; expected {expected}; {remedy}")

    def at(self, lines: Mapping[KeyPath, int]) -> SpecError:
        """The same error, placed at the file's line of its key."""
        if self.line is not None:
            return self
        line = line_of(lines, pointer_path(self.path))
        return SpecError(self.source, self.path, self.found, self.expected, self.remedy, line)


@dataclass(frozen=True)
class TaskDependencySpec:
    upstream_task: str
    upstream_pipeline: str  # the task's own pipeline unless the spec names another
    type: DependencyType = DependencyType.SUCCESS
    consume_repairs: bool = True


@dataclass(frozen=True)
class PipelineDependencySpec:
    upstream_pipeline: str
    type: DependencyType = DependencyType.SUCCESS
    consume_repairs: bool = True


@dataclass(frozen=True)
class RuleSpec:
    code: str
    rule_type: str
    target_table: str
    key_columns: str
    rule_sql: str
    wave: int = 1
    description: str | None = None
    active: bool = True


@dataclass(frozen=True)
class TaskSpec:
    code: str
    handler: Handler
    description: str | None
    run_condition: RunCondition
    required_count: int | None
    active: bool
    parameters: Mapping[str, str]  # CFG_TASK_PARAMETERS, the shorthands included
    depends_on: tuple[TaskDependencySpec, ...]
    rules: tuple[RuleSpec, ...]

    def parameter(self, name: str) -> str | None:
        return self.parameters.get(name)


@dataclass(frozen=True)
class PipelineParameterSpec:
    name: str
    value: str | None
    type: str = "STRING"


@dataclass(frozen=True)
class PipelineSpec:
    code: str
    source: Path
    settings: Mapping[str, FieldValue]  # CFG_PIPELINES columns the spec sets
    parameters: tuple[PipelineParameterSpec, ...]
    depends_on: tuple[PipelineDependencySpec, ...]
    tasks: tuple[TaskSpec, ...]

    @property
    def active(self) -> bool:
        return self.settings.get("ACTIVE_FLAG", "Y") == "Y"

    def task(self, code: str) -> TaskSpec | None:
        return next((task for task in self.tasks if task.code == code), None)


def pipeline_spec(code: str, document: Document, source: Path) -> PipelineSpec:
    settings = {
        column: _setting(document[key])
        for key, column in PIPELINE_SETTINGS.items()
        if key in document
    }
    parameters = tuple(_pipeline_parameter(n, v) for n, v in document.get("parameters", {}).items())
    names = {p.name: p.value for p in parameters if p.type == "IDENTIFIER"}
    tasks = tuple(
        _task(code, task_code, body, source, names)
        for task_code, body in (document.get("tasks") or {}).items()
    )
    _check_upstream_tasks(code, tasks, source)
    return PipelineSpec(
        code=code,
        source=source,
        settings=MappingProxyType(settings),
        parameters=parameters,
        depends_on=tuple(_pipeline_dependency(item) for item in document.get("depends_on", ())),
        tasks=tasks,
    )


def _check_upstream_tasks(pipeline: str, tasks: tuple[TaskSpec, ...], source: Path) -> None:
    """A dependency within the pipeline names one of its tasks (others are checked by migrate)."""
    codes = {task.code for task in tasks}
    for task in tasks:
        for index, dependency in enumerate(task.depends_on):
            if dependency.upstream_pipeline == pipeline and dependency.upstream_task not in codes:
                raise SpecError(
                    source,
                    f"/tasks/{task.code}/depends_on/{index}",
                    repr(dependency.upstream_task),
                    f"a task of pipeline {pipeline}: {', '.join(sorted(codes))}",
                    "correct the code, or write pipeline.task for a task of another pipeline",
                )


def _setting(value: object) -> FieldValue:
    if isinstance(value, bool):
        return _flag(value)
    return value if value is None or isinstance(value, int) else str(value)


def _pipeline_parameter(name: str, value: object) -> PipelineParameterSpec:
    if isinstance(value, Mapping):
        return PipelineParameterSpec(
            name, scalar_text(value.get("value")), value.get("type", "STRING")
        )
    return PipelineParameterSpec(name, scalar_text(value))


def _pipeline_dependency(item: str | Mapping[str, Any]) -> PipelineDependencySpec:
    if isinstance(item, str):
        return PipelineDependencySpec(item)
    return PipelineDependencySpec(
        item["pipeline"],
        DependencyType(item.get("type", DependencyType.SUCCESS)),
        item.get("consume_repairs", True),
    )


def _task(
    pipeline: str, code: str, body: Document, source: Path, names: Mapping[str, str | None]
) -> TaskSpec:
    handler = Handler(body.get("handler", Handler.SQL))
    where = f"/tasks/{code}"
    parameters = _task_parameters(handler, body, source, where)
    for name in NAMED_PARAMETERS:
        if name in parameters:
            parameters[name] = _named(parameters[name], names, source, f"{where}/{name}")
    return TaskSpec(
        code=code,
        handler=handler,
        description=body.get("description"),
        run_condition=RunCondition(body.get("run_condition", RunCondition.ALL)),
        required_count=body.get("required_count"),
        active=body.get("active", True),
        parameters=MappingProxyType(parameters),
        depends_on=tuple(_task_dependency(pipeline, item) for item in body.get("depends_on", ())),
        rules=tuple(
            _rule(rule_code, rule, body, source, f"{where}/rules/{rule_code}")
            for rule_code, rule in (body.get("rules") or {}).items()
        ),
    )


def _task_parameters(handler: Handler, body: Document, source: Path, where: str) -> dict[str, str]:
    named = {name: scalar_text(value) for name, value in (body.get("parameters") or {}).items()}
    found: dict[str, str | None] = {}
    for key, name, value in _shorthands(handler, body):
        if name in named:
            raise SpecError(
                source,
                f"{where}/parameters/{name}",
                f"{name} given twice, as {key!r} and in parameters",
                "each task parameter once",
                f"keep {key}: and remove {name} from parameters",
            )
        found[name] = value
    return {name: value for name, value in {**found, **named}.items() if value is not None}


def _shorthands(handler: Handler, body: Document) -> Iterator[tuple[str, str, str | None]]:
    """(key, parameter, value) of each task key that stands for parameters."""
    for key, shorthand in TASK_SHORTHANDS.items():
        if key in body:
            rules_target = handler is Handler.BUSINESS_RULES and key == "target"
            yield key, RULES_TARGET if rules_target else shorthand, _parameter_value(key, body[key])
    for key, name in SLICE_KEYS.items():
        if key in (body.get("slice") or {}):
            yield "slice", name, scalar_text(body["slice"][key])


def _named(value: str, names: Mapping[str, str | None], source: Path, where: str) -> str:
    """A table name with the pipeline's `$$ident.NAME` tokens replaced by their names."""
    used = parameters_used(value, IDENTIFIER_PREFIX)
    missing = [name for name in used if names.get(name) is None]
    if missing:
        declared = ", ".join(sorted(names)) or "none"
        raise SpecError(
            source,
            where,
            f"{value!r}, which reads $${IDENTIFIER_PREFIX}{missing[0]}",
            f"a parameter of type IDENTIFIER with a value (the pipeline's: {declared})",
            f"declare {missing[0]}: {{type: IDENTIFIER, value: ...}} under parameters:",
        )
    return substitute(value, {IDENTIFIER_PREFIX + n: str(names[n]) for n in used})


def _parameter_value(key: str, value: Any) -> str:
    if key == "input_params":
        return json.dumps(value)
    if key == "keys":
        return _columns(value)
    return str(value)


def _task_dependency(pipeline: str, item: str | Mapping[str, Any]) -> TaskDependencySpec:
    if isinstance(item, str):
        upstream_pipeline, _, task = item.rpartition(".")
        return TaskDependencySpec(task, upstream_pipeline or pipeline)
    return TaskDependencySpec(
        item["task"],
        item.get("pipeline", pipeline),
        DependencyType(item.get("type", DependencyType.SUCCESS)),
        item.get("consume_repairs", True),
    )


def _rule(code: str, rule: Document, task: Document, source: Path, where: str) -> RuleSpec:
    target = (
        rule.get("target") or task.get("target") or (task.get("parameters") or {}).get(RULES_TARGET)
    )
    if target is None:
        raise SpecError(
            source,
            f"{where}/target",
            "no target table",
            "the table the rule judges",
            "give the rule a target:, or its task a target:",
        )
    return RuleSpec(
        code=code,
        rule_type=rule["type"],
        target_table=str(target),
        key_columns=_columns(rule["keys"]),
        rule_sql=rule["sql"].strip(),
        wave=rule.get("wave", 1),
        description=rule.get("description"),
        active=rule.get("active", True),
    )


def _columns(value: str | list[str]) -> str:
    return value if isinstance(value, str) else ", ".join(value)


def scalar_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return _flag(value)
    return str(value)


def _flag(value: bool) -> str:
    return "Y" if value else "N"
