"""The objects the metadata editor changes: their CFG_ table, their key of codes, their fields.

Forms are built from these specs, and the SQL of an edit from the same specs, so a field can't
be offered by one and unknown to the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from etl_craft.core.enums import DependencyType, EditKind, Handler, RunCondition
from etl_craft.handlers.rules.model import RuleType
from etl_craft.warehouse.literals import ParameterKind

FieldValue = str | int | None
FLAG = ("Y", "N")
PARAMETER_TYPES = tuple(ParameterKind)


@dataclass(frozen=True)
class FieldSpec:
    column: str
    integer: bool = False
    choices: tuple[str, ...] = ()
    required: bool = False  # a new row needs a value (NOT NULL without a default)
    long_text: bool = False  # shown as a text area


@dataclass(frozen=True)
class KindSpec:
    kind: EditKind
    label: str  # how messages and file names name the object
    table: str
    id_column: str
    key_names: tuple[str, ...]  # the codes that find the object, outermost first
    parents: tuple[str, ...]  # the row's columns holding its parents' ids
    parent_ids: tuple[str, ...]  # where metadata_edit_sql's parent source has those ids
    codes: tuple[tuple[str, str], ...]  # key names stored in the row itself, and their column
    fields: tuple[FieldSpec, ...]
    has_active_flag: bool = True
    removable: bool = False  # parameters have no ACTIVE_FLAG: removing deletes the row

    @property
    def plural(self) -> str:
        return self.label[:-1] + "ies" if self.label.endswith("y") else self.label + "s"

    def field(self, column: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.column == column), None)


def _choices(enum: type[StrEnum]) -> tuple[str, ...]:
    return tuple(member.value for member in enum)


ACTIVE = FieldSpec("ACTIVE_FLAG", choices=FLAG)
DEPENDENCY_FIELDS = (
    FieldSpec("DEPENDENCY_TYPE", choices=_choices(DependencyType)),
    FieldSpec("CONSUME_REPAIRS", choices=FLAG),
    ACTIVE,
)

SPECS = (
    KindSpec(
        EditKind.PIPELINE,
        "pipeline",
        "CFG_PIPELINES",
        "PIPELINE_ID",
        ("pipeline",),
        ("PROJECT_ID",),
        ("j.PROJECT_ID",),
        (("pipeline", "PIPELINE_CODE"),),
        (
            FieldSpec("DESCRIPTION", long_text=True),
            FieldSpec("RUN_SCHEDULE"),
            FieldSpec("SCHEDULE_TIMEZONE"),
            FieldSpec("CATCHUP", choices=FLAG),
            FieldSpec("MAX_CATCHUP_RUNS", integer=True),
            FieldSpec("OVERLAP_POLICY", choices=("SKIP", "QUEUE")),
            FieldSpec("PRIORITY", integer=True),
            FieldSpec("MAX_PARALLEL_TASKS", integer=True),
            FieldSpec("SLA_MINUTES", integer=True),
            ACTIVE,
        ),
    ),
    KindSpec(
        EditKind.PIPELINE_PARAMETER,
        "pipeline parameter",
        "CFG_PIPELINE_PARAMETERS",
        "PIPELINE_PARAMETER_ID",
        ("pipeline", "parameter"),
        ("PIPELINE_ID",),
        ("p.PIPELINE_ID",),
        (("parameter", "PARAMETER_NAME"),),
        (
            FieldSpec("PARAMETER_VALUE", long_text=True),
            FieldSpec("PARAMETER_TYPE", choices=PARAMETER_TYPES),
        ),
        has_active_flag=False,
        removable=True,
    ),
    KindSpec(
        EditKind.PIPELINE_DEPENDENCY,
        "pipeline dependency",
        "CFG_PIPELINE_DEPENDENCY",
        "PIPELINE_DEPENDENCY_ID",
        ("pipeline", "upstream_pipeline"),
        ("PIPELINE_ID", "DEPENDS_ON_PIPELINE_ID"),
        ("p.PIPELINE_ID", "up.PIPELINE_ID"),
        (),
        DEPENDENCY_FIELDS,
    ),
    KindSpec(
        EditKind.TASK,
        "task",
        "CFG_TASKS",
        "TASK_ID",
        ("pipeline", "task"),
        ("PIPELINE_ID",),
        ("p.PIPELINE_ID",),
        (("task", "TASK_CODE"),),
        (
            FieldSpec("DESCRIPTION", long_text=True),
            FieldSpec("HANDLER", choices=_choices(Handler), required=True),
            FieldSpec("RUN_CONDITION", choices=_choices(RunCondition)),
            FieldSpec("REQUIRED_COUNT", integer=True),
            ACTIVE,
        ),
    ),
    KindSpec(
        EditKind.TASK_PARAMETER,
        "task parameter",
        "CFG_TASK_PARAMETERS",
        "TASK_PARAMETER_ID",
        ("pipeline", "task", "parameter"),
        ("TASK_ID",),
        ("t.TASK_ID",),
        (("parameter", "PARAMETER_NAME"),),
        (FieldSpec("PARAMETER_VALUE", long_text=True),),
        has_active_flag=False,
        removable=True,
    ),
    KindSpec(
        EditKind.TASK_DEPENDENCY,
        "task dependency",
        "CFG_TASK_DEPENDENCY",
        "TASK_DEPENDENCY_ID",
        ("pipeline", "task", "upstream_pipeline", "upstream_task"),
        ("TASK_ID", "DEPENDS_ON_TASK_ID"),
        ("t.TASK_ID", "u.TASK_ID"),
        (),
        DEPENDENCY_FIELDS,
    ),
    KindSpec(
        EditKind.BUSINESS_RULE,
        "business rule",
        "CFG_BUSINESS_RULES",
        "BUSINESS_RULE_ID",
        ("pipeline", "task", "rule"),
        ("TASK_ID",),
        ("t.TASK_ID",),
        (("rule", "RULE_CODE"),),
        (
            FieldSpec("RULE_TYPE", choices=_choices(RuleType), required=True),
            FieldSpec("TARGET_TABLE", required=True),
            FieldSpec("KEY_COLUMNS", required=True),
            FieldSpec("RULE_SQL", required=True, long_text=True),
            FieldSpec("WAVE", integer=True),
            FieldSpec("DESCRIPTION", long_text=True),
            ACTIVE,
        ),
    ),
)
_BY_KIND = {spec.kind: spec for spec in SPECS}


def spec_of(kind: EditKind) -> KindSpec:
    return _BY_KIND[kind]
