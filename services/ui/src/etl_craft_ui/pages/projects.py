"""Projects: the served project's health (running, failed today, SLA misses, queued work),
refreshed in place by its fragment; and the banner every page shows when queued work can't move."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.operations.health.project import project_health
from etl_craft.operations.health.stalls import stalls
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["projects"])


@router.get("/")
def projects_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "projects.html", session, health=project_health(ctx))


@router.get("/partials/project-health")
def health_fragment(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "_health.html", session, health=project_health(ctx))


@router.get("/partials/stalls")
def stalls_fragment(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "_stalls.html", session, stalls=stalls(ctx))
