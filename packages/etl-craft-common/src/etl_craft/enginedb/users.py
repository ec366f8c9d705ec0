"""CFG_USERS: people who sign in to the web UI, with a password's scrypt hash or through the
OpenID provider."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.enums import Role
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row


@dataclass(frozen=True)
class UserRow:
    user_id: int
    user_name: str
    display_name: str | None
    email: str | None
    role: Role
    password_hash: str | None  # None: no password sign-in; a listing holds 'set', never the hash
    source: str  # password or oidc
    disabled: bool
    created_by: str | None = None
    created_at: datetime | None = None
    updated_by: str | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class NewUser:
    user_name: str
    display_name: str | None
    email: str | None
    role: Role
    password_hash: str | None
    source: str


def _user(row: Row) -> UserRow:
    return UserRow(
        user_id=int(row["user_id"]),
        user_name=str(row["user_name"]),
        display_name=row["display_name"],
        email=row["email"],
        role=Role(row["role"]),
        password_hash=row["password_hash"],
        source=str(row["source"]),
        disabled=row["disabled_flag"] == "Y",
        created_by=row["created_by"],
        created_at=as_utc(row["created_at"]),
        updated_by=row["updated_by"],
        updated_at=as_utc(row["updated_at"]),
    )


def insert_user(conn: EngineConnection, user: NewUser) -> int:
    row = conn.one(
        "insert_user",
        user_name=user.user_name,
        display_name=user.display_name,
        email=user.email,
        role=user.role.value,
        password_hash=user.password_hash,
        source=user.source,
    )
    assert row is not None, "an INSERT ... RETURNING returns its row"
    return int(row["user_id"])


def user_by_name(conn: EngineConnection, user_name: str) -> UserRow | None:
    row = conn.one("user_by_name", user_name=user_name)
    return None if row is None else _user(row)


def user_by_id(conn: EngineConnection, user_id: int) -> UserRow | None:
    row = conn.one("user_by_id", user_id=user_id)
    return None if row is None else _user(row)


def all_users(conn: EngineConnection) -> tuple[UserRow, ...]:
    return tuple(_user(row) for row in conn.all("users"))


def set_role(conn: EngineConnection, user_name: str, role: Role) -> bool:
    """False when no user has this name."""
    return conn.one("set_user_role", user_name=user_name, role=role.value) is not None


def set_disabled(conn: EngineConnection, user_name: str, disabled: bool) -> bool:
    """False when no user has this name."""
    flag = "Y" if disabled else "N"
    return conn.one("set_user_disabled", user_name=user_name, disabled_flag=flag) is not None


def set_password_hash(conn: EngineConnection, user_name: str, password_hash: str) -> bool:
    """False when no user has this name."""
    found = conn.one("set_user_password", user_name=user_name, password_hash=password_hash)
    return found is not None
