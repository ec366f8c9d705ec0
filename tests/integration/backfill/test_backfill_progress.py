"""A queued backfill's progress as the web UI shows it, and stopping it with a reason."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import RunStateError, UsageError
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.runs.backfill_progress import backfill_progress, stop_backfill
from etl_craft.operations.runs.backfills import BackfillRequest, queue_backfill
from etl_craft.operations.runs.foreground import RunRequest, run_pipeline
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.running.test_ready_set import tasks_sql


def context(project: ProjectOnDisk) -> OperationContext:
    project.migrate("0001_daily.sql", tasks_sql("daily", [("load", "quick.py", "{}")], []))
    made = build_context(ContextRequest(config=project.config, cwd=project.root))
    return dataclasses.replace(made, actor=TESTER)


def test_progress_counts_a_backfills_runs_and_stop_cancels_the_live_ones(
    project: ProjectOnDisk,
) -> None:
    ctx = context(project)
    queued = queue_backfill(ctx, BackfillRequest("daily", "2026-03-01:2026-03-03", "reload"))
    first = queued.runs[0].run_id
    assert run_pipeline(ctx, RunRequest("daily", run_id=first)).status is RunStatus.SUCCESS

    before = backfill_progress(ctx)
    stopped = stop_backfill(ctx, "daily", "source is wrong for March")
    after = backfill_progress(ctx)

    [daily] = before.pipelines
    assert (daily.first, daily.last) == (date(2026, 3, 1), date(2026, 3, 3))
    assert daily.counts == (("QUEUED", 2), ("SUCCESS", 1))
    assert (daily.live, daily.finished) == (2, 1)
    assert [run.status for run in daily.runs] == [
        RunStatus.SUCCESS,
        RunStatus.QUEUED,
        RunStatus.QUEUED,
    ]
    assert [i.run.run_id for i in stopped.cancelled] == [r.run_id for r in queued.runs[1:]]
    assert after.pipelines[0].counts == (("SUCCESS", 1), ("CANCELLED", 2))
    with project.engine.read() as conn:
        recorded = execute(
            conn,
            "SELECT KIND, REASON, REQUESTED_BY FROM AUD_RUN_INTERVENTIONS WHERE KIND = 'CANCEL' "
            "ORDER BY PIPELINE_RUN_ID",
        ).all()
    assert [tuple(row) for row in recorded] == [
        ("CANCEL", "source is wrong for March", TESTER.name)
    ] * 2
    ctx.close()


def test_stopping_without_a_live_backfill_or_a_reason_is_refused(project: ProjectOnDisk) -> None:
    ctx = context(project)

    with pytest.raises(RunStateError, match="pipeline daily has no live BACKFILL run"):
        stop_backfill(ctx, "daily", "nothing to stop")
    with pytest.raises(UsageError, match="stop backfill needs a reason"):
        stop_backfill(ctx, "daily", " ")
    ctx.close()
