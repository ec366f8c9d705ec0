"""validate's checks of pipelines and their graph: codes, cycles, dependencies, schedules."""

from __future__ import annotations

from collections.abc import Iterator
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from etl_craft.core.cron import cron_problem
from etl_craft.core.enums import DependencyType, Handler, RunCondition
from etl_craft.core.graph import DependencyGraph, PipelineEdge, TaskEdge, TaskNode
from etl_craft.core.text import CODE_RULE, is_code
from etl_craft.enginedb.metadata import TaskDependencyRow, TaskRow
from etl_craft.operations.validate.findings import Finding, Subject
from etl_craft.warehouse.literals import parameter_kind, value_problem

# Handlers whose task runs never report rows written, so a HAS_DATA edge on them is never met.
_ROWLESS_HANDLERS = (Handler.EMAIL_ALERT, Handler.BUSINESS_RULES)


def check_graph(subject: Subject) -> list[Finding]:
    return [
        *_codes(subject),
        *_cycles_within(subject),
        *_cycles_between(subject),
        *_cycles_across_projects(subject),
        *_inactive_dependencies(subject),
        *_run_conditions(subject),
        *_has_data(subject),
        *_schedules(subject),
        *_pipeline_parameters(subject),
    ]


def _codes(subject: Subject) -> Iterator[Finding]:
    remedy = f"rename it to {CODE_RULE}, in a new migration"
    for pipeline in subject.pipelines():
        if not is_code(pipeline.code):
            message = f"pipeline code {pipeline.code!r} breaks the code rule; expected {CODE_RULE}"
            yield subject.fail("code", pipeline, message, remedy)
    for task in subject.tasks():
        if not is_code(task.code):
            message = f"task code {task.code!r} breaks the code rule; expected {CODE_RULE}"
            yield subject.fail("code", task, message, remedy)


def _node(subject: Subject, task: TaskRow) -> TaskNode:
    pipeline = subject.metadata.pipeline_by_id(task.pipeline_id)
    # Run conditions don't change which cycles exist; ALL keeps the graph free of count checks.
    return TaskNode(task.task_id, task.code, task.pipeline_id, pipeline.code)


def _live_edges(subject: Subject, task_ids: set[int]) -> tuple[TaskEdge, ...]:
    return tuple(
        TaskEdge(d.task_id, d.upstream_task_id, d.type)
        for d in subject.metadata.task_dependencies
        if d.task_id in task_ids and d.upstream_task_id in task_ids
    )


def _cycles_within(subject: Subject) -> Iterator[Finding]:
    for pipeline in subject.pipelines():
        tasks = subject.metadata.tasks_of(pipeline.pipeline_id)
        edges = _live_edges(subject, {t.task_id for t in tasks})
        graph = DependencyGraph(tuple(_node(subject, t) for t in tasks), edges)
        for cycle in graph.find_cycles():
            yield subject.fail(
                "cycle",
                pipeline,
                f"the task dependencies form a cycle: {cycle}; expected an acyclic graph",
                "deactivate or delete one of these dependencies in CFG_TASK_DEPENDENCY",
            )


def _cycles_between(subject: Subject) -> Iterator[Finding]:
    tasks = subject.all_active_tasks()
    active = {p.pipeline_id: p for p in subject.metadata.pipelines if p.active}
    pipeline_edges = tuple(
        PipelineEdge(d.pipeline_id, d.upstream_pipeline_id, d.type)
        for d in subject.metadata.pipeline_dependencies
        if d.pipeline_id in active and d.upstream_pipeline_id in active
    )
    edges = _live_edges(subject, {t.task_id for t in tasks})
    graph = DependencyGraph(tuple(_node(subject, t) for t in tasks), edges, pipeline_edges)
    # The graph names a pipeline by a task's pipeline code, or "pipeline id N" when it has none.
    by_name = {p.code: p for p in active.values()}
    by_name.update({f"pipeline id {p.pipeline_id}": p for p in active.values()})
    for cycle in graph.find_cycles():
        involved = [by_name[name] for name in cycle.names if name in by_name]
        scoped = [p for p in involved if subject.in_scope(p.pipeline_id)]
        if cycle.kind == "pipeline" and scoped:
            path = " -> ".join(p.code for p in involved)
            yield subject.fail(
                "cycle",
                scoped[0],
                f"the pipelines depend on each other in a cycle: {path}; expected an order "
                "in which they can run",
                "remove one of these dependencies from CFG_PIPELINE_DEPENDENCY, or the "
                "cross-pipeline one from CFG_TASK_DEPENDENCY",
            )


def _cycles_across_projects(subject: Subject) -> Iterator[Finding]:
    # Each project's own graph cannot see a cycle through another project's pipelines, and the
    # runs on one would wait on each other's gates for ever.
    upstreams: dict[int, list[int]] = {}
    for edge in subject.pipeline_edges:
        upstreams.setdefault(edge.pipeline_id, []).append(edge.upstream_pipeline_id)
    named = {e.pipeline_id: (e.project_code, e.pipeline_code) for e in subject.pipeline_edges}
    for pipeline in subject.pipelines():
        cycle = _cycle_through(pipeline.pipeline_id, upstreams)
        projects = {named[p][0] for p in cycle if p in named}
        if not cycle or projects <= {subject.metadata.project_code}:
            continue  # none, or one within the project, which _cycles_between reports
        path = " -> ".join(f"{named[p][1]} ({named[p][0]})" for p in [*cycle, cycle[0]])
        yield subject.fail(
            "cycle",
            pipeline,
            f"the pipelines depend on each other in a cycle across projects: {path}; "
            "expected an order in which they can run",
            "remove one of these dependencies from CFG_PIPELINE_DEPENDENCY",
        )


def _cycle_through(start: int, upstreams: dict[int, list[int]]) -> list[int]:
    """The pipelines of a path from ``start`` back to itself, start first; [] when none."""
    stack, seen = [(start, [start])], {start}
    while stack:
        node, path = stack.pop()
        for upstream in upstreams.get(node, ()):
            if upstream == start:
                return path
            if upstream not in seen:
                seen.add(upstream)
                stack.append((upstream, [*path, upstream]))
    return []


def _inactive_dependencies(subject: Subject) -> Iterator[Finding]:
    for task in subject.tasks():
        for dependency in subject.metadata.dependencies_of(task.task_id):
            problem = _inactive_upstream(dependency)
            if problem:
                yield subject.fail(
                    "inactive-dependency",
                    task,
                    f"it depends on {problem} (ACTIVE_FLAG = 'N'); expected an active upstream",
                    "activate the upstream, or set ACTIVE_FLAG = 'N' on TASK_DEPENDENCY_ID "
                    f"{dependency.dependency_id} in CFG_TASK_DEPENDENCY",
                )
    for pipeline in subject.pipelines():
        for pipeline_dependency in subject.metadata.pipeline_dependencies_of(pipeline.pipeline_id):
            if not pipeline_dependency.upstream_pipeline_active:
                yield subject.fail(
                    "inactive-dependency",
                    pipeline,
                    f"it depends on pipeline {pipeline_dependency.upstream_name}, "
                    "which is inactive (ACTIVE_FLAG = 'N'); expected an active upstream",
                    "activate the upstream, or set ACTIVE_FLAG = 'N' on PIPELINE_DEPENDENCY_ID "
                    f"{pipeline_dependency.dependency_id} in CFG_PIPELINE_DEPENDENCY",
                )


def _inactive_upstream(dependency: TaskDependencyRow) -> str | None:
    name = f"{dependency.upstream_pipeline_code}.{dependency.upstream_task_code}"
    if not dependency.upstream_task_active:
        return f"task {name}, which is inactive"
    if not dependency.upstream_pipeline_active:
        return f"task {name}, whose pipeline {dependency.upstream_pipeline_code} is inactive"
    return None


def _run_conditions(subject: Subject) -> Iterator[Finding]:
    for task in subject.tasks():
        if task.run_condition is not RunCondition.N:
            continue
        upstreams = sum(
            1
            for d in subject.metadata.dependencies_of(task.task_id)
            if _inactive_upstream(d) is None
        )
        if task.required_count is not None and task.required_count <= upstreams:
            continue
        yield subject.fail(
            "run-condition",
            task,
            f"RUN_CONDITION N has REQUIRED_COUNT {task.required_count} but the task has "
            f"{upstreams} active dependencies; expected a count from 1 to {upstreams}",
            "lower REQUIRED_COUNT in CFG_TASKS or add dependencies in CFG_TASK_DEPENDENCY",
        )


def _reports_no_rows(subject: Subject, task_id: int) -> str | None:
    upstream = next((t for t in subject.metadata.tasks if t.task_id == task_id), None)
    if upstream is None:
        return None
    if upstream.handler in _ROWLESS_HANDLERS:
        return f"a task of handler {upstream.handler}, which writes no rows"
    if upstream.handler is Handler.SQL and upstream.parameter("ACTION") == "DROP_TABLE":
        return "a DROP_TABLE task, which writes no rows"
    return None


def _has_data(subject: Subject) -> Iterator[Finding]:
    for task in subject.tasks():
        for dependency in subject.metadata.dependencies_of(task.task_id):
            if dependency.type is not DependencyType.HAS_DATA:
                continue
            why = _reports_no_rows(subject, dependency.upstream_task_id)
            if why:
                upstream = f"{dependency.upstream_pipeline_code}.{dependency.upstream_task_code}"
                yield subject.fail(
                    "has-data",
                    task,
                    f"its HAS_DATA dependency on {upstream} can never be met: {upstream} is "
                    f"{why}; expected an upstream that reports rows written",
                    "use DEPENDENCY_TYPE SUCCESS for TASK_DEPENDENCY_ID "
                    f"{dependency.dependency_id} in CFG_TASK_DEPENDENCY",
                )


def _schedules(subject: Subject) -> Iterator[Finding]:
    for pipeline in subject.pipelines():
        if pipeline.run_schedule is not None:
            problem = cron_problem(pipeline.run_schedule)
            if problem:
                yield subject.fail(
                    "schedule",
                    pipeline,
                    f"RUN_SCHEDULE {pipeline.run_schedule!r} is not a cron expression: {problem}",
                    "set RUN_SCHEDULE in CFG_PIPELINES to five fields such as '0 6 * * *' or a "
                    "macro such as @daily, or NULL for manual runs only",
                )
        zone = pipeline.schedule_timezone
        if zone is not None and not _is_zone(zone):
            yield subject.fail(
                "timezone",
                pipeline,
                f"SCHEDULE_TIMEZONE {zone!r} is not an IANA time zone; expected a name such as "
                "UTC or Europe/Paris",
                "fix SCHEDULE_TIMEZONE in CFG_PIPELINES, or set it NULL to use the project's",
            )


def _is_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _pipeline_parameters(subject: Subject) -> Iterator[Finding]:
    scoped = {p.pipeline_id: p for p in subject.pipelines()}
    for parameter in subject.metadata.pipeline_parameters:
        pipeline = scoped.get(parameter.pipeline_id)
        expectation = value_problem(parameter_kind(parameter.type), parameter.value)
        if pipeline is not None and expectation is not None:
            yield subject.fail(
                "pipeline-parameter",
                pipeline,
                f"{parameter.name} is {parameter.value!r} with PARAMETER_TYPE {parameter.type}; "
                f"expected {expectation}",
                "fix PARAMETER_VALUE or PARAMETER_TYPE in CFG_PIPELINE_PARAMETERS",
                parameter.name,
            )
