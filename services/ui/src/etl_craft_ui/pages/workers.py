"""Workers and pools: capacity, slots in use, queue depth and age, heartbeats; live."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.operations.pools import pools
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["workers"])


@router.get("/workers")
def workers_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "workers.html", session, found=pools(ctx))


@router.get("/partials/workers")
def workers_fragment(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "_workers.html", session, found=pools(ctx))
