"""Attempts: one attempt, and its log file from a byte offset on."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, StreamingResponse

from etl_craft.operations.logs.attempts import attempt, attempt_log
from etl_craft.operations.logs.lines import masked_chunks
from etl_craft.operations.masking import secrets_redactor
from etl_craft.runtime.http_params import WholeNumber
from etl_craft_api.auth import Viewer
from etl_craft_api.documents import document
from etl_craft_api.routes.params import MAX_ID, Id
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/attempts", tags=["attempts"], route_class=StrictRoute)
NEXT_OFFSET = "X-Next-Offset"

Offset = Annotated[int, WholeNumber, Query(ge=0, le=MAX_ID, description="the byte to start from")]


@router.get("/{attempt_id}", summary="one attempt: status, owner, times, rows and error")
def get_attempt(attempt_id: Id, ctx: Viewer) -> JSONResponse:
    return document(ctx, attempt(ctx, attempt_id))


@router.get(
    "/{attempt_id}/log",
    summary="the attempt's log from a byte offset to its current end",
    description=f"The {NEXT_OFFSET} header is the offset to ask for next to follow the log.",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/plain": {}}}},
)
def get_log(attempt_id: Id, ctx: Viewer, offset: Offset = 0) -> StreamingResponse:
    source = attempt_log(ctx, attempt_id)
    end = source.size()
    start = min(offset, end)
    return StreamingResponse(
        masked_chunks(source, start, end, secrets_redactor(ctx)),
        media_type="text/plain; charset=utf-8",
        headers={NEXT_OFFSET: str(end)},
    )
