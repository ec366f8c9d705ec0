"""What an operator does to a run from its page: cancel it, mark it or one of its tasks, rerun a
task. Each form asks for the reason and calls the operation the API's route calls; the run page
comes back with the operation's message, or with its refusal and the API's status for it."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.core.errors import EtlCraftError, UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.history import pipeline_of_run
from etl_craft.operations.http_statuses import status_of
from etl_craft.operations.interventions import MarkRequest, cancel, mark
from etl_craft.operations.reruns import RerunRequest, queue_rerun
from etl_craft.operations.run_detail import run_detail
from etl_craft_ui.forms import Form
from etl_craft_ui.pages.runs import RunId
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Operator, SignedIn

router = APIRouter(tags=["runs"])
MAX_ROWS = 2**62


@router.post("/runs/{run_id}/cancel")
def post_cancel(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> HTMLResponse:
    def act() -> str:
        return cancel(ctx, pipeline_of_run(ctx, run_id), run_id, form.get("reason")).message

    return _acted(request, session, ctx, run_id, act)


@router.post("/runs/{run_id}/mark")
def post_mark(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> HTMLResponse:
    def act() -> str:
        pipeline = pipeline_of_run(ctx, run_id)
        wanted = MarkRequest(pipeline, form.get("status", ""), form.get("reason", ""), run_id)
        return mark(ctx, wanted).message

    return _acted(request, session, ctx, run_id, act)


@router.post("/runs/{run_id}/mark-task")
def post_mark_task(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> HTMLResponse:
    def act() -> str:
        pipeline = pipeline_of_run(ctx, run_id)
        wanted = MarkRequest(
            pipeline,
            form.get("status", ""),
            form.get("reason", ""),
            run_id,
            form.get("task", ""),
            _rows(form.get("rows", "")),
        )
        return mark(ctx, wanted).message

    return _acted(request, session, ctx, run_id, act)


@router.post("/runs/{run_id}/rerun")
def post_rerun(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> HTMLResponse:
    def act() -> str:
        pipeline = pipeline_of_run(ctx, run_id)
        wanted = RerunRequest(pipeline, form.get("task", ""), form.get("reason"), run_id)
        return queue_rerun(ctx, wanted).message

    return _acted(request, session, ctx, run_id, act, done_status=202)


def _acted(
    request: Request,
    session: SignedIn,
    ctx: OperationContext,
    run_id: int,
    act: Callable[[], str],
    *,
    done_status: int = 200,
) -> HTMLResponse:
    """The run page after ``act``: its message, or its refusal with the API's status."""
    try:
        said, kind, status = act(), "info", done_status
    except EtlCraftError as refusal:
        said, kind, status = str(refusal), "error", status_of(refusal)
        if status >= 500:
            raise
    detail = run_detail(ctx, run_id)
    return render(
        request,
        "runs/run_page.html",
        session,
        status_code=status,
        detail=detail,
        said=said,
        said_kind=kind,
    )


def _rows(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or int(text) > MAX_ROWS:
        raise UsageError(f"rows {text[:40]!r} is not a row count; expected a whole number >= 0")
    return int(text)
