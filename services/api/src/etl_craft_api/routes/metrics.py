"""Prometheus metrics of the API process, without a token like /healthz: serve it on a trusted
address. The Engine DB's series come from the overseer; these are this process's own."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from etl_craft_api.routing import StrictRoute

router = APIRouter(tags=["metrics"], route_class=StrictRoute)


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
