"""Pipelines: list, inspect, their runs; trigger, backfill, pause and resume (operator)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from etl_craft.operations.inspect import list_pipelines, pipeline_graph, pipeline_steps
from etl_craft.operations.interventions.pauses import PauseRequest, pause, resume
from etl_craft.operations.runs.backfills import BackfillRequest, queue_backfill
from etl_craft.operations.runs.history import history
from etl_craft.operations.runs.triggers import TriggerRequest, trigger_run
from etl_craft_api.auth import Operator, Viewer
from etl_craft_api.bodies import BackfillDates, MaybeWhy, Trigger, Why
from etl_craft_api.documents import document
from etl_craft_api.routes.params import Before, Limit, PipelineCode
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/pipelines", tags=["pipelines"], route_class=StrictRoute)


@router.get("", summary="the project's active pipelines (etl-craft list)")
def get_pipelines(ctx: Viewer) -> JSONResponse:
    return document(ctx, list_pipelines(ctx))


@router.get("/{code}", summary="a pipeline's tasks and edges (etl-craft graph)")
def get_pipeline(code: PipelineCode, ctx: Viewer) -> JSONResponse:
    return document(ctx, pipeline_graph(ctx, code))


@router.get("/{code}/steps", summary="a pipeline's waves, for display (etl-craft steps)")
def get_steps(code: PipelineCode, ctx: Viewer) -> JSONResponse:
    return document(ctx, pipeline_steps(ctx, code))


@router.get("/{code}/runs", summary="a pipeline's runs, newest first (etl-craft history)")
def get_runs(
    code: PipelineCode, ctx: Viewer, limit: Limit = 20, before: Before = None
) -> JSONResponse:
    return document(ctx, history(ctx, code, limit, before))


@router.post(
    "/{code}/runs",
    status_code=202,
    summary="queue a run for etl-craft server: the named or live run, else a new one",
)
def post_run(code: PipelineCode, body: Trigger, ctx: Operator) -> JSONResponse:
    view = trigger_run(ctx, TriggerRequest(code, body.run_date, body.run_key, body.reason))
    location = {"Location": f"/api/v1/projects/{ctx.project_code}/runs/{view.run_id}"}
    return document(ctx, view, status=202, headers=location)


@router.post(
    "/{code}/backfills",
    status_code=202,
    summary="queue one BACKFILL run per date; etl-craft server runs them in date order",
)
def post_backfill(code: PipelineCode, body: BackfillDates, ctx: Operator) -> JSONResponse:
    dates = f"{body.first.isoformat()}:{body.last.isoformat()}"
    return document(ctx, queue_backfill(ctx, BackfillRequest(code, dates, body.reason)), status=202)


@router.post("/{code}/pause", summary="stop new task starts of the pipeline")
def post_pause(code: PipelineCode, body: Why, ctx: Operator) -> JSONResponse:
    return document(ctx, pause(ctx, PauseRequest(code, body.reason)))


@router.post("/{code}/resume", summary="lift the pipeline's pause")
def post_resume(code: PipelineCode, body: MaybeWhy, ctx: Operator) -> JSONResponse:
    return document(ctx, resume(ctx, PauseRequest(code, body.reason)))
