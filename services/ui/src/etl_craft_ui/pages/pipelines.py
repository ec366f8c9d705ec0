"""Pipelines: the list (schedule, next run, last status and a strip of recent runs, pause
state), a pipeline's page with its runs x tasks grid, its DAG coloured by a selected run's task
statuses and that run's timeline, and for operators pause, resume and Run now (a QUEUED run
for etl-craft server, as the API's trigger writes it)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import EtlCraftError, NotFoundError
from etl_craft.operations.catalog.dag import pipeline_dag
from etl_craft.operations.catalog.snapshot import read_catalog
from etl_craft.operations.catalog.views import Catalog, PipelineEntry
from etl_craft.operations.context import OperationContext
from etl_craft.operations.http_statuses import status_of
from etl_craft.operations.inspect import PipelineSummary, list_pipelines
from etl_craft.operations.interventions.actions import require_reason
from etl_craft.operations.interventions.log import intervention_log
from etl_craft.operations.interventions.pauses import PauseRequest, pause, resume
from etl_craft.operations.runs.detail import run_detail
from etl_craft.operations.runs.grid import parse_day, parse_filter
from etl_craft.operations.runs.history import run_by_id
from etl_craft.operations.runs.triggers import TriggerRequest, trigger_run
from etl_craft.operations.runs.views import RunView
from etl_craft_ui.flash import redirect_with_message
from etl_craft_ui.forms import Form
from etl_craft_ui.gantt import Timeline, timeline
from etl_craft_ui.links import links_of
from etl_craft_ui.pages.runs import grid_values
from etl_craft_ui.params import PipelineCode, RunId
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Operator, SignedIn, Viewer

router = APIRouter(tags=["pipelines"])
RUNS_SHOWN = 20
STRIP_RUNS = 14  # the recent runs each pipeline's strip shows on the list, oldest first
LIVE = frozenset({RunStatus.QUEUED, RunStatus.IN_PROGRESS})


@router.get("/pipelines")
def pipelines_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    catalog = read_catalog(ctx, runs_per_pipeline=STRIP_RUNS)
    recent = {entry.code: tuple(reversed(entry.runs)) for entry in catalog.pipelines}
    return render(request, "pipelines.html", session, listed=list_pipelines(ctx), recent=recent)


@router.get("/pipelines/{code}")
def pipeline_page(
    request: Request, code: PipelineCode, session: SignedIn, ctx: Viewer, run: RunId = None
) -> HTMLResponse:
    return _pipeline_page(request, session, ctx, code, run)


def _pipeline_page(
    request: Request,
    session: SignedIn,
    ctx: OperationContext,
    code: str,
    run: int | None,
    *,
    refusal: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    summary = _summary(ctx, code)
    grid = grid_values(ctx, parse_filter(pipeline_code=code, limit=RUNS_SHOWN))
    shown = grid["grid"].pipelines
    newest = shown[0].runs[0].run_id if shown else None
    selected = _selected(ctx, code, run if run is not None else newest)
    catalog, entry = _catalog_entry(ctx, code)
    return render(
        request,
        "pipeline.html",
        session,
        status_code=status_code,
        pipeline=summary,
        **grid,
        selected=selected,
        timeline=_timeline(ctx, selected),
        live=selected is not None and selected.status in LIVE,
        dag=_dag(ctx, catalog, entry, selected),
        parameters=entry.parameters,
        interventions=intervention_log(ctx, code, limit=20).entries,
        said=refusal,
        today=datetime.now(UTC).date(),
    )


@router.post("/pipelines/{code}/run")
def run_now(
    request: Request, code: PipelineCode, session: SignedIn, fields: Form, ctx: Operator
) -> Response:
    """A QUEUED run of the pipeline for etl-craft server, with the date and reason given."""
    try:
        reason = require_reason(fields.get("reason"), "Run now")
        run_date = parse_day("run date", fields.get("run_date"))
        view = trigger_run(ctx, TriggerRequest(code, run_date, None, reason))
    except EtlCraftError as refusal:
        if status_of(refusal) >= 500:
            raise
        return _pipeline_page(
            request, session, ctx, code, None, refusal=str(refusal), status_code=status_of(refusal)
        )
    said = f"run {view.run_id} of {code} for {view.run_date} is {view.status}: the server runs it"
    return redirect_with_message(request, f"/runs/{view.run_id}", said)


@router.get("/partials/pipelines/{code}/dag")
def dag_fragment(
    request: Request, code: PipelineCode, session: SignedIn, ctx: Viewer, run: RunId = None
) -> HTMLResponse:
    selected = None if run is None else _selected(ctx, code, run)
    catalog, entry = _catalog_entry(ctx, code)
    return render(
        request,
        "_dag.html",
        session,
        pipeline_code=code,
        selected=selected,
        live=selected is not None and selected.status in LIVE,
        dag=_dag(ctx, catalog, entry, selected),
    )


@router.post("/pipelines/{code}/pause")
def pause_pipeline(code: PipelineCode, fields: Form, ctx: Operator) -> RedirectResponse:
    pause(ctx, PauseRequest(code, fields.get("reason")))
    return RedirectResponse(f"/pipelines/{code}", status_code=303)


@router.post("/pipelines/{code}/resume")
def resume_pipeline(code: PipelineCode, fields: Form, ctx: Operator) -> RedirectResponse:
    resume(ctx, PauseRequest(code, fields.get("reason") or None))
    return RedirectResponse(f"/pipelines/{code}", status_code=303)


def _summary(ctx: OperationContext, code: str) -> PipelineSummary:
    found = [p for p in list_pipelines(ctx).pipelines if p.pipeline_code == code]
    if not found:
        raise NotFoundError(
            f"project {ctx.project_code} has no active pipeline {code!r}; the Pipelines page "
            "lists them"
        )
    return found[0]


def _selected(ctx: OperationContext, code: str, run_id: int | None) -> RunView | None:
    if run_id is None:
        return None
    view = run_by_id(ctx, run_id)
    if view.pipeline_code != code:
        raise NotFoundError(
            f"run {run_id} is a run of pipeline {view.pipeline_code}, not of {code}; open it "
            f"from /pipelines/{view.pipeline_code}"
        )
    return view


def _catalog_entry(ctx: OperationContext, code: str) -> tuple[Catalog, PipelineEntry]:
    catalog = read_catalog(ctx, runs_per_pipeline=1)
    found = [p for p in catalog.pipelines if p.code == code]
    if not found:
        raise NotFoundError(
            f"project {ctx.project_code} has no active pipeline {code!r}; the Pipelines page "
            "lists them"
        )
    return catalog, found[0]


def _timeline(ctx: OperationContext, selected: RunView | None) -> Timeline | None:
    if selected is None:
        return None
    return timeline(run_detail(ctx, selected.run_id), datetime.now(UTC))


def _dag(
    ctx: OperationContext, catalog: Catalog, entry: PipelineEntry, selected: RunView | None
) -> str:
    """The DAG, coloured by the selected run, each task it attempted linked to that attempt."""
    if selected is None:
        return pipeline_dag(catalog, entry, links_of(ctx))
    statuses = {t.task_code: t.status.value for t in selected.tasks if t.status is not None}
    attempts = {f"{entry.code}.{t.task_code}": t.attempt_id for t in selected.tasks if t.attempt_id}
    return pipeline_dag(catalog, entry, links_of(ctx, attempts), statuses)
