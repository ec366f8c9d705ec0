"""Pages from Jinja2 templates, with every secret of the project masked in what they show.

The layout's values (the session, its CSRF token, what its role may do, the navigation, what
keeps queued work from moving, and how the live parts learn of changes) are added to every
page. The whole page then passes through the project's secrets redactor, as the API's
documents do, so that no page or fragment shows a secret parameter's value or a resolved
secret, whichever part of it printed the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import escape

from etl_craft.core.redaction import Redactor
from etl_craft.operations.health.stalls import stalls
from etl_craft.operations.masking import secrets_redactor
from etl_craft.operations.projects import list_projects
from etl_craft_ui.live import live_of
from etl_craft_ui.project_choice import remember_project
from etl_craft_ui.sessions import EVENTS, UiSession, service_context

TEMPLATES_DIR = Path(__file__).parent / "templates"
environment = Environment(
    loader=FileSystemLoader(TEMPLATES_DIR), autoescape=True, undefined=StrictUndefined
)
templates = Jinja2Templates(env=environment)
# How often the live parts that follow runs ask again: on their own where nothing tells of a
# change (SQLite), and as a safety net where the Engine DB's changes are pushed (live.js also
# polls at the fast pace while the event stream is down).
POLL_PUSHED, POLL_ALONE = "30s", "2s"


@dataclass(frozen=True)
class NavItem:
    label: str
    href: str


NAV = (
    NavItem("Projects", "/"),
    NavItem("Pipelines", "/pipelines"),
    NavItem("Runs", "/runs"),
    NavItem("Backfills", "/backfills"),
    NavItem("Interventions", "/interventions"),
    NavItem("Workers", "/workers"),
    NavItem("Alerts", "/alerts"),
    NavItem("Metadata", "/metadata"),
)


def render(
    request: Request,
    name: str,
    session: UiSession | None,
    *,
    status_code: int = 200,
    **values: Any,
) -> HTMLResponse:
    """The template ``name`` with ``values`` and the layout's, masked; a fragment the same."""
    pushed = live_of(request) is not None
    layout: dict[str, Any] = {
        "session": session,
        "csrf_token": session.csrf if session else "",
        "can_operate": bool(session and session.can_operate),
        "can_develop": bool(session and session.can_develop),
        "nav": NAV,
        "current": current_nav(request.url.path),
        "events": EVENTS if pushed else "",
        "poll": POLL_PUSHED if pushed else POLL_ALONE,
        "projects": None,
    }
    if not is_fragment(request):
        show = session is not None and status_code < 400  # an error page reads no more
        layout["stalls"] = stalls(service_context(request)) if show else None
        layout["projects"] = list_projects(service_context(request)) if show else None
    text = templates.env.get_template(name).render({**values, **layout, "request": request})
    response = HTMLResponse(page_redactor(request)(text), status_code=status_code)
    if status_code < 400:
        remember_project(request, response)
    return response


# Pages reached from a section's page, not from the navigation, that belong to that section.
SECTION_OF = {"/attempts": "/runs"}


def current_nav(path: str) -> str:
    """The href of the navigation item ``path`` belongs to."""
    for prefix, section in SECTION_OF.items():
        if path.startswith(prefix):
            return section
    found = [item.href for item in NAV if item.href != "/" and path.startswith(item.href)]
    return found[0] if found else "/"


def is_fragment(request: Request) -> bool:
    """Whether the request asks for a live part of a page, which carries no layout."""
    return request.url.path.startswith("/partials/")


def page_redactor(request: Request) -> Redactor:
    """The project's secrets, as they are and as the templates escape them."""
    secrets = set(secrets_redactor(service_context(request)).secrets)
    return Redactor(secrets | {str(escape(secret)) for secret in secrets})
