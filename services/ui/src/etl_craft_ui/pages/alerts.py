"""Alerts: what the overseer raised on each channel and how its delivery went."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.operations.alerts.deliveries import alert_deliveries
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["alerts"])


@router.get("/alerts")
def alerts_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "alerts.html", session, found=alert_deliveries(ctx))
