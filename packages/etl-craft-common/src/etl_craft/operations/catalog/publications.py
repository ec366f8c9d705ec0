"""Recording the URL a project's catalog is published at, and refusing a silent change of it.

A team shares the catalog's link; a server that comes up at another URL (another ngrok domain,
a changed base_url) would leave that link dead without anyone deciding it. So the first
publication is recorded, the same URL is renewed, and another one is refused naming both,
unless it is asked for explicitly: then the change is recorded with the previous URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from etl_craft.core.errors import NotFoundError, UsageError
from etl_craft.enginedb.metadata import active_project_id
from etl_craft.enginedb.publications import (
    PublicationRow,
    PublicationTarget,
    read_publication,
    record_first_publication,
    renew_publication,
    replace_publication,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform

COMMAND = "catalog-publish"


class Hosting(StrEnum):
    BASE_URL = "BASE_URL"
    NGROK = "NGROK"


@dataclass(frozen=True)
class PublicationRequest:
    public_url: str
    hosting: Hosting
    replace_url: bool = False


@dataclass(frozen=True)
class Publication:
    schema: ClassVar[str] = "etl-craft/catalog-publication/1"
    action_id: int
    project_code: str
    public_url: str
    hosting: str
    previous_url: str | None
    first_published_at: datetime
    published_at: datetime
    published_by: str
    replaced: bool


def publish_catalog(ctx: OperationContext, request: PublicationRequest) -> Publication:
    url = normal_url(request.public_url)

    def body(acting: Acting) -> tuple[PublicationRow, bool]:
        project_id = _project_id(acting)
        target = PublicationTarget(project_id, url, request.hosting.value)
        if record_first_publication(acting.conn, ctx.actor, target):
            return _read(acting, project_id), False
        found = _read(acting, project_id)
        if found.public_url == url:
            renew_publication(acting.conn, ctx.actor, target)
            return _read(acting, project_id), False
        if not request.replace_url:
            raise UsageError(url_change_refusal(ctx.project_code, found, url))
        replace_publication(acting.conn, ctx.actor, target, found.public_url)
        return _read(acting, project_id), True

    arguments: dict[str, object] = {
        "public_url": url,
        "hosting": request.hosting.value,
        "replace_url": request.replace_url,
    }
    (row, replaced), action_id = perform(ctx, COMMAND, arguments, body)
    return Publication(
        action_id=action_id,
        project_code=ctx.project_code,
        public_url=row.public_url,
        hosting=row.hosting,
        previous_url=row.previous_url,
        first_published_at=row.first_published_at,
        published_at=row.published_at,
        published_by=row.published_by,
        replaced=replaced,
    )


def normal_url(url: str) -> str:
    """One spelling per URL, so that a final slash alone is not taken for a change."""
    return url.rstrip("/") + "/"


def url_change_refusal(project_code: str, found: PublicationRow, url: str) -> str:
    return (
        f"the catalog of project {project_code} is published at {found.public_url} "
        f"(since {found.first_published_at:%Y-%m-%d %H:%M}Z, by {found.published_by}), and this "
        f"server would publish it at {url}; the link the team shares would stop working. "
        f"Set Docs_site back to publish at {found.public_url}, or move the publication on "
        "purpose with --replace-url (recorded in AUD_ACTIONS)"
    )


def _project_id(acting: Acting) -> int:
    project_id = active_project_id(acting.conn, acting.ctx.project_code)
    if project_id is None:
        raise NotFoundError(
            f"the Engine DB has no active project {acting.ctx.project_code}; create it with "
            "etl-craft init-db, or check Orchestration.project in craft-connector.yml"
        )
    return project_id


def _read(acting: Acting, project_id: int) -> PublicationRow:
    row = read_publication(acting.conn, project_id)
    if row is None:
        raise AssertionError(f"project {project_id}'s catalog publication vanished mid-transaction")
    return row
