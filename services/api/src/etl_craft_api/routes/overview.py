"""What people watch, as the web UI shows it: the project's health, its interventions, and
the workers and pools. The same operations render the UI's Projects, Interventions and Workers
pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from etl_craft.operations.alerts.deliveries import alert_deliveries
from etl_craft.operations.health.project import project_health
from etl_craft.operations.interventions.log import intervention_log
from etl_craft.operations.pools import pools
from etl_craft_api.auth import Viewer
from etl_craft_api.bodies import CODE
from etl_craft_api.documents import document
from etl_craft_api.routes.params import Limit
from etl_craft_api.routing import StrictRoute

router = APIRouter(tags=["project"], route_class=StrictRoute)

PipelineFilter = Annotated[
    str | None, Query(pattern=CODE, max_length=128, description="only this pipeline")
]


@router.get(
    "/project/health",
    summary="running and queued runs, failures and SLA misses today, queued attempts",
)
def get_health(ctx: Viewer) -> JSONResponse:
    return document(ctx, project_health(ctx))


@router.get(
    "/interventions",
    summary="marks, cancels, reruns, pauses and resumes, newest first: who, when, why, what",
)
def get_interventions(
    ctx: Viewer, pipeline_code: PipelineFilter = None, limit: Limit = 100
) -> JSONResponse:
    return document(ctx, intervention_log(ctx, pipeline_code, limit))


@router.get("/pools", summary="each pool's capacity, slots in use and queue; each worker")
def get_pools(ctx: Viewer) -> JSONResponse:
    return document(ctx, pools(ctx))


@router.get(
    "/alerts",
    summary="the alerts the server raised, newest first, and how each delivery went",
)
def get_alerts(ctx: Viewer, limit: Limit = 100) -> JSONResponse:
    return document(ctx, alert_deliveries(ctx, limit))
