"""Tasks that can never run: their reasons, and the cascade `settle` follows."""

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
)

FAILED = TaskOutcome(TaskRunStatus.FAILED)


def succeeded(rows: int = 1) -> TaskOutcome:
    return TaskOutcome(TaskRunStatus.SUCCESS, rows_written=rows)


def node(
    task_id: int,
    code: str,
    condition: RunCondition = RunCondition.ALL,
    required_count: int | None = None,
) -> TaskNode:
    return TaskNode(task_id, code, 1, "sales", condition, required_count)


LOAD_ORDERS = node(1, "load_orders")
LOAD_CUSTOMERS = node(2, "load_customers")


def reasons(graph: DependencyGraph, state: RunState) -> dict[str, str]:
    return {item.task.code: item.reason for item in graph.unsatisfiable(state)}


@pytest.mark.parametrize(
    ("dependency_type", "outcome", "reason"),
    [
        (DependencyType.SUCCESS, FAILED, "skipped because load_orders failed"),
        (DependencyType.SUCCESS, SKIPPED, "skipped because load_orders was skipped"),
        (
            DependencyType.FAILURE,
            succeeded(),
            "skipped because load_orders succeeded (FAILURE dependency)",
        ),
        (
            DependencyType.HAS_DATA,
            succeeded(0),
            "skipped because load_orders wrote no rows (HAS_DATA)",
        ),
        (DependencyType.HAS_DATA, FAILED, "skipped because load_orders failed (HAS_DATA)"),
    ],
)
def test_the_reason_names_the_upstream_and_its_outcome(
    dependency_type: DependencyType, outcome: TaskOutcome, reason: str
) -> None:
    graph = DependencyGraph((LOAD_ORDERS, node(3, "report")), (TaskEdge(3, 1, dependency_type),))

    assert reasons(graph, RunState({1: outcome})) == {"report": reason}


def test_all_names_every_unmet_upstream() -> None:
    edges = (TaskEdge(3, 1), TaskEdge(3, 2))
    graph = DependencyGraph((LOAD_ORDERS, LOAD_CUSTOMERS, node(3, "report")), edges)

    (item,) = graph.unsatisfiable(RunState({1: FAILED, 2: SKIPPED}))
    assert item.reason == "skipped because load_orders failed and load_customers was skipped"
    assert item.blocked_by == (1, 2)


def test_all_is_unsatisfiable_on_the_first_unmet_edge_while_others_still_run() -> None:
    edges = (TaskEdge(3, 1), TaskEdge(3, 2))
    graph = DependencyGraph((LOAD_ORDERS, LOAD_CUSTOMERS, node(3, "report")), edges)

    (item,) = graph.unsatisfiable(RunState({1: FAILED, 2: RUNNING}))
    assert item.blocked_by == (1,)


def test_any_is_unsatisfiable_only_when_no_edge_can_be_met() -> None:
    report = node(3, "report", RunCondition.ANY)
    graph = DependencyGraph((LOAD_ORDERS, LOAD_CUSTOMERS, report), (TaskEdge(3, 1), TaskEdge(3, 2)))

    assert graph.unsatisfiable(RunState({1: FAILED, 2: RUNNING})) == ()
    assert reasons(graph, RunState({1: FAILED, 2: succeeded()})) == {}
    assert reasons(graph, RunState({1: FAILED, 2: FAILED})) == {
        "report": "skipped because none of its dependencies can be met: "
        "load_orders failed and load_customers failed"
    }


def test_n_is_unsatisfiable_when_too_few_edges_remain_possible() -> None:
    tasks = (
        LOAD_ORDERS,
        LOAD_CUSTOMERS,
        node(3, "load_items"),
        node(4, "report", RunCondition.N, 2),
    )
    graph = DependencyGraph(tasks, (TaskEdge(4, 1), TaskEdge(4, 2), TaskEdge(4, 3)))

    assert graph.unsatisfiable(RunState({1: FAILED, 2: RUNNING})) == ()
    assert reasons(graph, RunState({1: FAILED, 2: FAILED, 3: RUNNING})) == {
        "report": "skipped because only 1 of the 2 dependencies it requires can be met: "
        "load_orders failed and load_customers failed"
    }


def test_an_always_edge_is_met_by_an_upstream_skipped_as_unsatisfiable() -> None:
    # extract fails, so transform is skipped, and cleanup still runs after it.
    tasks = (node(1, "extract"), node(2, "transform"), node(3, "cleanup"))
    edges = (TaskEdge(2, 1), TaskEdge(3, 2, DependencyType.ALWAYS))
    graph = DependencyGraph(tasks, edges)
    state = RunState({1: FAILED})

    assert [item.task.code for item in graph.settle(state)] == ["transform"]
    assert graph.ready(state.with_outcome(2, SKIPPED)) == (node(3, "cleanup"),)


def test_settle_follows_skips_down_the_graph() -> None:
    tasks = (node(1, "extract"), node(2, "transform"), node(3, "load"), node(4, "publish"))
    graph = DependencyGraph(tasks, (TaskEdge(2, 1), TaskEdge(3, 2), TaskEdge(4, 3)))
    state = RunState({1: FAILED})

    assert [item.task.code for item in graph.unsatisfiable(state)] == ["transform"]
    skipped = graph.settle(state)
    assert [(item.task.code, item.reason) for item in skipped] == [
        ("transform", "skipped because extract failed"),
        ("load", "skipped because transform was skipped"),
        ("publish", "skipped because load was skipped"),
    ]
    for item in skipped:
        state = state.with_outcome(item.task.task_id, SKIPPED)
    assert graph.unsatisfiable(state) == ()
    assert graph.settle(state) == ()


def test_settle_skips_nothing_that_can_still_run() -> None:
    tasks = (node(1, "extract"), node(2, "transform"), node(3, "alert"))
    edges = (TaskEdge(2, 1), TaskEdge(3, 1, DependencyType.FAILURE))
    graph = DependencyGraph(tasks, edges)

    assert graph.settle(RunState({1: RUNNING})) == ()
    assert [item.task.code for item in graph.settle(RunState({1: FAILED}))] == ["transform"]


def test_run_state_is_a_private_copy() -> None:
    outcomes = {1: FAILED}
    state = RunState(outcomes)
    outcomes[1] = succeeded()

    assert state.outcomes[1] == FAILED
    assert state.with_outcome(1, SKIPPED).outcomes[1] == SKIPPED
    assert state.outcomes[1] == FAILED
