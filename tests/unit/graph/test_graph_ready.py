"""Which tasks `ready` offers: every dependency type, every run condition, external upstreams."""

from __future__ import annotations

import pytest

from etl_craft.core.enums import DependencyType, RunCondition, TaskRunStatus
from etl_craft.core.graph import (
    RUNNING,
    SKIPPED,
    DependencyGraph,
    RunState,
    TaskEdge,
    TaskNode,
    TaskOutcome,
    dependency_met,
)

FAILED = TaskOutcome(TaskRunStatus.FAILED)
CANCELLED = TaskOutcome(TaskRunStatus.CANCELLED)


def succeeded(rows: int = 1) -> TaskOutcome:
    return TaskOutcome(TaskRunStatus.SUCCESS, rows_written=rows)


def node(
    task_id: int,
    code: str,
    condition: RunCondition = RunCondition.ALL,
    required_count: int | None = None,
) -> TaskNode:
    return TaskNode(task_id, code, 1, "sales", condition, required_count)


def fan_in(
    condition: RunCondition,
    upstreams: int,
    required_count: int | None = None,
    dependency_type: DependencyType = DependencyType.SUCCESS,
) -> tuple[DependencyGraph, TaskNode]:
    """Tasks 1..upstreams all feed task 99."""
    target = node(99, "report", condition, required_count)
    sources = tuple(node(i, f"load_{i}") for i in range(1, upstreams + 1))
    edges = tuple(TaskEdge(99, source.task_id, dependency_type) for source in sources)
    return DependencyGraph((*sources, target), edges), target


EDGE_CASES = [
    (DependencyType.SUCCESS, succeeded(5), True),
    (DependencyType.SUCCESS, succeeded(0), True),
    (DependencyType.SUCCESS, FAILED, False),
    (DependencyType.SUCCESS, SKIPPED, False),
    (DependencyType.SUCCESS, CANCELLED, False),
    (DependencyType.FAILURE, FAILED, True),
    (DependencyType.FAILURE, succeeded(), False),
    (DependencyType.FAILURE, SKIPPED, False),
    (DependencyType.HAS_DATA, succeeded(3), True),
    (DependencyType.HAS_DATA, succeeded(0), False),
    (DependencyType.HAS_DATA, FAILED, False),
    (DependencyType.HAS_DATA, SKIPPED, False),
    (DependencyType.ALWAYS, succeeded(0), True),
    (DependencyType.ALWAYS, FAILED, True),
    (DependencyType.ALWAYS, SKIPPED, True),
    (DependencyType.ALWAYS, CANCELLED, True),
]


@pytest.mark.parametrize(("dependency_type", "outcome", "met"), EDGE_CASES)
def test_a_settled_upstream_meets_an_edge_by_its_type(
    dependency_type: DependencyType, outcome: TaskOutcome, met: bool
) -> None:
    graph, target = fan_in(RunCondition.ALL, 1, dependency_type=dependency_type)
    state = RunState({1: outcome})

    assert dependency_met(dependency_type, outcome) is met
    assert graph.ready(state) == ((target,) if met else ())
    assert [item.task for item in graph.unsatisfiable(state)] == ([] if met else [target])


@pytest.mark.parametrize("dependency_type", list(DependencyType))
@pytest.mark.parametrize("state", [RunState(), RunState({1: RUNNING})], ids=["not run", "running"])
def test_an_unsettled_upstream_meets_no_edge_yet(
    dependency_type: DependencyType, state: RunState
) -> None:
    graph, _ = fan_in(RunCondition.ALL, 1, dependency_type=dependency_type)

    assert graph.ready(state) == ((node(1, "load_1"),) if not state.outcomes else ())
    assert graph.unsatisfiable(state) == ()


@pytest.mark.parametrize("condition", [RunCondition.ALL, RunCondition.ANY])
def test_a_task_without_upstreams_is_ready_at_once(condition: RunCondition) -> None:
    lone = node(1, "extract", condition)

    assert DependencyGraph((lone,)).ready(RunState()) == (lone,)


@pytest.mark.parametrize("outcome", [RUNNING, succeeded(), FAILED, SKIPPED])
def test_a_started_or_settled_task_is_not_offered_again(outcome: TaskOutcome) -> None:
    graph = DependencyGraph((node(1, "extract"), node(2, "other")))

    assert graph.ready(RunState({1: outcome})) == (node(2, "other"),)


def test_all_waits_for_every_upstream() -> None:
    graph, target = fan_in(RunCondition.ALL, 2)

    assert target not in graph.ready(RunState({1: succeeded(), 2: RUNNING}))
    assert graph.ready(RunState({1: succeeded(), 2: succeeded()})) == (target,)


def test_any_runs_with_one_failed_and_one_succeeded() -> None:
    graph, target = fan_in(RunCondition.ANY, 2)

    assert graph.ready(RunState({1: FAILED, 2: succeeded()})) == (target,)


def test_any_runs_as_soon_as_one_edge_is_met() -> None:
    graph, target = fan_in(RunCondition.ANY, 2)

    assert graph.ready(RunState({1: succeeded(), 2: RUNNING})) == (target,)


def test_any_waits_while_an_unsettled_upstream_can_still_meet_it() -> None:
    graph, _ = fan_in(RunCondition.ANY, 2)
    state = RunState({1: FAILED, 2: RUNNING})

    assert graph.ready(state) == ()
    assert graph.unsatisfiable(state) == ()


def test_n_needs_its_required_count_of_met_edges() -> None:
    graph, target = fan_in(RunCondition.N, 3, required_count=2)

    assert target not in graph.ready(RunState({1: succeeded(), 2: RUNNING}))
    assert graph.ready(RunState({1: succeeded(), 2: FAILED, 3: RUNNING})) == ()
    assert graph.unsatisfiable(RunState({1: succeeded(), 2: FAILED})) == ()
    assert target in graph.ready(RunState({1: succeeded(), 3: succeeded()}))
    assert [u.task for u in graph.unsatisfiable(RunState({1: FAILED, 2: FAILED}))] == [target]


def test_has_data_reads_rows_written() -> None:
    graph, target = fan_in(RunCondition.ALL, 1, dependency_type=DependencyType.HAS_DATA)

    assert graph.ready(RunState({1: succeeded(0)})) == ()
    assert graph.ready(RunState({1: succeeded(1)})) == (target,)


def test_an_external_upstream_is_judged_from_the_state() -> None:
    customers = TaskNode(100, "load_customers", 2, "crm")
    report = node(1, "report")
    graph = DependencyGraph((report,), (TaskEdge(1, 100),), external_tasks=(customers,))

    assert graph.ready(RunState()) == ()
    assert graph.unsatisfiable(RunState()) == ()
    assert graph.ready(RunState({100: succeeded()})) == (report,)
    (blocked,) = graph.unsatisfiable(RunState({100: FAILED}))
    assert blocked.reason == "skipped because crm.load_customers failed"


def test_an_unnamed_external_upstream_is_named_by_its_id() -> None:
    graph = DependencyGraph((node(1, "report"),), (TaskEdge(1, 100),))

    (blocked,) = graph.unsatisfiable(RunState({100: FAILED}))
    assert blocked.reason == "skipped because task id 100 failed"
    assert graph.ready(RunState({100: succeeded()})) == (node(1, "report"),)
