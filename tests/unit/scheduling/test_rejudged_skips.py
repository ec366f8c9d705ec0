"""The planner judges the engine's skips again: one whose upstream's outcome changed runs."""

from __future__ import annotations

from etl_craft.core.enums import DependencyType, Handler, RunStatus, TaskRunStatus
from etl_craft.core.graph import DependencyGraph, TaskEdge, TaskNode
from etl_craft.scheduling.plan import Again, TaskRunState, plan

LAND, SUMMARY, REPORT = (
    TaskNode(n, code, 1, "orders") for n, code in enumerate(("land", "summary", "report"), start=1)
)
CHAIN = DependencyGraph((LAND, SUMMARY, REPORT), (TaskEdge(2, 1), TaskEdge(3, 2)))
HANDLERS = {1: Handler.SQL, 2: Handler.SQL, 3: Handler.SQL}


def state(task_id: int, status: TaskRunStatus, attempts: int = 1, rows: int = 3) -> TaskRunState:
    return TaskRunState(10 + task_id, task_id, status, rows, attempts, None, True, None)


def test_a_skip_whose_upstream_now_succeeded_runs_and_holds_its_own_downstream() -> None:
    runs = {
        1: state(1, TaskRunStatus.SUCCESS),  # marked SUCCESS after it failed
        2: state(2, TaskRunStatus.SKIPPED, attempts=0),
        3: state(3, TaskRunStatus.SKIPPED, attempts=0),
    }
    decided = plan(CHAIN, runs, {}, HANDLERS, rejudged={2, 3})
    assert decided.again == (Again(12, SUMMARY),)
    assert (decided.skip, decided.start, decided.outcome) == ((), (), None)


def test_without_rejudging_the_same_tables_end_the_run() -> None:
    runs = {
        1: state(1, TaskRunStatus.SUCCESS),
        2: state(2, TaskRunStatus.SKIPPED, attempts=0),
        3: state(3, TaskRunStatus.SKIPPED, attempts=0),
    }
    assert plan(CHAIN, runs, {}, HANDLERS).outcome is RunStatus.SUCCESS


def test_a_skip_that_still_holds_is_left_alone() -> None:
    graph = DependencyGraph((LAND, SUMMARY), (TaskEdge(2, 1, DependencyType.HAS_DATA),))
    runs = {
        1: state(1, TaskRunStatus.SUCCESS, rows=0),
        2: state(2, TaskRunStatus.SKIPPED, attempts=0),
    }
    decided = plan(graph, runs, {}, {1: Handler.SQL, 2: Handler.SQL}, rejudged={2})
    assert (decided.again, decided.skip, decided.outcome) == ((), (), RunStatus.SUCCESS)
