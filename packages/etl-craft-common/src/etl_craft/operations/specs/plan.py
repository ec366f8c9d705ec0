"""etl-craft plan: what the project's pipeline specs would change in the Engine DB.

The plan is the project's next migration file, rehearsed as migrate would apply it (nothing is
written), with what a reviewer needs beside it: the CFG_ rows added, changed and removed, the
DAG's edges that change, every dependency inferred from lineage and what became of it, the
tables and columns downstream of each task whose output changes, and the next ticks of every
schedule that changes. ``write_plan`` writes the file; migrate applies it as any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from etl_craft.config.project import Project
from etl_craft.core.errors import MetadataError, UsageError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.lineage import StoredTrace, stored_traces
from etl_craft.enginedb.metadata import ProjectMetadata, read_project_metadata
from etl_craft.lineage import LineageGraph
from etl_craft.lineage.build import LineageBuild, build_lineage
from etl_craft.operations.context import OperationContext
from etl_craft.operations.lineage import sql_dialect
from etl_craft.operations.metadata.edit_checks import MetadataEdit
from etl_craft.operations.metadata.edit_kinds import FieldValue
from etl_craft.operations.metadata.edits import preview_edit, write_new_file
from etl_craft.operations.migrate_validation import failures_of
from etl_craft.operations.specs.diff import SWITCHED_OFF, PipelineRows, current_rows, edits_of
from etl_craft.operations.specs.effects import (
    AffectedTask,
    EdgeChange,
    PipelineTicks,
    affected_tasks,
    dag_changes,
    schedule_ticks,
    spec_metadata,
)
from etl_craft.operations.specs.findings import spec_refusal
from etl_craft.operations.validate.findings import Finding, Severity
from etl_craft.operations.validate.report import subject_of
from etl_craft.operations.validate.sources import check_sources
from etl_craft.specs.inference import InferredEdge, TableUse, infer_edges, written_edges
from etl_craft.specs.loader import load_specs
from etl_craft.specs.model import PipelineSpec
from etl_craft.specs.rows import spec_rows


@dataclass(frozen=True)
class RowChange:
    """One CFG_ object the file adds, changes or removes; ``before`` and ``after`` hold the
    fields that differ (every field the file writes, for a new object)."""

    operation: str  # add, change, remove (deleted, or switched off with ACTIVE_FLAG N)
    kind: str
    key: dict[str, str]
    before: dict[str, FieldValue] | None
    after: dict[str, FieldValue] | None


@dataclass(frozen=True)
class SpecPlan:
    schema: ClassVar[str] = "etl-craft/plan/1"
    project: str
    pipelines: tuple[str, ...]  # the pipelines the specs describe
    changes: tuple[RowChange, ...]
    dag: tuple[EdgeChange, ...]
    inferred: tuple[InferredEdge, ...]
    untraced: tuple[str, ...]  # "pipeline.task: why": no dependency is inferred for them
    affected: tuple[AffectedTask, ...]
    ticks: tuple[PipelineTicks, ...]
    file_name: str | None  # the migration file the plan is; None when nothing changes
    sql: str | None
    refusal: str | None  # why the file would be refused by migrate; None when it applies
    written: Path | None = None  # where --write put the file


def plan_specs(ctx: OperationContext, *, now: datetime | None = None) -> SpecPlan:
    """The plan of the project's pipelines/ folder against the Engine DB; writes nothing."""
    specs = load_specs(_pipelines_dir(ctx))
    if not specs:
        raise UsageError(
            f"found no pipeline spec in {_pipelines_dir(ctx)}; expected pipelines/<code>.yml "
            "files: write one (see the pipeline specs guide) or use migrations/ alone"
        )
    planning = _planning(ctx, specs)
    edits, build, codes = planning.edits, planning.build, {spec.code for spec in specs}
    effects = _Effects(
        tuple(f"{t.name}: {t.problem}" for t in build.graph.untraced() if t.pipeline_code in codes),
        dag_changes(edits),
        affected_tasks(edits, build.graph, planning.after, _changed_sql(build, planning.stored)),
        schedule_ticks(edits, planning.metadata, planning.after, now or utc_now()),
        _source_failures(ctx, planning.after, codes),
    )
    return _planned(ctx, specs, edits, planning.inferred, effects)


def planned_edits(
    ctx: OperationContext, specs: tuple[PipelineSpec, ...]
) -> tuple[MetadataEdit, ...]:
    """The edits plan would write for ``specs``: the project's, or a changed copy of them."""
    return _planning(ctx, specs).edits


@dataclass(frozen=True)
class _Planning:
    metadata: ProjectMetadata
    stored: Mapping[int, StoredTrace]
    after: ProjectMetadata  # the metadata once the specs are applied
    build: LineageBuild
    inferred: tuple[InferredEdge, ...]
    edits: tuple[MetadataEdit, ...]


def _planning(ctx: OperationContext, specs: tuple[PipelineSpec, ...]) -> _Planning:
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        stored = stored_traces(conn, metadata.project_id)
        current = {s.code: current_rows(conn, ctx.project_code, s.code) for s in specs}
    after = spec_metadata(metadata, specs)
    build = build_lineage(after, ctx.project, sql_dialect(ctx), stored=stored)
    inferred = tuple(edge for spec in specs for edge in infer_edges(spec, _uses(spec, build.graph)))
    rows = [
        PipelineRows(s.code, spec_rows(s, written_edges(_of(inferred, s))), current[s.code])
        for s in specs
    ]
    return _Planning(metadata, stored, after, build, inferred, edits_of(rows))


def _changed_sql(build: LineageBuild, stored: Mapping[int, StoredTrace]) -> set[int]:
    """The tasks whose SELECT differs from the one their stored lineage trace was made of."""
    return {
        record.task_id
        for record in build.changed
        if record.task_id in stored and stored[record.task_id].sql_hash != record.sql_hash
    }


def write_plan(
    ctx: OperationContext, *, now: datetime | None = None, validated: bool = True
) -> SpecPlan:
    """Write the plan as the project's next migration file; migrate applies it.

    Unless ``validated`` is False, a file migrate would refuse is not written. Without
    validation the file's header records the bypass and what validate found, so a reviewer
    sees it, and migrate applies it only with --no-validate too.
    """
    plan = plan_specs(ctx, now=now)
    if plan.file_name is None or plan.sql is None:
        return plan
    if plan.refusal is not None and validated:
        raise MetadataError(
            f"the plan's migration {plan.file_name} would be refused by migrate: "
            f"{plan.refusal}; fix the specs and run etl-craft plan again, or write it as it "
            "is with etl-craft plan --write --no-validate, which is recorded in its header"
        )
    sql = plan.sql if validated else _unvalidated(ctx, plan.refusal) + plan.sql
    path = write_new_file(_migrations_dir(ctx), plan.file_name, sql)
    return replace(plan, sql=sql, written=path)


def _unvalidated(ctx: OperationContext, refusal: str | None) -> str:
    found = refusal or "validate found no failure when it was written"
    lines = [
        f"Written by etl-craft plan --write --no-validate, for {ctx.actor.name}: not validated.",
        "Apply it with etl-craft migrate --no-validate. What validate found:",
        *found.splitlines(),
    ]
    return "".join(f"-- {line}\n" for line in lines)


@dataclass(frozen=True)
class _Effects:
    untraced: tuple[str, ...]
    dag: tuple[EdgeChange, ...]
    affected: tuple[AffectedTask, ...]
    ticks: tuple[PipelineTicks, ...]
    # What the specs' tasks run that a run would fail on (a SELECT that does not parse), found
    # even when no CFG_ row changes: a SQL file is edited without its spec.
    failures: tuple[Finding, ...]


def _source_failures(
    ctx: OperationContext, after: ProjectMetadata, codes: set[str]
) -> tuple[Finding, ...]:
    scope = frozenset(p.pipeline_id for p in after.pipelines if p.active and p.code in codes)
    found = check_sources(subject_of(ctx, after, scope))
    return tuple(f for f in found if f.severity is Severity.FAIL)


def _planned(
    ctx: OperationContext,
    specs: tuple[PipelineSpec, ...],
    edits: tuple[MetadataEdit, ...],
    inferred: tuple[InferredEdge, ...],
    effects: _Effects,
) -> SpecPlan:
    file_name = sql = refusal = None
    failures = list(effects.failures)
    if edits:
        preview = preview_edit(ctx, edits, title=plan_title(edits))
        file_name, sql, refusal = preview.file_name, preview.sql, preview.refusal
        if preview.validation is not None:
            failures += [f for f in failures_of(preview.validation) if f not in failures]
    if failures:
        refusal = spec_refusal(specs, failures)
    return SpecPlan(
        project=ctx.project_code,
        pipelines=tuple(spec.code for spec in specs),
        changes=tuple(_row_change(edit) for edit in edits),
        dag=effects.dag,
        inferred=inferred,
        untraced=effects.untraced,
        affected=effects.affected,
        ticks=effects.ticks,
        file_name=file_name,
        sql=sql,
        refusal=refusal,
    )


def _row_change(edit: MetadataEdit) -> RowChange:
    before = None if edit.before is None else dict(edit.before)
    after = None if edit.after is None else dict(edit.after)
    verb = "remove" if edit.after == SWITCHED_OFF else edit.verb
    return RowChange(verb, edit.kind.value, dict(edit.key), before, after)


def plan_title(edits: tuple[MetadataEdit, ...]) -> str:
    """What names the plan's migration file: the pipelines it touches."""
    return "plan_" + "_".join(dict.fromkeys(edit.key["pipeline"] for edit in edits))


def _uses(spec: PipelineSpec, graph: LineageGraph) -> dict[str, TableUse]:
    return {
        task.task_code: TableUse(task.reads, task.target)
        for task in graph.tasks
        if task.pipeline_code == spec.code
    }


def _of(edges: tuple[InferredEdge, ...], spec: PipelineSpec) -> tuple[InferredEdge, ...]:
    return tuple(edge for edge in edges if edge.pipeline == spec.code)


def _pipelines_dir(ctx: OperationContext) -> Path:
    return _project_root(ctx).pipelines_dir


def _migrations_dir(ctx: OperationContext) -> Path:
    return _project_root(ctx).migrations_dir


def _project_root(ctx: OperationContext) -> Project:
    if ctx.project is None:
        raise UsageError(
            "plan reads the pipelines/ folder of a project, and this context has none; run "
            "from a project folder or pass --config"
        )
    return ctx.project
