"""Sign in with an API token or a user name and password, and sign out.

The sign-in form carries a nonce of its own (a short-lived signed cookie and the same value in
the form), so that another site cannot sign a browser in under its own token; each nonce serves
one sign-in (ui_sessions records it). Failed sign-ins are recorded and throttled per client and
per account; signing out ends the session in the Engine DB, for every UI process.
"""

from __future__ import annotations

import logging
import secrets
import time

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.ui_sessions import SignInRequest, SignInThrottledError
from etl_craft.operations.access.ui_sessions import sign_in as sign_in_with_token
from etl_craft.operations.access.ui_sessions import sign_out as end_session
from etl_craft_ui.forms import Form
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import (
    CSRF_FIELD,
    SignedIn,
    Viewer,
    clear_session_cookie,
    current_session,
    open_session,
    service_context,
    set_session_cookie,
    ui_settings,
)
from etl_craft_ui.signing import sign, unsign

log = logging.getLogger(__name__)
router = APIRouter(tags=["sign-in"])
SIGN_IN_COOKIE = "etl_craft_sign_in"
SIGN_IN_SECONDS = 15 * 60


@router.get("/sign-in")
def sign_in_form(request: Request, next: str = "/") -> Response:
    if current_session(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return _form(request, safe_next(next), problem=None, status_code=200)


@router.post("/sign-in")
def sign_in(request: Request, fields: Form) -> Response:
    goto = safe_next(fields.get("next", "/"))
    if not _form_csrf_valid(request, fields.get(CSRF_FIELD, "")):
        problem = "the sign-in form expired or did not come from this site; sign in again"
        return _form(request, goto, problem=problem, status_code=403)
    settings = ui_settings(request)
    attempt = SignInRequest(
        fields.get("token", "").strip(),
        fields.get(CSRF_FIELD, ""),
        client_of(request),
        user_name=fields.get("user_name", "").strip(),
        password=fields.get("password", ""),
    )
    try:
        grant = sign_in_with_token(service_context(request), attempt, settings.sign_in_policy)
    except SignInThrottledError as error:
        log.warning("sign-in refused to %s: %s", attempt.client, error)
        refused = _form(request, goto, problem=str(error), status_code=429)
        refused.headers["Retry-After"] = str(error.retry_after)
        return refused
    except AuthenticationError as error:
        log.warning("sign-in failed from %s: %s", attempt.client, error)
        return _form(request, goto, problem=str(error), status_code=401)
    response = RedirectResponse(goto, status_code=303)
    set_session_cookie(response, open_session(grant, settings), settings)
    response.delete_cookie(SIGN_IN_COOKIE, path="/sign-in")
    return response


@router.post("/sign-out")
def sign_out(request: Request, session: SignedIn, ctx: Viewer) -> Response:
    end_session(ctx, session.session_id)
    response = RedirectResponse("/sign-in", status_code=303)
    clear_session_cookie(response, ui_settings(request))
    return response


def client_of(request: Request) -> str:
    """The address a request came from, as a client is throttled by."""
    return request.client.host if request.client else "unknown"


def safe_next(target: str) -> str:
    """A path of this site to go to after signing in; never another site's address."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or len(target) > 2000:
        return "/"
    return target


def sign_in_page(request: Request, goto: str, problem: str | None, status_code: int) -> Response:
    """The sign-in form, with ``problem`` said above it."""
    return _form(request, goto, problem=problem, status_code=status_code)


def _form(request: Request, goto: str, *, problem: str | None, status_code: int) -> Response:
    settings = ui_settings(request)
    nonce = secrets.token_urlsafe(24)
    response = render(
        request,
        "sign_in.html",
        None,
        status_code=status_code,
        next=goto,
        problem=problem,
        sign_in_csrf=nonce,
        project=service_context(request).project_code,
        single_sign_on=_single_sign_on(request),
    )
    value = sign({"c": nonce, "e": int(time.time()) + SIGN_IN_SECONDS}, settings.secret)
    response.set_cookie(
        SIGN_IN_COOKIE,
        value,
        max_age=SIGN_IN_SECONDS,
        path="/sign-in",
        httponly=True,
        samesite="strict",
        secure=settings.secure_cookies,
    )
    return response


def _single_sign_on(request: Request) -> bool:
    connector = service_context(request).connector
    return connector is not None and connector.auth.oidc


def _form_csrf_valid(request: Request, given: str) -> bool:
    payload = unsign(request.cookies.get(SIGN_IN_COOKIE, ""), ui_settings(request).secret)
    if payload is None or int(payload.get("e", 0)) <= time.time():
        return False
    return secrets.compare_digest(str(payload.get("c", "")).encode(), given.encode())
