"""The project as a whole: its audit trail and its metadata's validation."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from etl_craft.operations.audit import audit
from etl_craft.operations.validate.report import validate
from etl_craft_api.auth import Viewer
from etl_craft_api.bodies import CODE
from etl_craft_api.documents import document
from etl_craft_api.routes.params import Limit
from etl_craft_api.routing import StrictRoute

router = APIRouter(tags=["project"], route_class=StrictRoute)

PipelineFilter = Annotated[
    str | None, Query(pattern=CODE, max_length=128, description="only this pipeline")
]


@router.get("/audit", summary="recorded commands and metadata changes (etl-craft audit)")
def get_audit(
    ctx: Viewer,
    pipeline_code: PipelineFilter = None,
    since: Annotated[date | None, Query(description="YYYY-MM-DD (UTC)")] = None,
    limit: Limit = 500,
) -> JSONResponse:
    return document(ctx, audit(ctx, pipeline_code, since, limit))


@router.get("/validate", summary="check the metadata without running anything (etl-craft validate)")
def get_validate(ctx: Viewer, pipeline_code: PipelineFilter = None) -> JSONResponse:
    return document(ctx, validate(ctx, pipeline_code))
