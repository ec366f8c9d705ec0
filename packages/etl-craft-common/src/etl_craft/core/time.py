"""UTC instants: every timestamp etl-craft stores or compares is timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime

# SQLite has no timestamp type; this fixed-width text form sorts like the instant it names.
SQLITE_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime | str | None) -> datetime | None:
    """Read a stored timestamp (an aware datetime or SQLite text) as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def to_sqlite_text(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError(f"timestamp {value.isoformat()} has no time zone; expected UTC")
    return value.astimezone(UTC).strftime(SQLITE_TIMESTAMP_FORMAT)
