"""Errors as pages: the operation's own message in a message block, with the HTTP status the
API's problem mapping gives the same error; never a trace or SQL.

A request without a valid session is sent to the sign-in form when it asks for a page, and
answered 401 otherwise (fragments, the event stream, form posts); htmx is told to go to the
sign-in form.
"""

from __future__ import annotations

import logging
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from markupsafe import escape
from starlette.exceptions import HTTPException

from etl_craft.core.errors import EtlCraftError
from etl_craft.operations.http_statuses import SERVER_ERROR, UNAVAILABLE, status_of
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import EVENTS, PARTIALS, SignInRequired, current_session

log = logging.getLogger(__name__)
SIGN_IN = "/sign-in"


async def sign_in_required(request: Request, error: Exception) -> Response:
    assert isinstance(error, SignInRequired)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    goto = f"{SIGN_IN}?next={quote(target, safe='')}"
    if request.method == "GET" and not _fragment(request):
        return RedirectResponse(goto, status_code=303)
    return HTMLResponse(
        f"<p class='message error' role='alert'>{escape(error.reason)}</p>",
        status_code=401,
        headers={"HX-Redirect": goto},
    )


async def etl_craft_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, EtlCraftError)
    status = status_of(error)
    if status == UNAVAILABLE:
        # The Engine DB's own message may name hosts and statements; it stays in the log.
        log.warning("%s %s: %s", request.method, request.url.path, error)
        message = "the Engine DB did not answer; try again, and see the UI's log if it persists"
    elif status == SERVER_ERROR:
        log.error("%s %s failed: %s", request.method, request.url.path, error)
        message = f"{type(error).__name__}: the request failed on the server; see the UI's log"
    else:
        message = str(error)
    return error_page(request, status, message)


async def http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    message = error.detail if isinstance(error.detail, str) else "the request was refused"
    if error.status_code == 404 and message == "Not Found":
        message = f"there is no page at {request.url.path[:200]}"
    if error.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path[:200]}"
    return error_page(request, error.status_code, message)


async def validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    # Only where and what: the input itself may be huge or a secret.
    said = "; ".join(
        f"{'.'.join(str(part) for part in item.get('loc', ()))}: {item.get('msg', '')}"
        for item in error.errors()
    )
    return error_page(request, 422, f"the request is not valid: {said}")


async def unexpected_error(request: Request, error: Exception) -> Response:
    log.error("%s %s failed unexpectedly", request.method, request.url.path, exc_info=error)
    return error_page(request, SERVER_ERROR, "the request failed on the server; see the UI's log")


def error_page(request: Request, status: int, message: str) -> Response:
    """The message alone for a fragment, else a page around it."""
    template = "message.html" if _fragment(request) else "error.html"
    try:
        session = current_session(request)
        return render(
            request, template, session, status_code=status, message=message, status=status
        )
    except EtlCraftError:
        # The Engine DB is needed to mask secrets (and to know the session); without it, the
        # status and a fixed message only.
        log.warning("%s %s: the error page could not be rendered", request.method, request.url)
        return PlainTextResponse(f"{status}: the UI cannot answer now; see its log", status)


def _fragment(request: Request) -> bool:
    """Whether the request comes from a page's script (htmx, its event stream), not a person."""
    path = request.url.path
    return path.startswith(PARTIALS) or path == EVENTS or "hx-request" in request.headers


def install(app: FastAPI) -> None:
    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(EtlCraftError, etl_craft_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, unexpected_error)
