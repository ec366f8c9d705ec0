"""Interventions: every recorded change to runs and pauses, with who, when, why and what."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.operations.interventions.log import intervention_log
from etl_craft_ui.params import PipelineFilter
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["interventions"])
SHOWN = 200


@router.get("/interventions")
def interventions_page(
    request: Request,
    session: SignedIn,
    ctx: Viewer,
    pipeline: PipelineFilter = None,
) -> HTMLResponse:
    log = intervention_log(ctx, pipeline, SHOWN)
    return render(request, "interventions.html", session, log=log, shown=SHOWN)
