"""Backfills: start one (pipeline, dates, reason) for etl-craft server to run, follow each
pipeline's backfill runs, and stop a backfill, each through the operation the API calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse

from etl_craft.core.errors import EtlCraftError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.http_statuses import status_of
from etl_craft.operations.inspect import list_pipelines
from etl_craft.operations.runs.backfill_progress import backfill_progress, stop_backfill
from etl_craft.operations.runs.backfills import BackfillRequest, queue_backfill
from etl_craft_ui.forms import Form
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Operator, SignedIn, UiSession, Viewer

router = APIRouter(tags=["backfills"])
PipelineCode = Annotated[str, Path(min_length=1, max_length=128, description="the pipeline")]


@router.get("/backfills")
def backfills_page(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return _page(request, session, ctx)


@router.get("/partials/backfills")
def backfills_fragment(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(request, "backfills/progress.html", session, progress=backfill_progress(ctx))


@router.post("/backfills")
def post_backfill(request: Request, session: SignedIn, ctx: Operator, form: Form) -> HTMLResponse:
    def act() -> str:
        dates = f"{form.get('from', '')}:{form.get('to', '')}"
        wanted = BackfillRequest(form.get("pipeline", ""), dates, form.get("reason"))
        return queue_backfill(ctx, wanted).message

    return _acted(request, session, ctx, act, done_status=202)


@router.post("/backfills/{pipeline}/stop")
def post_stop(
    request: Request, session: SignedIn, ctx: Operator, pipeline: PipelineCode, form: Form
) -> HTMLResponse:
    return _acted(
        request, session, ctx, lambda: stop_backfill(ctx, pipeline, form.get("reason")).message
    )


def _acted(
    request: Request,
    session: UiSession,
    ctx: OperationContext,
    act: Callable[[], str],
    *,
    done_status: int = 200,
) -> HTMLResponse:
    try:
        said, kind, status = act(), "info", done_status
    except EtlCraftError as refusal:
        said, kind, status = str(refusal), "error", status_of(refusal)
        if status >= 500:
            raise
    return _page(request, session, ctx, status=status, said=said, said_kind=kind)


def _page(
    request: Request, session: UiSession, ctx: OperationContext, *, status: int = 200, **said: str
) -> HTMLResponse:
    return render(
        request,
        "backfills/page.html",
        session,
        status_code=status,
        progress=backfill_progress(ctx),
        pipelines=list_pipelines(ctx).pipelines,
        said=said.get("said"),
        said_kind=said.get("said_kind", "info"),
    )
