"""CFG_API_TOKENS: the HTTP API's bearer tokens, kept by their SHA-256 only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.enums import Role
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row


@dataclass(frozen=True)
class TokenRow:
    token_id: int
    name: str
    role: Role
    project_code: str | None  # None: every project
    expires_at: datetime | None
    revoked_at: datetime | None = None
    created_by: str | None = None
    created_at: datetime | None = None


def _token(row: Row) -> TokenRow:
    return TokenRow(
        token_id=int(row["token_id"]),
        name=str(row["name"]),
        role=Role(row["role"]),
        project_code=row.get("project_code"),
        expires_at=as_utc(row.get("expires_at")),
        revoked_at=as_utc(row.get("revoked_at")),
        created_by=row.get("created_by"),
        created_at=as_utc(row.get("created_at")),
    )


def live_token_by_name(conn: EngineConnection, name: str) -> TokenRow | None:
    """The unrevoked token with this name in any project (a live name is unique across
    projects; an expired token still holds its name)."""
    row = conn.one("live_api_token_by_name", name=name)
    return None if row is None else _token(row)


def token_by_sha256(conn: EngineConnection, token_sha256: str) -> TokenRow | None:
    row = conn.one("api_token_by_sha256", token_sha256=token_sha256)
    return None if row is None else _token(row)


def project_tokens(conn: EngineConnection, project_code: str) -> tuple[TokenRow, ...]:
    """Every token of the project and every all-project token, newest first."""
    return tuple(_token(row) for row in conn.all("api_tokens", project_code=project_code))


def insert_token(
    conn: EngineConnection,
    *,
    name: str,
    token_sha256: str,
    role: Role,
    project_code: str,
    expires_at: datetime | None,
) -> None:
    conn.run(
        "insert_api_token",
        name=name,
        token_sha256=token_sha256,
        role=role.value,
        project_code=project_code,
        expires_at=expires_at,
    )


def revoke_live_token(conn: EngineConnection, name: str, project_code: str) -> TokenRow | None:
    """Revoke the project's live token with this name; None when the project has none
    (another project's token of that name is never touched)."""
    row = conn.one("revoke_api_token", name=name, project_code=project_code)
    return None if row is None else _token(row)
