"""list, graph and steps over real Engine DBs: schedules, last runs, pauses and edges."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from etl_craft.core.enums import DependencyType, RunStatus
from etl_craft.core.errors import MetadataError, NotFoundError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import OperationContext
from etl_craft.operations.inspect import list_pipelines, pipeline_graph, pipeline_steps
from tests.fixtures.metadata import TESTER, SeededPipeline, execute, seed_pipeline, seed_run

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def ctx(engine_db: EngineDB) -> OperationContext:
    return OperationContext(project=None, connector=None, engine=engine_db, actor=TESTER)


def _update(db: EngineDB, sql: str, **params: object) -> None:
    with db.transaction(TESTER) as conn:
        execute(conn, sql, **params)


def _depends(db: EngineDB, task_id: int, upstream_id: int, kind: str) -> None:
    _update(
        db,
        "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE) "
        "VALUES (:t, :u, :k)",
        t=task_id,
        u=upstream_id,
        k=kind,
    )


def _summaries(ctx: OperationContext) -> dict[str, object]:
    return {s.pipeline_code: s for s in list_pipelines(ctx, NOW).pipelines}


def test_list_shows_the_next_run_in_the_schedule_zone_and_the_last_run(
    ctx: OperationContext,
) -> None:
    seeded = seed_pipeline(ctx.engine)
    _update(
        ctx.engine,
        "UPDATE CFG_PIPELINES SET RUN_SCHEDULE = '0 6 * * *', SCHEDULE_TIMEZONE = 'Europe/Paris' "
        "WHERE PIPELINE_ID = :p",
        p=seeded.pipeline_id,
    )
    seed_run(ctx.engine, seeded.pipeline_id, "SUCCESS")
    last = seed_run(ctx.engine, seeded.pipeline_id, "FAILED")

    summary = list_pipelines(ctx, NOW).pipelines
    found = next(s for s in summary if s.pipeline_code == seeded.code)

    # 06:00 in Paris is 05:00 UTC in winter.
    assert found.next_run == datetime(2026, 1, 11, 5, 0, tzinfo=UTC)
    assert found.timezone == "Europe/Paris"
    assert found.last_run is not None
    assert (found.last_run.pipeline_run_id, found.last_run.status) == (last, RunStatus.FAILED)
    assert not found.paused


def test_list_shows_a_pause_and_no_next_run_while_paused(ctx: OperationContext) -> None:
    seeded = seed_pipeline(ctx.engine)
    _update(
        ctx.engine,
        "UPDATE CFG_PIPELINES SET RUN_SCHEDULE = '@hourly' WHERE PIPELINE_ID = :p",
        p=seeded.pipeline_id,
    )
    _update(
        ctx.engine,
        "INSERT INTO AUD_PIPELINE_PAUSES (PROJECT_ID, PIPELINE_ID, REASON, PAUSED_AT, PAUSED_BY, "
        "PAUSED_BY_KIND) SELECT PROJECT_ID, :p, 'source outage', etl_craft_now(), 'tester', "
        "'HUMAN' FROM CFG_PIPELINES WHERE PIPELINE_ID = :p",
        p=seeded.pipeline_id,
    )

    found = next(s for s in list_pipelines(ctx, NOW).pipelines if s.pipeline_code == seeded.code)

    assert found.paused
    assert found.pause_reason == "source outage"
    assert found.next_run is None
    assert found.last_run is None


def test_graph_lists_edges_with_types_and_marks_other_pipelines(ctx: OperationContext) -> None:
    upstream = seed_pipeline(ctx.engine, tasks=("publish",))
    here: SeededPipeline = seed_pipeline(ctx.engine, tasks=("extract", "load"))
    _depends(ctx.engine, here.task_ids["load"], here.task_ids["extract"], "SUCCESS")
    _depends(ctx.engine, here.task_ids["load"], upstream.task_ids["publish"], "HAS_DATA")
    _update(
        ctx.engine,
        "INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID) VALUES (:p, :u)",
        p=here.pipeline_id,
        u=upstream.pipeline_id,
    )

    graph = pipeline_graph(ctx, here.code)

    assert [t.task_code for t in graph.tasks] == ["extract", "load"]
    load = graph.tasks[1]
    edges = {(e.pipeline_code, e.task_code, e.type, e.cross_pipeline) for e in load.upstream}
    assert edges == {
        (here.code, "extract", DependencyType.SUCCESS, False),
        (upstream.code, "publish", DependencyType.HAS_DATA, True),
    }
    assert [p.pipeline_code for p in graph.depends_on_pipelines] == [upstream.code]


def test_steps_groups_tasks_by_wave_with_their_action(ctx: OperationContext) -> None:
    seeded = seed_pipeline(ctx.engine, tasks=("a", "b", "c"))
    _depends(ctx.engine, seeded.task_ids["b"], seeded.task_ids["a"], "SUCCESS")
    _depends(ctx.engine, seeded.task_ids["c"], seeded.task_ids["a"], "ALWAYS")
    _update(
        ctx.engine,
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
        "VALUES (:t, 'ACTION', 'APPEND_TABLE')",
        t=seeded.task_ids["b"],
    )

    steps = pipeline_steps(ctx, seeded.code)

    assert [[(s.task_code, s.action) for s in w.tasks] for w in steps.waves] == [
        [("a", None)],
        [("b", "APPEND_TABLE"), ("c", None)],
    ]


def test_steps_refuses_a_cycle_naming_it(ctx: OperationContext) -> None:
    seeded = seed_pipeline(ctx.engine, tasks=("x", "y"))
    _depends(ctx.engine, seeded.task_ids["x"], seeded.task_ids["y"], "SUCCESS")
    _depends(ctx.engine, seeded.task_ids["y"], seeded.task_ids["x"], "SUCCESS")

    with pytest.raises(MetadataError, match="x -> y -> x"):
        pipeline_steps(ctx, seeded.code)


def test_an_unknown_pipeline_is_refused_with_the_known_ones(ctx: OperationContext) -> None:
    with pytest.raises(NotFoundError, match="'missing' is not an active pipeline"):
        pipeline_graph(ctx, "missing")
