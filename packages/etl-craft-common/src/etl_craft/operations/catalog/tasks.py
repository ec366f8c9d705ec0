"""The catalog's tasks, business rules and ingestion scripts, from metadata and lineage."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from etl_craft.config.project import Project, relative_path_problem
from etl_craft.core.enums import Handler
from etl_craft.core.redaction import Redactor, SensitiveNames, mask_parameter, parameter_secrets
from etl_craft.enginedb.catalog_site import Descriptions
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage import LineageGraph, TaskLineage
from etl_craft.lineage.sources import active_tasks, name_key
from etl_craft.operations.catalog.views import (
    Parameter,
    RuleEntry,
    ScriptEntry,
    TaskEntry,
    TaskRunEntry,
    Upstream,
)
from etl_craft.warehouse.literals import (
    ParameterKind,
    parameter_kind,
    read_value,
    sql_identifier,
    sql_literal,
)
from etl_craft.warehouse.substitution import IDENTIFIER_PREFIX, PARAMETER_PREFIX, substitute

KEY_PARAMETERS = ("MERGE_KEY", "MERGE_COMPARE_COLUMNS", "MERGE_DEDUPE_ORDER", "ROW_ID")


@dataclass(frozen=True)
class TaskSources:
    """Where a task's SQL is read from, and what must be masked before it is shown."""

    project: Project | None
    names: SensitiveNames
    secrets: frozenset[str]  # those the configuration resolved


def task_names(metadata: ProjectMetadata) -> dict[int, str]:
    """pipeline.task of every active task of an active pipeline, by task id."""
    codes = {p.pipeline_id: p.code for p in metadata.pipelines}
    return {t.task_id: f"{codes[t.pipeline_id]}.{t.code}" for t in active_tasks(metadata)}


def rule_entries(
    metadata: ProjectMetadata, descriptions: Descriptions, dialect: str
) -> tuple[RuleEntry, ...]:
    names = task_names(metadata)
    return tuple(
        RuleEntry(
            name=f"{names[rule.task_id]}.{rule.code}",
            code=rule.code,
            task=names[rule.task_id],
            rule_type=rule.rule_type,
            table=name_key(rule.target_table, dialect) or rule.target_table,
            key_columns=rule.key_columns,
            rule_sql=rule.rule_sql,
            wave=rule.wave,
            description=descriptions.rules.get(rule.rule_id),
        )
        for rule in metadata.business_rules
        if rule.task_id in names
    )


def task_entries(
    metadata: ProjectMetadata,
    descriptions: Descriptions,
    graph: LineageGraph,
    rules: tuple[RuleEntry, ...],
    task_runs: Mapping[int, tuple[TaskRunEntry, ...]],
    sources: TaskSources,
) -> tuple[TaskEntry, ...]:
    names = task_names(metadata)
    lineages = {t.task_id: t for t in graph.tasks}
    upstream = _upstream(metadata)
    redactor = _redactor(metadata, sources)
    own_rules: dict[str, list[RuleEntry]] = defaultdict(list)
    for rule in rules:
        own_rules[rule.task].append(rule)
    return tuple(
        _entry(
            task,
            names[task.task_id],
            descriptions.tasks.get(task.task_id),
            lineages.get(task.task_id),
            upstream[task.task_id],
            own_rules[names[task.task_id]],
            task_runs.get(task.task_id, ()),
            _shown_sql(task, metadata, sources.project, redactor),
            sources.names,
        )
        for task in active_tasks(metadata)
    )


def _entry(
    task: TaskRow,
    name: str,
    description: str | None,
    lineage: TaskLineage | None,
    upstream: list[Upstream],
    rules: list[RuleEntry],
    runs: tuple[TaskRunEntry, ...],
    sql: str | None,
    names: SensitiveNames,
) -> TaskEntry:
    return TaskEntry(
        name=name,
        pipeline_code=name.split(".", 1)[0],
        code=task.code,
        handler=task.handler.value,
        description=description,
        action=task.parameter("ACTION"),
        keys=tuple(Parameter(k, task.parameter(k)) for k in KEY_PARAMETERS if task.parameter(k)),
        sql=sql,
        parameters=tuple(
            Parameter(n, mask_parameter(n, v, names)) for n, v in sorted(task.parameters.items())
        ),
        upstream=tuple(upstream),
        writes=lineage.target if lineage else None,
        reads=lineage.reads if lineage else (),
        checks=tuple(sorted({r.table for r in rules})),
        rules=tuple(r.name for r in rules),
        script=task.parameter("SCRIPT") if task.handler is Handler.PYTHON else None,
        lineage_problem=lineage.problem if lineage else None,
        runs=runs,
    )


def _upstream(metadata: ProjectMetadata) -> dict[int, list[Upstream]]:
    pipeline_of = {t.task_id: t.pipeline_id for t in metadata.tasks}
    found: dict[int, list[Upstream]] = defaultdict(list)
    for d in metadata.task_dependencies:
        name = f"{d.upstream_pipeline_code}.{d.upstream_task_code}"
        cross = d.upstream_pipeline_id != pipeline_of.get(d.task_id)
        found[d.task_id].append(Upstream(name, d.type, cross))
    return found


def _redactor(metadata: ProjectMetadata, sources: TaskSources) -> Redactor:
    values = [(n, v) for t in metadata.tasks for n, v in t.parameters.items()]
    values += [(p.name, p.value) for p in metadata.pipeline_parameters]
    return Redactor(parameter_secrets(values, sources.names) | sources.secrets)


def _shown_sql(
    task: TaskRow, metadata: ProjectMetadata, project: Project | None, redactor: Redactor
) -> str | None:
    """The task's SELECT as a run of its pipeline reads it: what the pipeline's definition gives
    put in; the tokens only a run has values for ($$run_date, $$pipeline_run_id, ...) stay as
    written."""
    if task.handler is not Handler.SQL:
        return None
    text = task.parameter("SOURCE_SQL")
    file = task.parameter("SOURCE_SQL_FILE")
    if text is None and file is not None and project is not None:
        path = project.sql_files_dir.joinpath(*Path(file.replace("\\", "/")).parts)
        if relative_path_problem(file) is None and path.is_file():
            text = path.read_text(encoding="utf-8")
    if text is None:
        return None
    return redactor(substitute(text, _definition_tokens(metadata, task.pipeline_id)))


def _definition_tokens(metadata: ProjectMetadata, pipeline_id: int) -> dict[str, str]:
    """The pipeline's id, code and parameters, as a run writes them (in no dialect's quirks)."""
    pipeline = metadata.pipeline_by_id(pipeline_id)
    values = {
        "pipeline_id": str(pipeline_id),
        "pipeline_code": sql_literal(ParameterKind.STRING, pipeline.code, ""),
    }
    for parameter in metadata.pipeline_parameters:
        if parameter.pipeline_id != pipeline_id:
            continue
        kind = parameter_kind(parameter.type)
        try:
            literal = sql_literal(kind, read_value(kind, parameter.value), "")
        except ValueError:
            continue  # validate reports the value; its token stays as written
        values[PARAMETER_PREFIX + parameter.name] = literal
        if kind is ParameterKind.IDENTIFIER and parameter.value is not None:
            values[IDENTIFIER_PREFIX + parameter.name] = sql_identifier(parameter.value, "")
    return values


def script_entries(tasks: tuple[TaskEntry, ...]) -> tuple[ScriptEntry, ...]:
    found: dict[str, list[TaskEntry]] = defaultdict(list)
    for task in tasks:
        if task.script is not None:
            found[task.script].append(task)
    return tuple(
        ScriptEntry(
            path,
            tuple(t.name for t in users),
            tuple(sorted({t.writes for t in users if t.writes})),
        )
        for path, users in sorted(found.items())
    )
