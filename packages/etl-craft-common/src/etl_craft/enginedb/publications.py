"""AUD_CATALOG_PUBLICATIONS: the URL each project's catalog site is published at."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.actor import Actor
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class PublicationRow:
    public_url: str
    hosting: str  # BASE_URL or NGROK
    previous_url: str | None
    first_published_at: datetime
    published_at: datetime
    published_by: str


def read_publication(conn: EngineConnection, project_id: int) -> PublicationRow | None:
    row = conn.one("catalog_publication", project_id=project_id)
    if row is None:
        return None
    return PublicationRow(
        public_url=row["public_url"],
        hosting=row["hosting"],
        previous_url=row["previous_url"],
        first_published_at=_stamp(row["first_published_at"]),
        published_at=_stamp(row["published_at"]),
        published_by=row["published_by"],
    )


def _stamp(value: datetime | str) -> datetime:
    stamp = as_utc(value)
    if stamp is None:
        raise AssertionError("AUD_CATALOG_PUBLICATIONS holds a NULL time in a NOT NULL column")
    return stamp


@dataclass(frozen=True)
class PublicationTarget:
    project_id: int
    public_url: str
    hosting: str


def record_first_publication(
    conn: EngineConnection, actor: Actor, target: PublicationTarget
) -> bool:
    """Whether this one was recorded: False when the project was published already."""
    done = conn.run("record_first_catalog_publication", **_values(target), actor=actor.name)
    return done.rowcount == 1


def renew_publication(conn: EngineConnection, actor: Actor, target: PublicationTarget) -> bool:
    """Whether the publication was still at the target's URL (and is now renewed)."""
    done = conn.run("renew_catalog_publication", **_values(target), actor=actor.name)
    return done.rowcount == 1


def replace_publication(
    conn: EngineConnection, actor: Actor, target: PublicationTarget, previous_url: str
) -> bool:
    """Whether the publication was still at ``previous_url`` (and now moved to the target)."""
    done = conn.run(
        "replace_catalog_publication",
        **_values(target),
        previous_url=previous_url,
        actor=actor.name,
    )
    return done.rowcount == 1


def _values(target: PublicationTarget) -> dict[str, object]:
    return {
        "project_id": target.project_id,
        "public_url": target.public_url,
        "hosting": target.hosting,
    }
