"""The FastAPI application of the web UI: server-rendered pages, htmx fragments under
/partials/, static files under /static/, and every router of ``pages.ROUTERS``."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp

from etl_craft import __version__
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.http_headers import SECURITY_HEADERS, SecurityHeaders
from etl_craft.runtime.http_tracing import instrument_app
from etl_craft_ui import errors
from etl_craft_ui.pages import ROUTERS
from etl_craft_ui.settings import UiSettings

STATIC_DIR = Path(__file__).parent / "static"
# Only this site's own scripts, styles and images: no inline script, no eval, no other origin.
CONTENT_SECURITY_POLICY = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    b"connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; "
    b"frame-ancestors 'none'"
)
UI_HEADERS = (
    *((name, value) for name, value in SECURITY_HEADERS if name != b"content-security-policy"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY),
)


class UiApp(FastAPI):
    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack(), UI_HEADERS)


def create_app(context: OperationContext, settings: UiSettings) -> FastAPI:
    """The UI serving ``context``'s project, its sessions signed with ``settings.secret``."""
    app = UiApp(
        title="etl-craft UI",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        redirect_slashes=False,
    )
    app.state.context = context
    app.state.settings = settings
    instrument_app(app)
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for router in ROUTERS:
        app.include_router(router)
    return app
