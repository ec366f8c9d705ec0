"""Users of the web UI: an admin adds them, changes their role, disables and enables them and
sets their password; a user signs in with their name and password, or through the OpenID
provider (``oidc_user``), which creates them at their first sign-in.

A password is read from a prompt or stdin by the CLI and from the body by the API, hashed
with scrypt (core.passwords) and never recorded: the AUD_ACTIONS row of every change names
the user and what changed, not the password.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from etl_craft.config.sections import Auth
from etl_craft.core.enums import Role
from etl_craft.core.errors import AuthenticationError, NotFoundError, UsageError
from etl_craft.core.passwords import hash_password, password_problem, verify_password
from etl_craft.enginedb.users import (
    NewUser,
    UserRow,
    all_users,
    insert_user,
    set_disabled,
    set_password_hash,
    set_role,
    user_by_id,
    user_by_name,
)
from etl_craft.operations.access.api_tokens import TokenIdentity, role_of
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform

USER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,127}")
USER_NAME_RULE = (
    "a letter or digit followed by up to 127 letters, digits, dots, underscores, @ or hyphens"
)
PASSWORD_SOURCE = "password"  # noqa: S105 (the source of a user, not a password)
OIDC_SOURCE = "oidc"


class UserNameTakenError(UsageError):
    """A user holds the name already: 409 over HTTP."""


class UnusableUserError(AuthenticationError):
    """A known user who may not sign in (disabled, wrong password): its name is the account a
    failed sign-in counts against."""

    def __init__(self, user_name: str, message: str) -> None:
        super().__init__(message)
        self.user_name = user_name


@dataclass(frozen=True)
class UserRequest:
    name: str
    role: str
    password: str | None = None  # None: the user signs in only through the OpenID provider
    display_name: str | None = None
    email: str | None = None


@dataclass(frozen=True)
class UserView:
    name: str
    display_name: str | None
    email: str | None
    role: Role
    source: str
    disabled: bool
    has_password: bool
    created_by: str | None
    created_at: datetime | None
    updated_by: str | None
    updated_at: datetime | None


@dataclass(frozen=True)
class UserList:
    schema: ClassVar[str] = "etl-craft/users/1"
    users: tuple[UserView, ...]


@dataclass(frozen=True)
class UserChanged:
    schema: ClassVar[str] = "etl-craft/user/1"
    action_id: int
    action: str  # add, set-role, disable, enable or set-password
    user: UserView


@dataclass(frozen=True)
class IdentifiedUser:
    """A user who may act, by their row: a session opened by them is checked against it."""

    user_id: int
    identity: TokenIdentity


def add_user(ctx: OperationContext, request: UserRequest) -> UserChanged:
    name, role = checked_name(request.name), role_of(request.role)
    password_hash = None if request.password is None else _hashed(request.password)

    def body(acting: Acting) -> None:
        found = user_by_name(acting.conn, name)
        if found is not None:
            raise UserNameTakenError(
                f"user {name} exists already (role {found.role}, created by {found.created_by}); "
                f"change it (etl-craft users set-role --name {name}) or choose another name"
            )
        user = NewUser(
            name, request.display_name, request.email, role, password_hash, PASSWORD_SOURCE
        )
        insert_user(acting.conn, user)

    arguments = {"action": "add", "name": name, "role": role.value}
    return _changed(ctx, "add", name, arguments, body)


def set_user_role(ctx: OperationContext, name: str, role_text: str) -> UserChanged:
    role = role_of(role_text)
    arguments = {"action": "set-role", "name": name, "role": role.value}
    return _changed(ctx, "set-role", name, arguments, lambda a: set_role(a.conn, name, role))


def disable_user(ctx: OperationContext, name: str) -> UserChanged:
    arguments = {"action": "disable", "name": name}
    return _changed(ctx, "disable", name, arguments, lambda a: set_disabled(a.conn, name, True))


def enable_user(ctx: OperationContext, name: str) -> UserChanged:
    arguments = {"action": "enable", "name": name}
    return _changed(ctx, "enable", name, arguments, lambda a: set_disabled(a.conn, name, False))


def set_user_password(ctx: OperationContext, name: str, password: str) -> UserChanged:
    password_hash = _hashed(password)
    arguments = {"action": "set-password", "name": name}

    def body(acting: Acting) -> bool:
        return set_password_hash(acting.conn, name, password_hash)

    return _changed(ctx, "set-password", name, arguments, body)


def list_users(ctx: OperationContext) -> UserList:
    with ctx.engine.read() as conn:
        rows = all_users(conn)
    return UserList(tuple(_view(row) for row in rows))


def identify_user(ctx: OperationContext, name: str, password: str) -> IdentifiedUser:
    """The user who signs in with this name and password; AuthenticationError otherwise."""
    with ctx.engine.read() as conn:
        row = user_by_name(conn, name) if USER_NAME.fullmatch(name) else None
    # verify_password costs the same whether or not the user exists.
    if not verify_password(password, None if row is None else row.password_hash) or row is None:
        refusal = (
            "the user name or the password is wrong; try again, or ask an admin to set your "
            "password (etl-craft users set-password)"
        )
        if row is None:
            raise AuthenticationError(refusal)
        raise UnusableUserError(row.user_name, refusal)
    _refuse_disabled(row)
    return IdentifiedUser(row.user_id, TokenIdentity(row.user_name, row.role))


def live_user_identity(ctx: OperationContext, user_id: int, name: str) -> TokenIdentity:
    """The identity of user ``name`` while the row ``user_id`` is theirs and enabled: a session
    ends at the request after its user is disabled, and takes the user's current role."""
    with ctx.engine.read() as conn:
        row = user_by_id(conn, user_id)
    if row is None or row.user_name != name:
        raise AuthenticationError(
            f"user {name[:140]} no longer exists; sign in again (an admin lists the users with "
            "etl-craft users list)"
        )
    _refuse_disabled(row)
    return TokenIdentity(row.user_name, row.role)


@dataclass(frozen=True)
class OidcClaims:
    """What a validated ID token says of the person signing in."""

    subject: str
    preferred_username: str | None
    email: str | None
    display_name: str | None
    groups: tuple[str, ...]


def oidc_user(ctx: OperationContext, auth: Auth, claims: OidcClaims) -> IdentifiedUser:
    """The user an OpenID sign-in is, created at their first sign-in. Their role is the highest
    that ``auth.oidc_group_roles`` gives their groups, at every sign-in; with none, a new user
    gets ``auth.oidc_default_role`` and a known one keeps the role an admin gave them."""
    name = _oidc_name(claims)
    mapped = group_role(auth, claims.groups)
    actor = TokenIdentity(name, mapped or Role(auth.oidc_default_role)).actor
    with ctx.engine.transaction(actor) as conn:
        row = user_by_name(conn, name)
        if row is None:
            role = mapped or Role(auth.oidc_default_role)
            user = NewUser(name, claims.display_name, claims.email, role, None, OIDC_SOURCE)
            insert_user(conn, user)
        elif row.source != OIDC_SOURCE:
            raise AuthenticationError(
                f"user {name} signs in with a password, not through the OpenID provider; sign "
                "in with the password, or ask an admin to rename one of the two accounts"
            )
        elif mapped is not None and mapped != row.role:
            set_role(conn, name, mapped)
        found = user_by_name(conn, name)
    assert found is not None, "the user was just read or made"
    _refuse_disabled(found)
    return IdentifiedUser(found.user_id, TokenIdentity(found.user_name, found.role))


def group_role(auth: Auth, groups: tuple[str, ...]) -> Role | None:
    """The highest role the groups are given; None when no group is named."""
    roles = [
        Role(auth.oidc_group_roles[group]) for group in groups if group in auth.oidc_group_roles
    ]
    order = list(Role)
    return max(roles, key=order.index) if roles else None


def _oidc_name(claims: OidcClaims) -> str:
    for candidate in (claims.preferred_username, claims.email, claims.subject):
        if candidate and USER_NAME.fullmatch(candidate):
            return candidate
    raise AuthenticationError(
        f"the OpenID provider's account {claims.subject[:140]!r} has no name etl-craft can use "
        f"(preferred_username, email or sub; expected {USER_NAME_RULE}); set one at the provider"
    )


def checked_name(name: str) -> str:
    if not USER_NAME.fullmatch(name):
        raise UsageError(f"user name {name[:140]!r} is not valid; expected {USER_NAME_RULE}")
    return name


def _refuse_disabled(row: UserRow) -> None:
    if row.disabled:
        raise UnusableUserError(
            row.user_name,
            f"user {row.user_name} is disabled (by {row.updated_by}); ask an admin to enable "
            f"them (etl-craft users enable --name {row.user_name})",
        )


def _hashed(password: str) -> str:
    problem = password_problem(password)
    if problem is not None:
        raise UsageError(problem)
    return hash_password(password)


def _changed(
    ctx: OperationContext,
    action: str,
    name: str,
    arguments: dict[str, str],
    change: Callable[[Acting], object],
) -> UserChanged:
    def body(acting: Acting) -> UserRow:
        if change(acting) is False:
            raise NotFoundError(
                f"no user is named {name[:140]!r}; etl-craft users list shows them, "
                "etl-craft users add adds one"
            )
        row = user_by_name(acting.conn, name)
        assert row is not None, "the user was just changed"
        return row

    row, action_id = perform(ctx, "users", dict(arguments), body)
    return UserChanged(action_id, action, _view(row))


def _view(row: UserRow) -> UserView:
    return UserView(
        name=row.user_name,
        display_name=row.display_name,
        email=row.email,
        role=row.role,
        source=row.source,
        disabled=row.disabled,
        has_password=row.password_hash is not None,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )
