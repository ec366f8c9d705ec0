"""A pipeline's graph and task settings, read once per supervision."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from etl_craft.core import ranges
from etl_craft.core.enums import DependencyType, Handler, SlotKind
from etl_craft.core.errors import MetadataError
from etl_craft.core.graph import DependencyGraph, TaskEdge, TaskNode
from etl_craft.core.ranges import Range
from etl_craft.enginedb.runs import PipelineShape
from etl_craft.scheduling.gatekeeper import Dependency
from etl_craft.scheduling.plan import RetryPolicy


@dataclass(frozen=True)
class TaskSettings:
    code: str
    handler: Handler
    timeout_seconds: float | None
    retry: RetryPolicy
    pool: str | None

    @property
    def slot_kind(self) -> SlotKind:
        return SlotKind.INGESTION if self.handler is Handler.PYTHON else SlotKind.WAREHOUSE


@dataclass(frozen=True)
class RunShape:
    graph: DependencyGraph
    tasks: MappingProxyType[int, TaskSettings]
    external: tuple[Dependency, ...] = ()  # task dependencies on other pipelines, gated

    @property
    def policies(self) -> dict[int, RetryPolicy]:
        return {task_id: settings.retry for task_id, settings in self.tasks.items()}

    @property
    def handlers(self) -> dict[int, Handler]:
        return {task_id: settings.handler for task_id, settings in self.tasks.items()}

    def ignoring_outcomes(self, tasks: frozenset[int] | None) -> RunShape:
        """Edges into ``tasks`` (None: every task) met by any settled outcome: order is kept."""
        graph = self.graph
        edges = tuple(
            replace(edge, type=DependencyType.ALWAYS)
            if tasks is None or edge.task_id in tasks
            else edge
            for edge in graph.edges
        )
        loose = DependencyGraph(graph.tasks, edges, graph.pipeline_edges, graph.external_tasks)
        return replace(self, graph=loose)


def build_shape(shape: PipelineShape, default_retries: int) -> RunShape:
    nodes = [
        TaskNode(
            t.task_id,
            t.task_code,
            t.pipeline_id,
            t.pipeline_code,
            t.run_condition,
            t.required_count,
        )
        for t in shape.tasks
    ]
    edges = [
        TaskEdge(d.task_id, d.depends_on_task_id, d.dependency_type) for d in shape.dependencies
    ]
    graph = DependencyGraph(tuple(nodes), tuple(edges))
    graph.require_acyclic()
    settings = {
        t.task_id: _settings(
            t.task_code, t.handler, shape.parameters.get(t.task_id, {}), default_retries
        )
        for t in shape.tasks
    }
    external = tuple(
        Dependency(
            task_id=d.task_id,
            upstream_pipeline_id=d.upstream_pipeline_id,
            upstream_task_id=d.depends_on_task_id,
            dependency_type=d.dependency_type,
            consume_repairs=d.consume_repairs,
            name=f"{d.upstream_pipeline_code}.{d.upstream_task_code}",
            task_dependency_id=d.task_dependency_id,
        )
        for d in shape.dependencies
        if d.depends_on_task_id not in settings
    )
    return RunShape(graph, MappingProxyType(settings), external)


def _settings(
    code: str,
    handler: Handler,
    parameters: MappingProxyType[str, str | None] | dict[str, str | None],
    default_retries: int,
) -> TaskSettings:
    def number(name: str, default: float | None, allowed: Range) -> float | None:
        text = parameters.get(name)
        if text is None or not text.strip():
            return default
        try:
            return allowed.parse(text)
        except ValueError as error:
            raise MetadataError(
                f"{name} of task {code}: {error}; fix it in CFG_TASK_PARAMETERS"
            ) from None

    retries = number("RETRIES", default_retries, ranges.RETRIES)
    return TaskSettings(
        code=code,
        handler=handler,
        timeout_seconds=number("TASK_TIMEOUT_SECONDS", None, ranges.TIMEOUT_SECONDS),
        retry=RetryPolicy(
            retries=int(retries or 0),
            delay_seconds=number("RETRY_DELAY_SECONDS", 60.0, ranges.SECONDS) or 0.0,
            backoff=number("RETRY_BACKOFF", 2.0, ranges.BACKOFF) or 1.0,
        ),
        pool=(parameters.get("POOL") or None),
    )
