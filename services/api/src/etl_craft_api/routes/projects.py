"""The projects of the Engine DB: each one's endpoints live under /projects/{project}."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from etl_craft.operations.projects import list_projects
from etl_craft_api.auth import Viewer
from etl_craft_api.documents import document
from etl_craft_api.routes.params import ProjectCode
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/projects", tags=["projects"], route_class=StrictRoute)


@router.get("", summary="the active projects of the Engine DB, and the service's own")
def get_projects(ctx: Viewer) -> JSONResponse:
    return document(ctx, list_projects(ctx))


def project_in_path(project: ProjectCode) -> str:
    """Declares {project} of the project-scoped paths; auth.service_context acts on it."""
    return project
