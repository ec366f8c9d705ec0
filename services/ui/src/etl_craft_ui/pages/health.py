"""Liveness and readiness, without a session: for load balancers and orchestrators."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from etl_craft.operations.readiness import readiness
from etl_craft.operations.serialize import to_json
from etl_craft_ui.sessions import service_context

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    found = readiness(service_context(request))
    return JSONResponse(to_json(found), status_code=200 if found.ready else 503)
