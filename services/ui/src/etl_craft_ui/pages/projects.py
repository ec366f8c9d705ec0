"""Projects: the served project's health at a glance."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.operations.inspect import list_pipelines
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["projects"])


@router.get("/")
def projects_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "projects.html", session, pipelines=list_pipelines(ctx))
