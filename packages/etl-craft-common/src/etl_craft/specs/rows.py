"""The CFG_ rows a pipeline spec stands for, one SpecRow per object, every field filled.

A field the spec leaves out holds the column's default, so that the rows compare with the
Engine DB's field by field. Objects that are not active are left out: to the Engine DB an
inactive object is one that no longer runs, and the editor reads active objects only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from etl_craft.core.enums import EditKind
from etl_craft.specs.model import (
    FieldValue,
    PipelineSpec,
    RuleSpec,
    TaskDependencySpec,
    TaskSpec,
)

# Parents before children: the order new rows are inserted in (and the reverse for removal).
KIND_ORDER = (
    EditKind.PIPELINE,
    EditKind.PIPELINE_PARAMETER,
    EditKind.PIPELINE_DEPENDENCY,
    EditKind.TASK,
    EditKind.TASK_PARAMETER,
    EditKind.TASK_DEPENDENCY,
    EditKind.BUSINESS_RULE,
)
# The column defaults of schema.sql, for the fields a spec may leave out.
DEFAULTS: Mapping[str, Mapping[str, FieldValue]] = {
    EditKind.PIPELINE: {
        "DESCRIPTION": None,
        "RUN_SCHEDULE": None,
        "SCHEDULE_TIMEZONE": None,
        "CATCHUP": "N",
        "MAX_CATCHUP_RUNS": 1,
        "OVERLAP_POLICY": "SKIP",
        "PRIORITY": 0,
        "MAX_PARALLEL_TASKS": None,
        "SLA_MINUTES": None,
        "ACTIVE_FLAG": "Y",
    },
    EditKind.PIPELINE_PARAMETER: {"PARAMETER_VALUE": None, "PARAMETER_TYPE": "STRING"},
    EditKind.PIPELINE_DEPENDENCY: {
        "DEPENDENCY_TYPE": "SUCCESS",
        "CONSUME_REPAIRS": "Y",
        "ACTIVE_FLAG": "Y",
    },
    EditKind.TASK: {
        "DESCRIPTION": None,
        "HANDLER": None,
        "RUN_CONDITION": "ALL",
        "REQUIRED_COUNT": None,
        "ACTIVE_FLAG": "Y",
    },
    EditKind.TASK_PARAMETER: {"PARAMETER_VALUE": None},
    EditKind.TASK_DEPENDENCY: {
        "DEPENDENCY_TYPE": "SUCCESS",
        "CONSUME_REPAIRS": "Y",
        "ACTIVE_FLAG": "Y",
    },
    EditKind.BUSINESS_RULE: {
        "RULE_TYPE": None,
        "TARGET_TABLE": None,
        "KEY_COLUMNS": None,
        "RULE_SQL": None,
        "WAVE": 1,
        "DESCRIPTION": None,
        "ACTIVE_FLAG": "Y",
    },
}


@dataclass(frozen=True)
class SpecRow:
    kind: str
    key: Mapping[str, str]  # the codes that find the row, as the metadata editor names them
    fields: Mapping[str, FieldValue]  # every field of the kind

    @property
    def identity(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        return self.kind, tuple(self.key.items())

    def non_default(self) -> dict[str, FieldValue]:
        """The fields a new row needs written: those that differ from the column default."""
        defaults = DEFAULTS[self.kind]
        return {c: v for c, v in self.fields.items() if v is not None and v != defaults.get(c)}


def spec_rows(
    spec: PipelineSpec, inferred: Mapping[str, tuple[TaskDependencySpec, ...]] | None = None
) -> tuple[SpecRow, ...]:
    """The spec's rows; ``inferred`` adds dependencies by task code to those the spec states."""
    inferred = inferred or {}
    key = {"pipeline": spec.code}
    rows = [_row(EditKind.PIPELINE, key, spec.settings)]
    if not spec.active:
        return tuple(rows)  # an inactive pipeline's objects are left as they are
    rows += [
        _row(
            EditKind.PIPELINE_PARAMETER,
            {**key, "parameter": p.name},
            {"PARAMETER_VALUE": p.value, "PARAMETER_TYPE": p.type},
        )
        for p in spec.parameters
    ]
    rows += [
        _row(
            EditKind.PIPELINE_DEPENDENCY,
            {**key, "upstream_pipeline": d.upstream_pipeline},
            {"DEPENDENCY_TYPE": d.type.value, "CONSUME_REPAIRS": _flag(d.consume_repairs)},
        )
        for d in spec.depends_on
    ]
    for task in spec.tasks:
        if task.active:
            rows += _task_rows(spec.code, task, inferred.get(task.code, ()))
    return tuple(rows)


def _task_rows(
    pipeline: str, task: TaskSpec, inferred: Iterable[TaskDependencySpec]
) -> list[SpecRow]:
    key = {"pipeline": pipeline, "task": task.code}
    fields = {
        "DESCRIPTION": task.description,
        "HANDLER": task.handler.value,
        "RUN_CONDITION": task.run_condition.value,
        "REQUIRED_COUNT": task.required_count,
    }
    rows = [_row(EditKind.TASK, key, fields)]
    rows += [
        _row(EditKind.TASK_PARAMETER, {**key, "parameter": name}, {"PARAMETER_VALUE": value})
        for name, value in sorted(task.parameters.items())
    ]
    rows += [_dependency(key, d) for d in (*task.depends_on, *inferred)]
    rows += [_rule(key, rule) for rule in task.rules if rule.active]
    return rows


def _dependency(key: Mapping[str, str], dependency: TaskDependencySpec) -> SpecRow:
    return _row(
        EditKind.TASK_DEPENDENCY,
        {
            **key,
            "upstream_pipeline": dependency.upstream_pipeline,
            "upstream_task": dependency.upstream_task,
        },
        {
            "DEPENDENCY_TYPE": dependency.type.value,
            "CONSUME_REPAIRS": _flag(dependency.consume_repairs),
        },
    )


def _rule(key: Mapping[str, str], rule: RuleSpec) -> SpecRow:
    return _row(
        EditKind.BUSINESS_RULE,
        {**key, "rule": rule.code},
        {
            "RULE_TYPE": rule.rule_type,
            "TARGET_TABLE": rule.target_table,
            "KEY_COLUMNS": rule.key_columns,
            "RULE_SQL": rule.rule_sql,
            "WAVE": rule.wave,
            "DESCRIPTION": rule.description,
        },
    )


def _row(kind: str, key: Mapping[str, str], given: Mapping[str, FieldValue]) -> SpecRow:
    return SpecRow(kind, dict(key), {**DEFAULTS[kind], **given})


def _flag(value: bool) -> str:
    return "Y" if value else "N"
