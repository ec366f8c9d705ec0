"""Sign in through the OpenID provider (Auth.oidc_issuer): the authorization code flow with PKCE.

``/sign-in/oidc`` sends the browser to the provider with a fresh state, nonce and PKCE
challenge; the state, the nonce, the verifier and where to go afterwards wait in a short-lived
signed cookie. The callback refuses a state that is not that cookie's, trades the code for the
ID token (oidc.py), and begins a session for the user it names, who is created at their first
sign-in. The state is the sign-in's one-time nonce in AUD_UI_SIGN_INS, so a callback replayed
is refused.

The provider's redirect back is a cross-site navigation, which carries no SameSite=Strict
cookie: the flow's cookie is Lax, and the callback answers with a page that moves on by
itself, so that the first page after it is a same-site navigation that carries the session.
"""

from __future__ import annotations

import logging
import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import escape

from etl_craft.config.sections import Auth
from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.ui_sessions import (
    SessionHolder,
    SignInRequest,
    begin_session,
    record_failure,
)
from etl_craft.operations.access.users import oidc_user
from etl_craft_ui import oidc
from etl_craft_ui.pages.sign_in import client_of, safe_next, sign_in_page
from etl_craft_ui.sessions import open_session, service_context, set_session_cookie, ui_settings
from etl_craft_ui.signing import sign, unsign

log = logging.getLogger(__name__)
router = APIRouter(tags=["sign-in"])
FLOW_COOKIE = "etl_craft_oidc"
FLOW_PATH = "/sign-in/oidc"
FLOW_SECONDS = 10 * 60
CALLBACK = "/sign-in/oidc/callback"


@router.get(FLOW_PATH)
def start(request: Request, next: str = "/") -> Response:
    auth = _auth(request)
    if auth is None:
        return sign_in_page(request, safe_next(next), NOT_SET_UP, 404)
    flow = oidc.new_request()
    try:
        target = oidc.authorization_url(auth, _redirect_uri(request), flow)
    except AuthenticationError as error:
        log.warning("single sign-on could not start: %s", error)
        return sign_in_page(request, safe_next(next), str(error), 503)
    response = RedirectResponse(target, status_code=303)
    payload = {
        "s": flow.state,
        "n": flow.nonce,
        "v": flow.verifier,
        "x": safe_next(next),
        "e": int(time.time()) + FLOW_SECONDS,
    }
    settings = ui_settings(request)
    response.set_cookie(
        FLOW_COOKIE,
        sign(payload, settings.secret),
        max_age=FLOW_SECONDS,
        path=FLOW_PATH,
        httponly=True,
        samesite="lax",  # it must come back with the provider's cross-site redirect
        secure=settings.secure_cookies,
    )
    return response


@router.get(CALLBACK)
def callback(
    request: Request, state: str = "", code: str = "", error: str = "", error_description: str = ""
) -> Response:
    auth = _auth(request)
    flow, goto = _flow(request, state)
    if auth is None:
        return sign_in_page(request, goto, NOT_SET_UP, 404)
    if flow is None:
        problem = "the single sign-on expired or did not start here; sign in again"
        return _refused(request, goto, problem, 403)
    attempt = SignInRequest("", flow.state, client_of(request))
    ctx = service_context(request)
    try:
        if error:
            raise AuthenticationError(
                f"the OpenID provider refused the sign-in: {error[:100]} "
                f"({error_description[:300]}); sign in again, or ask its administrator"
            )
        claims = oidc.claims_of(auth, _redirect_uri(request), code, flow)
        user = oidc_user(ctx, auth, claims)
        settings = ui_settings(request)
        holder = SessionHolder(None, user.user_id)
        grant = begin_session(ctx, attempt, settings.sign_in_policy, user.identity, holder)
    except AuthenticationError as refusal:
        log.warning("single sign-on failed from %s: %s", attempt.client, refusal)
        record_failure(ctx, attempt, None, str(refusal))
        return _refused(request, goto, str(refusal), 401)
    response = _continue_to(goto)
    set_session_cookie(response, open_session(grant, settings), settings)
    response.delete_cookie(FLOW_COOKIE, path=FLOW_PATH)
    return response


NOT_SET_UP = (
    "single sign-on is not set up for this project; set Auth.oidc_issuer, Auth.oidc_client_id "
    "and Auth.oidc_client_secret_variable in craft-connector.yml, or sign in with a password"
)


def _auth(request: Request) -> Auth | None:
    connector = service_context(request).connector
    return connector.auth if connector is not None and connector.auth.oidc else None


def _redirect_uri(request: Request) -> str:
    auth = _auth(request)
    if auth is not None and auth.oidc_redirect_url is not None:
        return str(auth.oidc_redirect_url)
    return str(request.base_url).rstrip("/") + CALLBACK


def _flow(request: Request, state: str) -> tuple[oidc.Request | None, str]:
    payload = unsign(request.cookies.get(FLOW_COOKIE, ""), ui_settings(request).secret)
    if payload is None:
        return None, "/"
    goto = safe_next(str(payload.get("x", "/")))
    fresh = int(payload.get("e", 0)) > time.time()
    if not fresh or not state or payload.get("s") != state:
        return None, goto
    return oidc.Request(str(payload["s"]), str(payload["n"]), str(payload["v"])), goto


def _refused(request: Request, goto: str, problem: str, status: int) -> Response:
    response = sign_in_page(request, goto, problem, status)
    response.delete_cookie(FLOW_COOKIE, path=FLOW_PATH)
    return response


def _continue_to(goto: str) -> HTMLResponse:
    target = escape(goto)
    return HTMLResponse(
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='refresh' content='0;url={target}'><title>Signed in</title></head>"
        f"<body><p>Signed in. <a href='{target}'>Continue</a></p></body></html>"
    )
