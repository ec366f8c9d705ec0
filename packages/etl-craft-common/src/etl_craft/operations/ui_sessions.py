"""Web UI sessions kept in the Engine DB, so that every UI process sees a sign-out at once.

A sign-in presents an API token with the sign-in form's one-time nonce. Every sign-in is
recorded (AUD_UI_SIGN_INS), which spends the nonce; a client, or an account (a known token's
name), with too many failures in the recent window is refused with SignInThrottledError before
its token is even looked at. An accepted sign-in begins a session: a random id for the cookie,
kept only as its SHA-256 with the token, the expiry and, at sign-out, its end.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from etl_craft.core.actor import SYSTEM
from etl_craft.core.errors import AuthenticationError
from etl_craft.enginedb.ui_sessions import (
    SignIn,
    end_session,
    insert_session,
    live_session_token,
    recent_failures,
    record_sign_in,
)
from etl_craft.operations.api_tokens import (
    IdentifiedToken,
    UnusableTokenError,
    identify,
    presented_token,
)
from etl_craft.operations.context import OperationContext

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
    token: str  # as typed into the form
    nonce: str  # the form's one-time nonce
    client: str  # the address the request came from


@dataclass(frozen=True)
class SessionGrant:
    session_id: str  # for the cookie only: the Engine DB keeps its SHA-256
    token: IdentifiedToken


def sign_in(ctx: OperationContext, request: SignInRequest, policy: SignInPolicy) -> SessionGrant:
    """A new session for the token presented; AuthenticationError (recorded) when refused."""
    _refuse_throttled(ctx, policy, request.client, None)
    try:
        token = identify(ctx, presented_token(request.token))
    except UnusableTokenError as error:
        _refuse_throttled(ctx, policy, request.client, error.token_name)
        _record_failure(ctx, request, error.token_name, str(error))
        raise
    except AuthenticationError as error:
        _record_failure(ctx, request, None, str(error))
        raise
    name = token.identity.name
    _refuse_throttled(ctx, policy, request.client, name)
    session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
    with ctx.engine.transaction(token.identity.actor) as conn:
        fresh = record_sign_in(conn, SignIn(_digest(request.nonce), request.client, name, None))
        if fresh:
            insert_session(
                conn, _digest(session_id), token.token_id, request.client, policy.session_seconds
            )
    if not fresh:
        _record_failure(ctx, request, name, NONCE_USED)
        raise AuthenticationError(NONCE_USED)
    return SessionGrant(session_id, token)


NONCE_USED = (
    "this sign-in form was used already; reload the sign-in page and sign in from the new form"
)


def session_token_id(ctx: OperationContext, session_id: str) -> int | None:
    """The token row of a session neither signed out nor expired; None for any other id."""
    with ctx.engine.read() as conn:
        return live_session_token(conn, _digest(session_id))


def sign_out(ctx: OperationContext, session_id: str) -> None:
    """End the session: its cookie is refused from the next request on, by every UI process."""
    with ctx.engine.transaction(ctx.actor) as conn:
        end_session(conn, _digest(session_id))


def _record_failure(
    ctx: OperationContext, request: SignInRequest, account: str | None, reason: str
) -> None:
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
