"""Web UI sessions kept in the Engine DB, so that every UI process sees a sign-out at once.

A sign-in presents an API token, or a user's name and password, with the sign-in form's
one-time nonce; a sign-in through the OpenID provider begins its session the same way. Every
sign-in is recorded (AUD_UI_SIGN_INS), which spends the nonce; a client, or an account (a known
token's or user's name), with too many failures in the recent window is refused with
SignInThrottledError before its credentials are even looked at. An accepted sign-in begins a
session: a random id for the cookie, kept only as its SHA-256 with the token or user, the
expiry and, at sign-out, its end."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from etl_craft.core.actor import SYSTEM
from etl_craft.core.errors import AuthenticationError
from etl_craft.enginedb.ui_sessions import (
    SessionHolder,
    SignIn,
    end_session,
    insert_session,
    live_session_holder,
    recent_failures,
    record_sign_in,
)
from etl_craft.operations.access.api_tokens import (
    TokenIdentity,
    UnusableTokenError,
    identify,
    live_identity,
    presented_token,
)
from etl_craft.operations.access.users import UnusableUserError, identify_user, live_user_identity
from etl_craft.operations.context import OperationContext

__all__ = ["SessionHolder"]  # the UI holds one per session, and may not import enginedb

SESSION_ID_BYTES = 32


class SignInThrottledError(AuthenticationError):
    """Too many failed sign-ins from one client or for one account in the window: 429."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class SignInPolicy:
    client_failures: int  # failures a client may make within the window; the next is refused
    account_failures: int  # the same for one account
    window_seconds: int
    session_seconds: int


@dataclass(frozen=True)
class SignInRequest:
    token: str  # as typed into the form; ignored when a user name is given
    nonce: str  # the form's one-time nonce
    client: str  # the address the request came from
    user_name: str = ""  # signing in as a user, with their password
    password: str = ""


@dataclass(frozen=True)
class SessionGrant:
    session_id: str  # for the cookie only: the Engine DB keeps its SHA-256
    identity: TokenIdentity
    holder: SessionHolder


def sign_in(ctx: OperationContext, request: SignInRequest, policy: SignInPolicy) -> SessionGrant:
    """A new session for the token or the user and password presented; AuthenticationError
    (recorded) when refused."""
    _refuse_throttled(ctx, policy, request.client, None)
    try:
        identity, holder = _presented(ctx, request)
    except (UnusableTokenError, UnusableUserError) as error:
        account = error.token_name if isinstance(error, UnusableTokenError) else error.user_name
        _refuse_throttled(ctx, policy, request.client, account)
        record_failure(ctx, request, account, str(error))
        raise
    except AuthenticationError as error:
        record_failure(ctx, request, None, str(error))
        raise
    _refuse_throttled(ctx, policy, request.client, identity.name)
    return begin_session(ctx, request, policy, identity, holder)


def begin_session(
    ctx: OperationContext,
    request: SignInRequest,
    policy: SignInPolicy,
    identity: TokenIdentity,
    holder: SessionHolder,
) -> SessionGrant:
    """Record the accepted sign-in, spending its nonce, and begin the session."""
    session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
    name = identity.name
    with ctx.engine.transaction(identity.actor) as conn:
        fresh = record_sign_in(conn, SignIn(_digest(request.nonce), request.client, name, None))
        if fresh:
            insert_session(
                conn, _digest(session_id), holder, request.client, policy.session_seconds
            )
    if not fresh:
        record_failure(ctx, request, name, NONCE_USED)
        raise AuthenticationError(NONCE_USED)
    return SessionGrant(session_id, identity, holder)


NONCE_USED = (
    "this sign-in form was used already; reload the sign-in page and sign in from the new form"
)


def _presented(
    ctx: OperationContext, request: SignInRequest
) -> tuple[TokenIdentity, SessionHolder]:
    if request.user_name:
        user = identify_user(ctx, request.user_name, request.password)
        return user.identity, SessionHolder(None, user.user_id)
    token = identify(ctx, presented_token(request.token))
    return token.identity, SessionHolder(token.token_id, None)


def session_holder(ctx: OperationContext, session_id: str) -> SessionHolder | None:
    """The token or user of a session neither signed out nor expired; None for any other id."""
    with ctx.engine.read() as conn:
        return live_session_holder(conn, _digest(session_id))


def holder_identity(ctx: OperationContext, holder: SessionHolder, name: str) -> TokenIdentity:
    """Who a live session acts as now: its token's or its user's current name and role;
    AuthenticationError once the token is revoked or the user disabled."""
    if holder.user_id is not None:
        return live_user_identity(ctx, holder.user_id, name)
    assert holder.token_id is not None, "a session is held by a token or a user"
    return live_identity(ctx, holder.token_id, name)


def sign_out(ctx: OperationContext, session_id: str) -> None:
    """End the session: its cookie is refused from the next request on, by every UI process."""
    with ctx.engine.transaction(ctx.actor) as conn:
        end_session(conn, _digest(session_id))


def record_failure(
    ctx: OperationContext, request: SignInRequest, account: str | None, reason: str
) -> None:
    """Record a refused sign-in (one through the OpenID provider too)."""
    # A failed sign-in spends its nonce too; one whose nonce was spent is still recorded.
    with ctx.engine.transaction(SYSTEM) as conn:
        failure = SignIn(_digest(request.nonce), request.client, account, reason)
        if not record_sign_in(conn, failure):
            record_sign_in(conn, SignIn(None, request.client, account, reason))


def _refuse_throttled(
    ctx: OperationContext, policy: SignInPolicy, client: str, account: str | None
) -> None:
    with ctx.engine.read() as conn:
        found = recent_failures(conn, client, account, policy.window_seconds)
    minutes = max(1, policy.window_seconds // 60)
    if found.by_client >= policy.client_failures:
        raise SignInThrottledError(
            f"too many failed sign-ins from {client[:64]}: {found.by_client} in the last "
            f"{minutes} minutes (at most {policy.client_failures}); wait {minutes} minutes, "
            "then sign in with a live token (an admin lists them with etl-craft token list)",
            policy.window_seconds,
        )
    if account is not None and found.by_account >= policy.account_failures:
        raise SignInThrottledError(
            f"too many failed sign-ins as token {account}: {found.by_account} in the last "
            f"{minutes} minutes (at most {policy.account_failures}); wait {minutes} minutes, "
            "or ask an admin for a new token",
            policy.window_seconds,
        )


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()
