"""Runs: the grid of runs x tasks, a run's page with its tasks and attempts, and each task's
explain panel. The live parts are fragments under /partials/, each one request built from the
same operation as its page."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse

from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.operations.context import OperationContext
from etl_craft.operations.explain.task import explain_task
from etl_craft.operations.runs.detail import run_detail
from etl_craft.operations.runs.grid import DEFAULT_PAGE, GridFilter, parse_filter, runs_grid
from etl_craft.operations.runs.history import pipeline_of_run
from etl_craft.runtime.http_params import WholeNumber
from etl_craft_ui.flash import forget_message, message_for
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["runs"])

MAX_ID = 2**62
RunId = Annotated[int, WholeNumber, Path(ge=1, le=MAX_ID, description="the run's id")]
TaskCode = Annotated[str, Path(min_length=1, max_length=128, description="the task's code")]
Text = Annotated[str | None, Query(max_length=128)]
Limit = Annotated[int, WholeNumber, Query(ge=1, le=MAX_ID)]
Before = Annotated[int | None, WholeNumber, Query(ge=1, le=MAX_ID)]
STATUSES = tuple(status.value for status in RunStatus)
KINDS = tuple(kind.value for kind in TriggerKind)


def grid_filter(
    status: Text = None,
    kind: Text = None,
    since: Text = None,
    until: Text = None,
    pipeline: Text = None,
    limit: Limit = DEFAULT_PAGE,
    before: Before = None,
) -> GridFilter:
    return parse_filter(
        status=status,
        kind=kind,
        since=since,
        until=until,
        pipeline_code=pipeline,
        limit=limit,
        before=before,
    )


# The page and its live fragment take the same filter from the same query parameters.
Wanted = Annotated[GridFilter, Depends(grid_filter)]


def filter_query(wanted: GridFilter, *, before: int | None) -> str:
    """The query string of ``wanted`` with the page starting before ``before``."""
    fields = {
        "status": wanted.status.value if wanted.status else "",
        "kind": wanted.trigger_kind.value if wanted.trigger_kind else "",
        "since": wanted.since.isoformat() if wanted.since else "",
        "until": wanted.until.isoformat() if wanted.until else "",
        "pipeline": wanted.pipeline_code or "",
        "limit": str(wanted.limit) if wanted.limit != DEFAULT_PAGE else "",
        "before": str(before) if before else "",
    }
    return urlencode({key: value for key, value in fields.items() if value})


def grid_values(ctx: OperationContext, wanted: GridFilter) -> dict[str, Any]:
    """The grid of ``wanted`` and the query strings of its live fragment and its pages."""
    grid = runs_grid(ctx, wanted)
    older = grid.next_before
    return {
        "grid": grid,
        "query": filter_query(wanted, before=wanted.before),
        "older_query": filter_query(wanted, before=older) if older else None,
        "newest_query": filter_query(wanted, before=None) if wanted.before else None,
    }


@router.get("/runs")
def runs_page(
    request: Request,
    session: SignedIn,
    ctx: Viewer,
    wanted: Wanted,
) -> HTMLResponse:
    values = grid_values(ctx, wanted)
    return render(request, "runs/grid_page.html", session, statuses=STATUSES, kinds=KINDS, **values)


@router.get("/partials/runs-grid")
def runs_grid_fragment(
    request: Request,
    session: SignedIn,
    ctx: Viewer,
    wanted: Wanted,
) -> HTMLResponse:
    return render(request, "runs/grid.html", session, **grid_values(ctx, wanted))


@router.get("/runs/{run_id}")
def run_page(request: Request, session: SignedIn, ctx: Viewer, run_id: RunId) -> HTMLResponse:
    detail, said = run_detail(ctx, run_id), message_for(request)
    page = render(
        request, "runs/run_page.html", session, detail=detail, said=said, said_kind="info"
    )
    forget_message(request, page)
    return page


@router.get("/partials/runs/{run_id}/tasks")
def run_tasks_fragment(
    request: Request, session: SignedIn, ctx: Viewer, run_id: RunId
) -> HTMLResponse:
    detail = run_detail(ctx, run_id)
    return render(request, "runs/tasks.html", session, detail=detail, refreshed=True)


@router.get("/partials/runs/{run_id}/tasks/{task}/explain")
def explain_fragment(
    request: Request, session: SignedIn, ctx: Viewer, run_id: RunId, task: TaskCode
) -> HTMLResponse:
    explained = explain_task(ctx, pipeline_of_run(ctx, run_id), task, run_id)
    return render(request, "runs/explain.html", session, explained=explained)
