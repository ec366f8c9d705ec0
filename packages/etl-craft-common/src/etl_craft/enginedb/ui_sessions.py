"""AUD_UI_SESSIONS and AUD_UI_SIGN_INS: web UI sessions by the SHA-256 of their id, and every
sign-in, which uses up its form's nonce and counts towards throttling when it failed."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class SignIn:
    nonce_sha256: str | None  # None: the form's nonce was used before, so none is spent
    client: str
    account: str | None  # the token's name when the token presented is known, or the user's
    failure: str | None  # why it was refused; None for a session begun


@dataclass(frozen=True)
class RecentFailures:
    by_client: int
    by_account: int


@dataclass(frozen=True)
class SessionHolder:
    """Who a session acts for: a token's row or a user's, never both."""

    token_id: int | None
    user_id: int | None


def insert_session(
    conn: EngineConnection, session_sha256: str, holder: SessionHolder, client: str, lifetime: int
) -> None:
    conn.run(
        "insert_ui_session",
        session_sha256=session_sha256,
        token_id=holder.token_id,
        user_id=holder.user_id,
        client=client,
        lifetime_seconds=lifetime,
    )


def live_session_holder(conn: EngineConnection, session_sha256: str) -> SessionHolder | None:
    """The token or user of a session neither signed out nor expired; None for any other."""
    row = conn.one("live_ui_session_holder", session_sha256=session_sha256)
    if row is None:
        return None
    token_id, user_id = row["token_id"], row["user_id"]
    return SessionHolder(
        None if token_id is None else int(token_id), None if user_id is None else int(user_id)
    )


def end_session(conn: EngineConnection, session_sha256: str) -> None:
    conn.run("end_ui_session", session_sha256=session_sha256)


def record_sign_in(conn: EngineConnection, sign_in: SignIn) -> bool:
    """Record the sign-in; False when its nonce was used before (then nothing is recorded)."""
    row = conn.one(
        "record_ui_sign_in",
        nonce_sha256=sign_in.nonce_sha256,
        client=sign_in.client,
        account=sign_in.account,
        outcome="FAILED" if sign_in.failure is not None else "OK",
        reason=None if sign_in.failure is None else sign_in.failure[:500],
    )
    return row is not None


def recent_failures(
    conn: EngineConnection, client: str, account: str | None, window: int
) -> RecentFailures:
    row = conn.one(
        "recent_ui_sign_in_failures", client=client, account=account, window_seconds=window
    )
    assert row is not None, "an aggregate query returns one row"
    return RecentFailures(int(row["by_client"]), int(row["by_account"]))
