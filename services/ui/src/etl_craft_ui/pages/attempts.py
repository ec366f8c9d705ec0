"""An attempt: its status, exit code, owner, host and lease, and a live tail of its log.

The log is read as the API's log route reads it, masked by the project's secrets; the tail
fragment is asked for from a byte offset, so each poll carries only what was written since,
and only whole lines while the attempt runs, so a secret is never split between two reads.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.logs.attempts import AttemptView, attempt, attempt_log
from etl_craft.operations.logs.lines import LogRead, read_lines
from etl_craft.operations.masking import secrets_redactor
from etl_craft.runtime.http_params import WholeNumber
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import SignedIn, Viewer

router = APIRouter(tags=["attempts"])
log = logging.getLogger(__name__)

MAX_ID = 2**62
AttemptId = Annotated[int, WholeNumber, Path(ge=1, le=MAX_ID, description="the attempt's id")]
Offset = Annotated[
    int, WholeNumber, Query(ge=0, le=MAX_ID, description="the byte to read the log from")
]


@router.get("/attempts/{attempt_id}")
def attempt_page(
    request: Request, session: SignedIn, ctx: Viewer, attempt_id: AttemptId
) -> HTMLResponse:
    view = attempt(ctx, attempt_id)
    read, problem = _tail(ctx, view, 0)
    return render(
        request, "attempts/attempt.html", session, attempt=view, read=read, problem=problem
    )


@router.get("/partials/attempts/{attempt_id}/log")
def log_fragment(
    request: Request, session: SignedIn, ctx: Viewer, attempt_id: AttemptId, offset: Offset = 0
) -> HTMLResponse:
    view = attempt(ctx, attempt_id)
    read, problem = _tail(ctx, view, offset)
    return render(request, "attempts/log.html", session, attempt=view, read=read, problem=problem)


def _tail(ctx: OperationContext, view: AttemptView, offset: int) -> tuple[LogRead, str | None]:
    """What the log holds from ``offset`` on (nothing yet while the attempt has no log), or
    why it can't be read here: a log on another host is no reason to hide the attempt."""
    if not view.has_log:
        return LogRead("", offset), None
    try:
        source = attempt_log(ctx, view.attempt_id)
        start = min(offset, source.size())
    except NotFoundError as gone:
        return LogRead("", offset), str(gone)
    except ConfigurationError as refused:
        # The store or the worker token of this server is not set as the log needs: its own
        # log says how; the page says only that the log can't be read here.
        log.error("attempt %s: its log can't be read: %s", view.attempt_id, refused)
        return LogRead("", offset), "this server is not configured to read this log"
    return read_lines(source, start, secrets_redactor(ctx), partial=view.status.terminal), None
