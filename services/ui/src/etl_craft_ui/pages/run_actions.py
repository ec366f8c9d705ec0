"""What an operator does to a run from its page: cancel it, mark it or one of its tasks, rerun a
task (with its downstream task runs or not). Each form asks for the reason and calls the
operation the API's route calls. Done, it redirects to the run page, which shows the operation's
message once; refused, the run page comes back with the refusal and the API's status for it."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import Response

from etl_craft.core.errors import EtlCraftError, UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.http_statuses import status_of
from etl_craft.operations.interventions.actions import MarkRequest, cancel, mark
from etl_craft.operations.runs.detail import run_detail
from etl_craft.operations.runs.history import pipeline_of_run
from etl_craft.operations.runs.reruns import RerunRequest, queue_rerun
from etl_craft_ui.flash import redirect_with_message
from etl_craft_ui.forms import Form
from etl_craft_ui.pages.runs import RunId
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Operator, SignedIn

router = APIRouter(tags=["runs"])
MAX_ROWS = 2**62


@router.post("/runs/{run_id}/cancel")
def post_cancel(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> Response:
    def act() -> str:
        return cancel(ctx, pipeline_of_run(ctx, run_id), run_id, form.get("reason")).message

    return _acted(request, session, ctx, run_id, act)


@router.post("/runs/{run_id}/mark")
def post_mark(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> Response:
    def act() -> str:
        pipeline = pipeline_of_run(ctx, run_id)
        wanted = MarkRequest(pipeline, form.get("status", ""), form.get("reason", ""), run_id)
        return mark(ctx, wanted).message

    return _acted(request, session, ctx, run_id, act)


@router.post("/runs/{run_id}/mark-task")
def post_mark_task(
    request: Request, session: SignedIn, ctx: Operator, run_id: RunId, form: Form
) -> Response:
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
) -> Response:
    def act() -> str:
        pipeline = pipeline_of_run(ctx, run_id)
        # An unchecked checkbox sends nothing; a checked one sends its value, "on" by default.
        downstream = form.get("with_downstream") == "on"
        task = form.get("task", "")
        wanted = RerunRequest(pipeline, task, form.get("reason"), run_id, downstream)
        return queue_rerun(ctx, wanted).message

    return _acted(request, session, ctx, run_id, act)


def _acted(
    request: Request,
    session: SignedIn,
    ctx: OperationContext,
    run_id: int,
    act: Callable[[], str],
) -> Response:
    """A redirect to the run page, which then shows what ``act`` said; or the run page with
    ``act``'s refusal and the API's status for it."""
    try:
        said = act()
    except EtlCraftError as refusal:
        status = status_of(refusal)
        if status >= 500:
            raise
        detail = run_detail(ctx, run_id)
        return render(
            request,
            "runs/run_page.html",
            session,
            status_code=status,
            detail=detail,
            said=str(refusal),
            said_kind="error",
        )
    return redirect_with_message(request, f"/runs/{run_id}", said)


def _rows(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or int(text) > MAX_ROWS:
        raise UsageError(f"rows {text[:40]!r} is not a row count; expected a whole number >= 0")
    return int(text)
