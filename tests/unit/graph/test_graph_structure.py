"""The graph's shape: cycles within and across pipelines, waves, reachability, bad metadata."""

from __future__ import annotations

import pytest

from etl_craft.core.enums import RunCondition
from etl_craft.core.errors import MetadataError, NotFoundError
from etl_craft.core.graph import Cycle, DependencyGraph, PipelineEdge, TaskEdge, TaskNode

SALES, CRM = 1, 2


def node(task_id: int, code: str, pipeline_id: int = SALES) -> TaskNode:
    return TaskNode(task_id, code, pipeline_id, {SALES: "sales", CRM: "crm"}[pipeline_id])


def chain_graph(*edges: tuple[int, int]) -> DependencyGraph:
    """Tasks 1..6 of one pipeline; each pair is (task, depends on)."""
    codes = ["extract", "transform", "load", "publish", "audit", "archive"]
    tasks = tuple(node(i, code) for i, code in enumerate(codes, start=1))
    return DependencyGraph(tasks, tuple(TaskEdge(t, u) for t, u in edges))


def test_a_cycle_is_named_in_order() -> None:
    graph = chain_graph((2, 1), (1, 2), (3, 2))

    assert graph.find_cycles() == (Cycle("task", ("extract", "transform", "extract")),)
    assert str(graph.find_cycles()[0]) == "extract -> transform -> extract"


def test_a_longer_cycle_follows_the_data_flow() -> None:
    # load reads transform, transform reads extract, extract reads load.
    graph = chain_graph((2, 1), (3, 2), (1, 3))

    assert [str(c) for c in graph.find_cycles()] == ["extract -> transform -> load -> extract"]


def test_every_separate_cycle_is_reported() -> None:
    graph = chain_graph((2, 1), (1, 2), (4, 3), (3, 4), (5, 5))

    assert [str(c) for c in graph.find_cycles()] == [
        "audit -> audit",
        "extract -> transform -> extract",
        "load -> publish -> load",
    ]


def test_an_acyclic_graph_has_no_cycles() -> None:
    graph = chain_graph((2, 1), (3, 1), (4, 2), (4, 3))

    assert graph.find_cycles() == ()
    graph.require_acyclic()


def test_cycles_are_refused_only_on_request() -> None:
    graph = chain_graph((2, 1), (1, 2))

    with pytest.raises(MetadataError, match="extract -> transform -> extract; remove one"):
        graph.require_acyclic()
    with pytest.raises(MetadataError, match="CFG_TASK_DEPENDENCY"):
        graph.waves()


def test_a_task_cycle_across_pipelines_names_each_task_with_its_pipeline() -> None:
    tasks = (node(1, "load_orders"), node(2, "load_customers", CRM))
    graph = DependencyGraph(tasks, (TaskEdge(1, 2), TaskEdge(2, 1)))

    assert graph.find_cycles() == (
        Cycle("task", ("crm.load_customers", "sales.load_orders", "crm.load_customers")),
        Cycle("pipeline", ("crm", "sales", "crm")),
    )


def test_pipeline_edges_form_pipeline_cycles() -> None:
    tasks = (node(1, "load_orders"), node(2, "load_customers", CRM))
    edges = (PipelineEdge(SALES, CRM), PipelineEdge(CRM, SALES))
    graph = DependencyGraph(tasks, pipeline_edges=edges)

    assert graph.find_cycles() == (Cycle("pipeline", ("crm", "sales", "crm")),)
    with pytest.raises(MetadataError, match="crm -> sales -> crm; remove one from CFG_PIPELINE"):
        graph.require_acyclic()
    assert len(graph.waves()) == 1


def test_a_pipeline_edge_and_a_task_edge_back_form_a_pipeline_cycle() -> None:
    # sales waits for crm's run, while a crm task waits for a sales task.
    report = node(1, "report")
    customers = node(2, "load_customers", CRM)
    graph = DependencyGraph(
        (customers,),
        (TaskEdge(2, 1),),
        pipeline_edges=(PipelineEdge(SALES, CRM),),
        external_tasks=(report,),
    )

    assert graph.find_cycles() == (Cycle("pipeline", ("crm", "sales", "crm")),)


def test_one_way_dependencies_between_pipelines_are_no_cycle() -> None:
    graph = DependencyGraph(
        (node(2, "load_customers", CRM),),
        (TaskEdge(2, 1),),
        pipeline_edges=(PipelineEdge(CRM, SALES), PipelineEdge(CRM, 7)),
        external_tasks=(node(1, "report"),),
    )

    assert graph.find_cycles() == ()


def test_a_pipeline_without_tasks_is_named_by_its_id() -> None:
    graph = DependencyGraph((), pipeline_edges=(PipelineEdge(7, 8), PipelineEdge(8, 7)))

    assert [str(c) for c in graph.find_cycles()] == [
        "pipeline id 7 -> pipeline id 8 -> pipeline id 7"
    ]


def test_waves_are_topological_layers_of_the_graphs_own_tasks() -> None:
    tasks = (node(1, "extract"), node(2, "transform"), node(3, "enrich"), node(4, "load"))
    edges = (TaskEdge(2, 1), TaskEdge(3, 1), TaskEdge(4, 2), TaskEdge(4, 3), TaskEdge(1, 50))
    graph = DependencyGraph(tasks, edges)

    assert [[n.code for n in wave] for wave in graph.waves()] == [
        ["extract"],
        ["enrich", "transform"],
        ["load"],
    ]


def test_upstream_and_downstream_are_transitive() -> None:
    graph = chain_graph((2, 1), (3, 2), (4, 3), (6, 5), (1, 50))

    assert graph.upstream_of(3) == {1, 2, 50}
    assert graph.downstream_of(1) == {2, 3, 4}
    assert graph.downstream_of(50) == {1, 2, 3, 4}
    assert graph.upstream_of(5) == frozenset()
    with pytest.raises(NotFoundError, match="task id 99"):
        graph.downstream_of(99)


def test_n_without_a_usable_required_count_is_refused() -> None:
    tasks = (
        node(1, "extract"),
        TaskNode(2, "report", SALES, "sales", RunCondition.N),
        TaskNode(3, "alert", SALES, "sales", RunCondition.N, 2),
    )
    edges = (TaskEdge(2, 1), TaskEdge(3, 1))

    with pytest.raises(MetadataError) as caught:
        DependencyGraph(tasks, edges)
    assert str(caught.value) == (
        "task sales.report has RUN_CONDITION N with REQUIRED_COUNT None; expected a count "
        "from 1 to its 1 dependencies: set REQUIRED_COUNT or add them; "
        "task sales.alert has RUN_CONDITION N with REQUIRED_COUNT 2; expected a count "
        "from 1 to its 1 dependencies: set REQUIRED_COUNT or add them"
    )


def test_repeated_task_ids_and_foreign_edges_are_refused() -> None:
    with pytest.raises(MetadataError, match="task id 1 is given 2 times"):
        DependencyGraph((node(1, "extract"),), external_tasks=(node(1, "extract"),))
    with pytest.raises(MetadataError, match="task id 5 is not a task of this graph"):
        DependencyGraph((node(1, "extract"),), (TaskEdge(5, 1),))
