"""Sign-in sessions: a signed cookie naming a session of the Engine DB, and who acts.

The cookie holds the session's random id, the name and row id of the token or user that
signed in, its role, a CSRF token and the expiry, signed with the UI's secret (signing.py);
never a token or a password. Every request re-reads the session's row and the token's or
user's, so a session ends, in every UI process, as soon as it is signed out, its token is
revoked or expires, or its user is disabled, and it takes their current role. The roles are
the API's exactly (Role.allows); the actor of every action is the token's or user's name.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Response
from starlette.exceptions import HTTPException

from etl_craft.core.enums import Role
from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.api_tokens import TokenIdentity
from etl_craft.operations.access.ui_sessions import (
    SessionGrant,
    SessionHolder,
    holder_identity,
    session_holder,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.projects import require_project
from etl_craft.runtime.access_log import ACTOR
from etl_craft_ui.forms import form_fields
from etl_craft_ui.project_choice import PROJECT_COOKIE, chosen_project
from etl_craft_ui.settings import UiSettings
from etl_craft_ui.signing import sign, unsign

SESSION_COOKIE = "etl_craft_session"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PARTIALS = "/partials/"
EVENTS = "/events"


@dataclass(frozen=True)
class UiSession:
    name: str  # the token's or user's name: the actor of what the session does
    role: Role
    csrf: str
    expires_at: int  # seconds since the epoch
    token_id: int | None  # the token that signed in, or None for a user
    session_id: str  # random; the Engine DB keeps only its SHA-256
    user_id: int | None = None  # the user who signed in, or None for a token

    @property
    def holder(self) -> SessionHolder:
        return SessionHolder(self.token_id, self.user_id)

    @property
    def can_operate(self) -> bool:
        return self.role.allows(Role.OPERATOR)

    @property
    def can_develop(self) -> bool:
        return self.role.allows(Role.DEVELOPER)


class SignInRequired(Exception):  # noqa: N818 (a redirect to sign in, not an error)
    """No valid session: a page redirects to the sign-in form, anything else answers 401."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def service_context(request: Request) -> OperationContext:
    """The service's context, acting on the project the pages show (project_choice)."""
    context = request.app.state.context
    if not isinstance(context, OperationContext):
        raise RuntimeError("the UI app was created without an operation context")
    project = chosen_project(request)
    return context if project is None else context.for_project(project)


def ui_settings(request: Request) -> UiSettings:
    settings = request.app.state.settings
    assert isinstance(settings, UiSettings)
    return settings


def open_session(grant: SessionGrant, settings: UiSettings) -> UiSession:
    expires_at = int(time.time()) + settings.session_seconds
    identity = grant.identity
    return UiSession(
        identity.name,
        identity.role,
        secrets.token_urlsafe(32),
        expires_at,
        grant.holder.token_id,
        grant.session_id,
        grant.holder.user_id,
    )


def encode_session(session: UiSession, secret: str) -> str:
    payload = {
        "n": session.name,
        "r": session.role.value,
        "c": session.csrf,
        "e": session.expires_at,
        "t": session.token_id,
        "s": session.session_id,
        "u": session.user_id,
    }
    return sign(payload, secret)


def decode_session(value: str, secret: str, now: float | None = None) -> UiSession | None:
    """The session a cookie holds; None when it is not one this UI signed, or has expired."""
    payload = unsign(value, secret)
    if payload is None:
        return None
    try:
        session = UiSession(
            str(payload["n"]),
            Role(payload["r"]),
            str(payload["c"]),
            int(payload["e"]),
            _optional_id(payload["t"]),
            str(payload["s"]),
            _optional_id(payload.get("u")),
        )
    except (KeyError, ValueError, TypeError):
        return None
    return session if session.expires_at > (now if now is not None else time.time()) else None


def _optional_id(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"a session's row id is a whole number; found {value!r}")
    return value


def set_session_cookie(response: Response, session: UiSession, settings: UiSettings) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        encode_session(session, settings.secret),
        max_age=max(0, session.expires_at - int(time.time())),
        path="/",
        httponly=True,
        samesite="strict",
        secure=settings.secure_cookies,
    )


def clear_session_cookie(response: Response, settings: UiSettings) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="strict", secure=settings.secure_cookies
    )
    # The next sign-in starts on the service's own project, whose tokens it may hold.
    response.delete_cookie(PROJECT_COOKIE, path="/", httponly=True, samesite="lax")


def current_session(request: Request) -> UiSession | None:
    """The request's session when it has a valid one, for pages anyone may see."""
    try:
        return _live_session(request)
    except SignInRequired:
        return None


async def signed_in(request: Request) -> UiSession:
    """The request's session, checked against its session's and its token's rows; for a
    state-changing request, also its CSRF token."""
    session = _live_session(request)
    if request.method not in SAFE_METHODS:
        await refuse_without_csrf(request, session.csrf)
    return session


def _live_session(request: Request) -> UiSession:
    value = request.cookies.get(SESSION_COOKIE)
    if value is None:
        raise SignInRequired("sign in with an API token to see this page")
    session = decode_session(value, ui_settings(request).secret)
    if session is None:
        raise SignInRequired("the session has expired (or was not signed here): sign in again")
    ctx = service_context(request)
    if session_holder(ctx, session.session_id) != session.holder:
        raise SignInRequired("the session was signed out or has expired: sign in again")
    try:
        identity = holder_identity(ctx, session.holder, session.name)
    except AuthenticationError as error:
        raise SignInRequired(str(error)) from None
    request.scope.setdefault("state", {})[ACTOR] = session.name  # for the access log line
    return dataclasses.replace(session, role=identity.role)


async def refuse_without_csrf(request: Request, expected: str) -> None:
    fields: Mapping[str, str] = await form_fields(request)
    given = request.headers.get(CSRF_HEADER) or fields.get(CSRF_FIELD, "")
    if not secrets.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(
            403,
            "the form's CSRF token is missing or not this session's; reload the page and "
            "submit it again",
        )


def acting_as(needed: Role) -> Callable[..., Awaitable[OperationContext]]:
    """A dependency: the service's context acting as the signed-in token or user, when their
    role allows ``needed``."""

    async def context(
        request: Request, session: Annotated[UiSession, Depends(signed_in)]
    ) -> OperationContext:
        if not session.role.allows(needed):
            raise HTTPException(
                403,
                f"{session.name} has role {session.role}; this request needs {needed} "
                "or above: ask an admin for that role",
            )
        actor = TokenIdentity(session.name, session.role).actor  # as the API records it
        ctx = dataclasses.replace(service_context(request), actor=actor)
        return ctx if ctx.chosen_project is None else require_project(ctx)

    return context


SignedIn = Annotated[UiSession, Depends(signed_in)]
Viewer = Annotated[OperationContext, Depends(acting_as(Role.VIEWER))]
Operator = Annotated[OperationContext, Depends(acting_as(Role.OPERATOR))]
Developer = Annotated[OperationContext, Depends(acting_as(Role.DEVELOPER))]
Admin = Annotated[OperationContext, Depends(acting_as(Role.ADMIN))]
