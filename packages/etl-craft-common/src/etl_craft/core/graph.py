"""The dependency graph of tasks: what can run now, what never will, and the cycles it holds.

Pure: the caller reads the Engine DB into a `RunState`; nothing here does I/O.

An upstream that is not one of the graph's `tasks` (a task of another pipeline) is external: its
outcome comes from the state like any other upstream's, put there by whoever judged it (a gate).
Until the state holds a settled outcome for it, its edges are pending.

ANY and N conditions are judged as soon as enough edges are met, so such a task may start while
other upstreams still run: it relies only on the upstreams that met its condition, and those have
settled. An unsatisfiable task is recorded SKIPPED, which settles it in turn; `settle` follows that
cascade to its end so the caller records every skip at once.
"""

from __future__ import annotations

import graphlib
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from etl_craft.core.enums import DependencyType, RunCondition, TaskRunStatus
from etl_craft.core.errors import MetadataError, NotFoundError


@dataclass(frozen=True, slots=True)
class TaskNode:
    task_id: int
    code: str
    pipeline_id: int
    pipeline_code: str
    run_condition: RunCondition = RunCondition.ALL
    required_count: int | None = None


@dataclass(frozen=True, slots=True)
class TaskEdge:
    """`task_id` depends on `depends_on_task_id`, which may be a task of another pipeline."""

    task_id: int
    depends_on_task_id: int
    type: DependencyType = DependencyType.SUCCESS


@dataclass(frozen=True, slots=True)
class PipelineEdge:
    pipeline_id: int
    depends_on_pipeline_id: int
    type: DependencyType = DependencyType.SUCCESS


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    status: TaskRunStatus
    rows_written: int = 0


RUNNING = TaskOutcome(TaskRunStatus.IN_PROGRESS)
SKIPPED = TaskOutcome(TaskRunStatus.SKIPPED)


@dataclass(frozen=True, slots=True)
class RunState:
    """The outcome of every task that has started or settled; a task absent from it has not run."""

    outcomes: Mapping[int, TaskOutcome] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A private read-only copy: a caller mutating its dict must not change a judged state.
        object.__setattr__(self, "outcomes", MappingProxyType(dict(self.outcomes)))

    def with_outcome(self, task_id: int, outcome: TaskOutcome) -> RunState:
        return RunState({**self.outcomes, task_id: outcome})

    def settled(self, task_id: int) -> TaskOutcome | None:
        outcome = self.outcomes.get(task_id)
        return outcome if outcome is not None and outcome.status.terminal else None


@dataclass(frozen=True, slots=True)
class Unsatisfiable:
    task: TaskNode
    reason: str
    blocked_by: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Cycle:
    kind: Literal["task", "pipeline"]
    names: tuple[str, ...]

    def __str__(self) -> str:
        return " -> ".join(self.names)

    @property
    def message(self) -> str:
        table = "CFG_TASK_DEPENDENCY" if self.kind == "task" else "CFG_PIPELINE_DEPENDENCY"
        return f"the {self.kind} dependencies form a cycle: {self}; remove one from {table}"


def dependency_met(dependency_type: DependencyType, outcome: TaskOutcome) -> bool:
    """Whether a settled upstream outcome meets a dependency of this type."""
    if dependency_type is DependencyType.ALWAYS:
        return True
    if dependency_type is DependencyType.FAILURE:
        return outcome.status is TaskRunStatus.FAILED
    if outcome.status is not TaskRunStatus.SUCCESS:
        return False
    return dependency_type is DependencyType.SUCCESS or outcome.rows_written > 0


_VERBS = {
    TaskRunStatus.SUCCESS: "succeeded",
    TaskRunStatus.FAILED: "failed",
    TaskRunStatus.SKIPPED: "was skipped",
    TaskRunStatus.CANCELLED: "was cancelled",
}
_TYPE_NOTES = {
    DependencyType.FAILURE: " (FAILURE dependency)",
    DependencyType.HAS_DATA: " (HAS_DATA)",
}


def _unmet_phrase(name: str, dependency_type: DependencyType, outcome: TaskOutcome) -> str:
    if dependency_type is DependencyType.HAS_DATA and outcome.status is TaskRunStatus.SUCCESS:
        return f"{name} wrote no rows (HAS_DATA)"
    return f"{name} {_VERBS[outcome.status]}{_TYPE_NOTES.get(dependency_type, '')}"


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"


@dataclass(frozen=True, slots=True)
class _Tally:
    needed: int
    met: int
    pending: int
    unmet: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class DependencyGraph:
    tasks: tuple[TaskNode, ...]
    edges: tuple[TaskEdge, ...] = ()
    pipeline_edges: tuple[PipelineEdge, ...] = ()
    external_tasks: tuple[TaskNode, ...] = ()
    _nodes: Mapping[int, TaskNode] = field(init=False, repr=False, compare=False)
    _upstream: Mapping[int, tuple[TaskEdge, ...]] = field(init=False, repr=False, compare=False)
    _downstream: Mapping[int, tuple[int, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        nodes = {node.task_id: node for node in (*self.tasks, *self.external_tasks)}
        upstream: dict[int, list[TaskEdge]] = defaultdict(list)
        downstream: dict[int, list[int]] = defaultdict(list)
        for edge in self.edges:
            upstream[edge.task_id].append(edge)
            downstream[edge.depends_on_task_id].append(edge.task_id)
        object.__setattr__(self, "_nodes", nodes)
        object.__setattr__(self, "_upstream", {k: tuple(v) for k, v in upstream.items()})
        object.__setattr__(
            self, "_downstream", {k: tuple(sorted(v)) for k, v in downstream.items()}
        )
        problems = self._structure_problems()
        if problems:
            raise MetadataError("; ".join(problems))

    def _structure_problems(self) -> list[str]:
        counts = Counter(node.task_id for node in (*self.tasks, *self.external_tasks))
        repeated = sorted(task_id for task_id, count in counts.items() if count > 1)
        problems = [f"task id {i} is given {counts[i]} times; expected one node" for i in repeated]
        own = {task.task_id for task in self.tasks}
        problems += [
            f"dependency of task id {edge.task_id} on {self._name(edge.depends_on_task_id)}: "
            f"task id {edge.task_id} is not a task of this graph; pass only its tasks' dependencies"
            for edge in self.edges
            if edge.task_id not in own
        ]
        problems += [p for task in self.tasks if (p := self._count_problem(task))]
        return problems

    def _count_problem(self, task: TaskNode) -> str | None:
        if task.run_condition is not RunCondition.N:
            return None
        total = len(self.dependencies_of(task.task_id))
        count = task.required_count
        if count is not None and 1 <= count <= total:
            return None
        return (
            f"task {self._name(task.task_id)} has RUN_CONDITION N with REQUIRED_COUNT {count}; "
            f"expected a count from 1 to its {total} dependencies: set REQUIRED_COUNT or add them"
        )

    def _name(self, task_id: int, context_pipeline: int | None = None) -> str:
        node = self._nodes.get(task_id)
        if node is None:
            return f"task id {task_id}"
        if node.pipeline_id == context_pipeline:
            return node.code
        return f"{node.pipeline_code}.{node.code}"

    def dependencies_of(self, task_id: int) -> tuple[TaskEdge, ...]:
        return self._upstream.get(task_id, ())

    def _tally(self, task: TaskNode, state: RunState) -> _Tally:
        edges = self.dependencies_of(task.task_id)
        met = pending = 0
        unmet: list[tuple[int, str]] = []
        for edge in edges:
            outcome = state.settled(edge.depends_on_task_id)
            if outcome is None:
                pending += 1
            elif dependency_met(edge.type, outcome):
                met += 1
            else:
                name = self._name(edge.depends_on_task_id, task.pipeline_id)
                unmet.append((edge.depends_on_task_id, _unmet_phrase(name, edge.type, outcome)))
        return _Tally(_needed(task, len(edges)), met, pending, tuple(unmet))

    def ready(self, state: RunState) -> tuple[TaskNode, ...]:
        """Every task not yet started whose run condition is met, in the graph's task order."""
        waiting = (task for task in self.tasks if task.task_id not in state.outcomes)
        tallies = ((task, self._tally(task, state)) for task in waiting)
        return tuple(task for task, tally in tallies if tally.met >= tally.needed)

    def unsatisfiable(self, state: RunState) -> tuple[Unsatisfiable, ...]:
        """Every task not yet started that no outcome of its unsettled upstreams could run."""
        found: list[Unsatisfiable] = []
        for task in self.tasks:
            if task.task_id in state.outcomes:
                continue
            tally = self._tally(task, state)
            # Pending edges count as met: every dependency type can be met by some outcome.
            if tally.met + tally.pending < tally.needed:
                blocked_by = tuple(upstream for upstream, _ in tally.unmet)
                found.append(Unsatisfiable(task, _reason(task, tally), blocked_by))
        return tuple(found)

    def settle(self, state: RunState) -> tuple[Unsatisfiable, ...]:
        """The tasks to record SKIPPED, including those that only become unsatisfiable once
        earlier ones are skipped; after recording them all, `unsatisfiable` finds none."""
        skipped: list[Unsatisfiable] = []
        while found := self.unsatisfiable(state):
            skipped.extend(found)
            for item in found:
                state = state.with_outcome(item.task.task_id, SKIPPED)
        return tuple(skipped)

    def upstream_of(self, task_id: int) -> frozenset[int]:
        """Every task `task_id` depends on, directly or not, external upstreams included."""
        self._require_known(task_id)
        return _reachable(
            task_id, lambda n: [e.depends_on_task_id for e in self.dependencies_of(n)]
        )

    def downstream_of(self, task_id: int) -> frozenset[int]:
        """Every task of the graph that depends on `task_id`, directly or not."""
        self._require_known(task_id)
        return _reachable(task_id, lambda n: self._downstream.get(n, ()))

    def _require_known(self, task_id: int) -> None:
        if task_id not in self._nodes and task_id not in self._downstream:
            raise NotFoundError(f"task id {task_id} is not in the dependency graph; check the id")

    def find_cycles(self) -> tuple[Cycle, ...]:
        """One cycle per strongly connected group of tasks, then of pipelines; never raises."""
        task_cycles = _cycles(self._downstream, self._cycle_task_namer())
        pipeline_cycles = _cycles(self._pipeline_downstream(), self._pipeline_name)
        return tuple(
            [Cycle("task", names) for names in task_cycles]
            + [Cycle("pipeline", names) for names in pipeline_cycles]
        )

    def require_acyclic(self) -> None:
        _refuse(self.find_cycles())

    def _cycle_task_namer(self) -> Callable[[int], str]:
        # Codes alone are ambiguous only when the graph spans pipelines.
        pipelines = {node.pipeline_id for node in self._nodes.values()}
        only = next(iter(pipelines)) if len(pipelines) == 1 else None
        return lambda task_id: self._name(task_id, only)

    def _pipeline_name(self, pipeline_id: int) -> str:
        codes = (n.pipeline_code for n in self._nodes.values() if n.pipeline_id == pipeline_id)
        return next(codes, f"pipeline id {pipeline_id}")

    def _pipeline_downstream(self) -> dict[int, list[int]]:
        """Pipeline edges plus every cross-pipeline task edge seen as an edge of its pipelines:
        two pipelines each reading the other's output have no order to run in."""
        downstream: dict[int, set[int]] = defaultdict(set)
        for pipeline_edge in self.pipeline_edges:
            downstream[pipeline_edge.depends_on_pipeline_id].add(pipeline_edge.pipeline_id)
        for edge in self.edges:
            upstream = self._nodes.get(edge.depends_on_task_id)
            task = self._nodes[edge.task_id]
            if upstream is not None and upstream.pipeline_id != task.pipeline_id:
                downstream[upstream.pipeline_id].add(task.pipeline_id)
        return {k: sorted(v) for k, v in downstream.items()}

    def waves(self) -> tuple[tuple[TaskNode, ...], ...]:
        """Topological layers of the graph's tasks, for display; scheduling uses `ready`."""
        _refuse(tuple(cycle for cycle in self.find_cycles() if cycle.kind == "task"))
        own = {task.task_id: task for task in self.tasks}
        internal = {t: [e.depends_on_task_id for e in self.dependencies_of(t)] for t in own}
        depth: dict[int, int] = {}
        for task_id in graphlib.TopologicalSorter(internal).static_order():
            if task_id in own:
                depth[task_id] = 1 + max((depth.get(u, -1) for u in internal[task_id]), default=-1)
        layers: dict[int, list[TaskNode]] = defaultdict(list)
        for task_id, layer in depth.items():
            layers[layer].append(own[task_id])
        return tuple(
            tuple(sorted(layers[i], key=lambda n: (n.code, n.task_id))) for i in sorted(layers)
        )


def _refuse(cycles: tuple[Cycle, ...]) -> None:
    if cycles:
        raise MetadataError("; ".join(cycle.message for cycle in cycles))


def _needed(task: TaskNode, total: int) -> int:
    if task.run_condition is RunCondition.ALL:
        return total
    if task.run_condition is RunCondition.ANY:
        return min(1, total)
    return task.required_count or 0


def _reason(task: TaskNode, tally: _Tally) -> str:
    phrases = _join([phrase for _, phrase in tally.unmet])
    if task.run_condition is RunCondition.ALL:
        return f"skipped because {phrases}"
    if task.run_condition is RunCondition.ANY:
        return f"skipped because none of its dependencies can be met: {phrases}"
    return (
        f"skipped because only {tally.met + tally.pending} of the {tally.needed} "
        f"dependencies it requires can be met: {phrases}"
    )


def _reachable(start: int, successors: Callable[[int], Iterable[int]]) -> frozenset[int]:
    """Nodes reachable from `start` in one step or more (so `start` itself only on a cycle)."""
    seen: set[int] = set()
    queue = deque(successors(start))
    while queue:
        node = queue.popleft()
        if node not in seen:
            seen.add(node)
            queue.extend(successors(node))
    return frozenset(seen)


def _cycles(
    downstream: Mapping[int, Iterable[int]], name: Callable[[int], str]
) -> list[tuple[str, ...]]:
    """The shortest cycle through the first-named node of each strongly connected component."""

    def successors(node: int) -> Iterable[int]:
        return downstream.get(node, ())

    nodes = {*downstream, *(n for targets in downstream.values() for n in targets)}
    reach = {node: _reachable(node, successors) for node in nodes}
    covered: set[int] = set()
    cycles: list[tuple[str, ...]] = []
    for start in sorted(nodes, key=lambda n: (name(n), n)):
        if start in covered or start not in reach[start]:
            continue
        component = {n for n in reach[start] if start in reach[n]}
        covered |= component
        path = _shortest_cycle(start, successors, component)
        cycles.append(tuple(name(n) for n in path))
    return cycles


def _shortest_cycle(
    start: int, successors: Callable[[int], Iterable[int]], component: set[int]
) -> list[int]:
    queue = deque([[start]])
    seen = {start}
    while queue:
        path = queue.popleft()
        for successor in successors(path[-1]):
            if successor == start:
                return [*path, start]
            if successor in component and successor not in seen:
                seen.add(successor)
                queue.append([*path, successor])
    raise AssertionError(f"node {start} lies on no cycle")
