"""Liveness and readiness, without a token: for load balancers and orchestrators."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from etl_craft.operations.readiness import readiness
from etl_craft.operations.serialize import to_json
from etl_craft_api.auth import service_context
from etl_craft_api.routing import StrictRoute

router = APIRouter(tags=["health"], route_class=StrictRoute)


@router.get("/healthz", summary="the process is up")
def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz", summary="the Engine DB answers and its schema is current (503 otherwise)")
@router.get("/api/v1/health", summary="readiness, under the API's prefix")
def readyz(request: Request) -> JSONResponse:
    found = readiness(service_context(request))
    return JSONResponse(to_json(found), status_code=200 if found.ready else 503)
