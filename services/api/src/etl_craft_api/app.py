"""The FastAPI application: health at the root, version 1 of the API under /api/v1.

Other routers (metrics, say) are added to what ``create_app`` returns with include_router.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from starlette.types import ASGIApp

from etl_craft import __version__
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.access_log import AccessLog
from etl_craft.runtime.http_headers import SecurityHeaders
from etl_craft.runtime.http_tracing import instrument_app
from etl_craft.runtime.metrics import time_engine_statements
from etl_craft_api import problems
from etl_craft_api.limits import BodyLimit
from etl_craft_api.routes import (
    attempts,
    health,
    metrics,
    overview,
    pipelines,
    project,
    projects,
    runs,
    tokens,
    users,
)
from etl_craft_api.routing import deprecated_path
from etl_craft_api.screening import Screening

PREFIX = "/api/v1"
ACCESS_LOGGER = "etl_craft_api.access"
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DESCRIPTION = """\
The etl-craft HTTP API. Every request but health and readiness carries
`Authorization: Bearer <token>` (etl-craft token create). Roles: viewer reads; operator also
triggers, cancels, pauses, resumes, marks, reruns, skips and backfills; developer also edits
the metadata; admin also manages tokens and users. The token's name is the actor recorded for
every action it takes. Errors are problem documents (RFC 7807). Documents are those
`etl-craft ... --format json` prints.

One Engine DB holds many projects: a project's endpoints are under
`/api/v1/projects/{project}/...` (GET /api/v1/projects lists them). The same paths without
`/projects/{project}` act on the service's own project (Orchestration.project); they are
deprecated and will be removed in the next minor release.
"""


class ApiApp(FastAPI):
    """FastAPI with etl-craft's request guards around its whole stack."""

    max_body_bytes = DEFAULT_MAX_BODY_BYTES

    def build_middleware_stack(self) -> ASGIApp:
        # Outside Starlette's own outermost middleware, so that its 500 answers are logged and
        # carry the headers, and a refused request never reaches routing or authentication.
        inner = Screening(super().build_middleware_stack())
        return AccessLog(SecurityHeaders(BodyLimit(inner, self.max_body_bytes)), ACCESS_LOGGER)


def create_app(
    context: OperationContext | None, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> FastAPI:
    """The app serving ``context``'s project; None builds it for its OpenAPI document only."""
    app = ApiApp(
        title="etl-craft",
        version=__version__,
        description=DESCRIPTION,
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
        # A redirect would name the Host header's host; a path with a trailing slash is a 404.
        redirect_slashes=False,
    )
    app.max_body_bytes = max_body_bytes
    app.state.context = context
    instrument_app(app)  # a span per request once tracing is configured; no-op spans otherwise
    problems.install(app)
    app.include_router(health.router)
    app.include_router(metrics.router)
    time_engine_statements()  # /metrics serves this process's Engine DB statement latency
    app.include_router(version_1())
    return app


# Endpoints that act on one project: under /projects/{project}, and, deprecated for one minor
# release (docs/reference/compatibility.md), at their earlier paths, on the service's project.
PROJECT_SCOPED = (pipelines, runs, attempts, project, overview, tokens)


def version_1() -> APIRouter:
    router = APIRouter(prefix=PREFIX)
    router.include_router(projects.router)
    scoped = APIRouter(
        prefix="/projects/{project}", dependencies=[Depends(projects.project_in_path)]
    )
    for module in PROJECT_SCOPED:
        scoped.include_router(module.router)
    router.include_router(scoped)
    for module in PROJECT_SCOPED:
        router.include_router(
            module.router, deprecated=True, dependencies=[Depends(deprecated_path)]
        )
    router.include_router(users.router)
    return router
