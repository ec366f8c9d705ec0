"""Pipelines: the list (schedule, next run, last status, pause state), a pipeline's page with
its DAG coloured by a selected run's task statuses, and pause and resume for operators."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.operations.catalog import read_catalog
from etl_craft.operations.catalog_dag import pipeline_dag
from etl_craft.operations.catalog_views import Catalog, PipelineEntry
from etl_craft.operations.context import OperationContext
from etl_craft.operations.history import history, run_by_id
from etl_craft.operations.inspect import PipelineSummary, list_pipelines
from etl_craft.operations.intervention_log import intervention_log
from etl_craft.operations.pauses import PauseRequest, pause, resume
from etl_craft.operations.run_views import RunView
from etl_craft_ui.forms import Form
from etl_craft_ui.links import UiLinks, links_of
from etl_craft_ui.params import PipelineCode, RunId
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Operator, SignedIn, Viewer

router = APIRouter(tags=["pipelines"])
RUNS_SHOWN = 20
LIVE = frozenset({RunStatus.QUEUED, RunStatus.IN_PROGRESS})


@router.get("/pipelines")
def pipelines_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "pipelines.html", session, listed=list_pipelines(ctx))


@router.get("/pipelines/{code}")
def pipeline_page(
    request: Request, code: PipelineCode, session: SignedIn, ctx: Viewer, run: RunId = None
) -> HTMLResponse:
    summary = _summary(ctx, code)
    runs = history(ctx, code, RUNS_SHOWN).runs
    newest = runs[0].run_id if runs else None
    selected = _selected(ctx, code, run if run is not None else newest)
    catalog, entry = _catalog_entry(ctx, code)
    return render(
        request,
        "pipeline.html",
        session,
        pipeline=summary,
        runs=runs,
        selected=selected,
        live=selected is not None and selected.status in LIVE,
        dag=_dag(catalog, entry, selected, links_of(ctx)),
        parameters=entry.parameters,
        interventions=intervention_log(ctx, code, limit=20).entries,
    )


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
        dag=_dag(catalog, entry, selected, links_of(ctx)),
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


def _dag(catalog: Catalog, entry: PipelineEntry, selected: RunView | None, links: UiLinks) -> str:
    statuses = None
    if selected is not None:
        statuses = {t.task_code: t.status.value for t in selected.tasks if t.status is not None}
    return pipeline_dag(catalog, entry, links, statuses)
