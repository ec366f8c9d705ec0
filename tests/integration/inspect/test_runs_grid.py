"""The runs grid and run detail operations over a real run history, on both Engine DB dialects."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from sqlalchemy import event

from etl_craft.core.enums import RunStatus, TaskRunStatus, TriggerKind
from etl_craft.core.errors import UsageError
from etl_craft.operations.runs.detail import run_detail
from etl_craft.operations.runs.grid import GridFilter, RunsGrid, parse_filter, runs_grid
from tests.fixtures.run_history import FLAKY_ERROR, LIVE_RUN_DATE, RunHistory, run_history


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def history(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunHistory]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_engine_url"))
    with pytest.MonkeyPatch.context() as env:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            env.delenv(key)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        made = run_history(tmp_path_factory.mktemp("grid") / "etl-craft", url)
        yield made
        made.ctx.close()
        made.project.engine.dispose()


def cells(grid: RunsGrid) -> dict[int, dict[str, str | None]]:
    """Each run's task statuses by task code, as the grid shows them."""
    return {
        run.run_id: {
            cell.task_code: cell.status.value if cell.status else None for cell in run.cells
        }
        for pipeline in grid.pipelines
        for run in pipeline.runs
    }


def test_the_grid_shows_each_runs_task_statuses_under_its_pipelines_columns(
    history: RunHistory,
) -> None:
    grid = runs_grid(history.ctx, GridFilter())
    columns = {pipeline.pipeline_code: pipeline.task_codes for pipeline in grid.pipelines}
    found = cells(grid)

    assert columns == {
        "solo": ("only",),
        "orders": ("land", "summary", "side"),
        "flaky": ("fetch", "after"),
    }
    assert grid.run_count == len(history.all_runs)
    assert grid.next_before is None
    assert found[history.succeeded] == {"land": "SUCCESS", "summary": "SUCCESS", "side": "SUCCESS"}
    assert found[history.failed] == {"fetch": "FAILED", "after": "SKIPPED"}
    assert found[history.live] == {"land": None, "summary": None, "side": "SUCCESS"}
    assert found[history.backfills[0]] == {"only": None}
    orders = next(p for p in grid.pipelines if p.pipeline_code == "orders")
    assert [run.run_id for run in orders.runs] == [
        history.live,
        history.cancelled,
        history.succeeded,
    ]


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        (GridFilter(status=RunStatus.FAILED), "failed"),
        (GridFilter(status=RunStatus.CANCELLED), "cancelled"),
        (GridFilter(status=RunStatus.IN_PROGRESS), "live"),
        (GridFilter(trigger_kind=TriggerKind.BACKFILL), "backfills"),
        (GridFilter(since=date(2026, 10, 2), until=date(2026, 10, 3)), "late_backfills"),
        (GridFilter(since=LIVE_RUN_DATE, until=LIVE_RUN_DATE), "manual"),
        (GridFilter(pipeline_code="flaky"), "failed"),
    ],
)
def test_the_grid_filters_by_status_kind_date_and_pipeline(
    history: RunHistory, wanted: GridFilter, expected: str
) -> None:
    expected_runs: dict[str, set[int]] = {
        "failed": {history.failed},
        "cancelled": {history.cancelled},
        "live": {history.live},
        "backfills": set(history.backfills),
        "late_backfills": set(history.backfills[1:]),
        "manual": {history.cancelled, history.live},
    }

    assert set(cells(runs_grid(history.ctx, wanted))) == expected_runs[expected]


def test_pages_of_the_grid_cover_every_run_once_newest_first(history: RunHistory) -> None:
    seen: list[int] = []
    before: int | None = None
    pages = 0
    while True:
        grid = runs_grid(history.ctx, GridFilter(limit=3, before=before))
        page = sorted(cells(grid), reverse=True)
        assert len(page) == grid.run_count <= 3
        seen.extend(page)
        pages += 1
        if grid.next_before is None:
            break
        before = grid.next_before

    assert seen == list(history.all_runs)
    assert pages == 3


def test_the_grid_is_read_with_the_same_number_of_statements_for_any_page_size(
    history: RunHistory,
) -> None:
    sent: list[str] = []

    def count(*args: Any) -> None:
        sent.append(str(args[2]))

    engine = history.ctx.engine.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        runs_grid(history.ctx, GridFilter(limit=1))
        one = [sql for sql in sent if "SELECT" in sql.upper()]
        sent.clear()
        runs_grid(history.ctx, GridFilter(limit=100))
        all_runs = [sql for sql in sent if "SELECT" in sql.upper()]
    finally:
        event.remove(engine, "before_cursor_execute", count)

    assert len(one) == len(all_runs) == 3


def test_a_filter_is_parsed_from_text_and_a_bad_value_names_what_is_expected() -> None:
    assert parse_filter(status="FAILED", kind="", since="2026-01-02") == GridFilter(
        status=RunStatus.FAILED, since=date(2026, 1, 2)
    )
    with pytest.raises(UsageError, match="status 'BROKEN' is not a known value; expected one of"):
        parse_filter(status="BROKEN")
    with pytest.raises(UsageError, match="since '2026-13-01' is not a date; expected YYYY-MM-DD"):
        parse_filter(since="2026-13-01")


def test_a_page_size_out_of_bounds_or_an_empty_date_range_is_refused(
    history: RunHistory,
) -> None:
    with pytest.raises(UsageError, match="a page of runs holds 1 to 100 runs, not 0"):
        runs_grid(history.ctx, GridFilter(limit=0))
    with pytest.raises(UsageError, match="the first is after the last"):
        runs_grid(history.ctx, GridFilter(since=date(2026, 2, 1), until=date(2026, 1, 1)))


def test_a_failed_task_shows_its_attempt_error_in_the_run_detail(history: RunHistory) -> None:
    detail = run_detail(history.ctx, history.failed)
    [fetch] = detail.attempts_of("fetch")
    task = next(task for task in detail.run.tasks if task.task_code == "fetch")

    assert task.status is TaskRunStatus.FAILED
    assert fetch.attempt_number == 1
    assert fetch.status.value == "FAILED"
    assert FLAKY_ERROR in (fetch.error or "")
    assert fetch.host is not None
    assert fetch.seconds is not None
    assert fetch.seconds >= 0
    assert detail.attempts_of("after") == ()
