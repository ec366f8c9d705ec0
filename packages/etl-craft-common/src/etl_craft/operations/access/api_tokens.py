"""HTTP API bearer tokens: create (the token is shown once), revoke, list, and authenticate.

Only a token's SHA-256 is stored (CFG_API_TOKENS.TOKEN_SHA256); the token itself exists in
the answer to ``create_token`` and nowhere else.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import Role
from etl_craft.core.errors import AuthenticationError, NotFoundError, UsageError
from etl_craft.core.redaction import TOKEN_PREFIX
from etl_craft.core.text import CODE_RULE, is_code
from etl_craft.core.time import utc_now
from etl_craft.enginedb.api_tokens import (
    TokenRow,
    insert_token,
    live_token_by_name,
    project_tokens,
    revoke_live_token,
    token_by_sha256,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform

TOKEN_BYTES = 32
# RFC 6750's b64token: what may follow "Bearer " (one space), and all a pasted token may hold.
_B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
_EXPIRY = re.compile(r"([1-9][0-9]{0,4})([dh])")
_UNITS = {"d": timedelta(days=1), "h": timedelta(hours=1)}


class UnusableTokenError(AuthenticationError):
    """A known token that may not act (revoked, expired, another project's): its name is the
    account a failed sign-in counts against."""

    def __init__(self, token_name: str, message: str) -> None:
        super().__init__(message)
        self.token_name = token_name


class TokenNameTakenError(UsageError):
    """A live token holds the name already (live names are unique across projects): 409."""


@dataclass(frozen=True)
class TokenRequest:
    name: str
    role: str
    expires: str | None = None  # <N>d or <N>h; None never expires


@dataclass(frozen=True)
class TokenView:
    name: str
    role: Role
    project_code: str | None  # None: every project
    created_by: str | None
    created_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class CreatedToken:
    schema: ClassVar[str] = "etl-craft/token/1"
    action_id: int
    name: str
    role: Role
    project_code: str
    expires_at: datetime | None
    token: str  # shown once: only its SHA-256 is kept


@dataclass(frozen=True)
class RevokedToken:
    schema: ClassVar[str] = "etl-craft/token-revoked/1"
    action_id: int
    name: str
    role: Role
    revoked_at: datetime


@dataclass(frozen=True)
class TokenList:
    schema: ClassVar[str] = "etl-craft/tokens/1"
    project_code: str
    tokens: tuple[TokenView, ...]


@dataclass(frozen=True)
class TokenIdentity:
    name: str
    role: Role

    @property
    def actor(self) -> Actor:
        # HUMAN: a token is held by a person or by the automation a person set up (CI), just
        # as ETL_CRAFT_ACTOR=github:alice is; the token's name only replaces user@host (S3.I).
        # The other kinds name etl-craft's own components, which never hold a token.
        return Actor(self.name, ActorKind.HUMAN)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def expiry(text: str | None) -> timedelta | None:
    if text is None:
        return None
    found = _EXPIRY.fullmatch(text.strip())
    if found is None:
        raise UsageError(
            f"--expires {text!r} is not a duration; expected days or hours such as 90d or 12h, "
            "or leave --expires out for a token that never expires"
        )
    return int(found[1]) * _UNITS[found[2]]


def role_of(text: str) -> Role:
    try:
        return Role(text)
    except ValueError:
        raise UsageError(
            f"--role {text!r} is not a role; expected one of {', '.join(Role)}"
        ) from None


def create_token(ctx: OperationContext, request: TokenRequest) -> CreatedToken:
    if not is_code(request.name):
        raise UsageError(f"token name {request.name[:140]!r} is not valid; expected {CODE_RULE}")
    role, lifetime = role_of(request.role), expiry(request.expires)
    token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
    expires_at = None if lifetime is None else utc_now() + lifetime

    def body(acting: Acting) -> None:
        found = live_token_by_name(acting.conn, request.name)
        if found is not None:
            raise _name_taken(ctx, request.name, found)
        insert_token(
            acting.conn,
            name=request.name,
            token_sha256=hash_token(token),
            role=role,
            project_code=ctx.project_code,
            expires_at=expires_at,
        )

    arguments = {"action": "create", "name": request.name, "role": role.value}
    _, action_id = perform(ctx, "token", {**arguments, "expires": request.expires}, body)
    return CreatedToken(action_id, request.name, role, ctx.project_code, expires_at, token)


def _name_taken(ctx: OperationContext, name: str, found: TokenRow) -> TokenNameTakenError:
    if found.project_code != ctx.project_code:
        # Another project's token: say nothing about it, not even that it is another project's.
        return TokenNameTakenError(f"token name {name} is taken; choose another name")
    return TokenNameTakenError(
        f"token {name} exists already (role {found.role}, created by {found.created_by}); "
        f"revoke it first (etl-craft token revoke --name {name}) or choose another name"
    )


def revoke_token(ctx: OperationContext, name: str) -> RevokedToken:
    def body(acting: Acting) -> TokenRow:
        row = revoke_live_token(acting.conn, name, ctx.project_code)
        if row is None:
            raise NotFoundError(
                f"project {ctx.project_code} has no live token named {name[:140]!r}; "
                "etl-craft token list shows its tokens"
            )
        return row

    row, action_id = perform(ctx, "token", {"action": "revoke", "name": name}, body)
    assert row.revoked_at is not None
    return RevokedToken(action_id, row.name, row.role, row.revoked_at)


def list_tokens(ctx: OperationContext) -> TokenList:
    with ctx.engine.read() as conn:
        rows = project_tokens(conn, ctx.project_code)
    views = tuple(
        TokenView(
            name=row.name,
            role=row.role,
            project_code=row.project_code,
            created_by=row.created_by,
            created_at=row.created_at,
            expires_at=row.expires_at,
            revoked_at=row.revoked_at,
        )
        for row in rows
    )
    return TokenList(ctx.project_code, views)


def bearer_credentials(header: str) -> str:
    """The token of an Authorization header, which must read exactly ``Bearer <token>``."""
    scheme, space, token = header.partition(" ")
    if scheme.lower() != "bearer" or not space:
        raise AuthenticationError(
            f"the Authorization header's scheme is {scheme[:20]!r}; expected 'Bearer <token>' "
            "(create a token with etl-craft token create)"
        )
    return presented_token(token)


def presented_token(text: str) -> str:
    """``text`` when it has a token's shape: no space, no control or other stray character."""
    if not _B64TOKEN.fullmatch(text):
        raise AuthenticationError(
            "the token presented is not one token: expected 'Bearer ' with one space and then "
            "the token exactly as etl-craft token create printed it, with nothing around it"
        )
    return text


def authenticate(ctx: OperationContext, presented: str) -> TokenIdentity:
    """The identity of a presented bearer token; AuthenticationError when it may not act."""
    return identify(ctx, presented).identity


@dataclass(frozen=True)
class IdentifiedToken:
    """A token that may act, by its row: a session opened with it ends when that row does."""

    token_id: int
    identity: TokenIdentity


def identify(ctx: OperationContext, presented: str) -> IdentifiedToken:
    """``authenticate``, keeping which token row answered."""
    with ctx.engine.read() as conn:
        row = token_by_sha256(conn, hash_token(presented))
    if row is None:
        raise AuthenticationError(
            "the bearer token is not known; ask an admin for one (etl-craft token create)"
        )
    name, revoked_at = row.name, row.revoked_at
    if revoked_at is not None:
        raise UnusableTokenError(
            name,
            f"token {name} was revoked at {revoked_at:%Y-%m-%d %H:%M:%S}Z; ask an admin for a "
            "new one",
        )
    _refuse_unusable(ctx, name, row)
    return IdentifiedToken(row.token_id, TokenIdentity(name, row.role))


def live_identity(ctx: OperationContext, token_id: int, name: str) -> TokenIdentity:
    """The identity of token ``name`` while the row ``token_id`` is still live: a session
    opened with a token ends when the token is revoked, expires or is replaced by another of
    the same name, and it takes the token's current role."""
    with ctx.engine.read() as conn:
        row = live_token_by_name(conn, name)
    if row is None or row.token_id != token_id:
        raise AuthenticationError(
            f"token {name[:140]} was revoked since this session began; sign in again with a "
            "live token (etl-craft token list shows them)"
        )
    _refuse_unusable(ctx, name, row)
    return TokenIdentity(name, row.role)


def _refuse_unusable(ctx: OperationContext, name: str, row: TokenRow) -> None:
    expires_at = row.expires_at
    if expires_at is not None and expires_at <= utc_now():
        raise UnusableTokenError(
            name,
            f"token {name} expired at {expires_at:%Y-%m-%d %H:%M:%S}Z; ask an admin for a new one",
        )
    if row.project_code not in (None, ctx.project_code):
        raise UnusableTokenError(
            name,
            f"token {name} is not a token of project {ctx.project_code}; use one of this "
            "project's tokens (etl-craft token create in its folder)",
        )
