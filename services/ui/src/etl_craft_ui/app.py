"""The FastAPI application of the web UI: server-rendered pages, htmx fragments under
/partials/, static files under /static/, and every router of ``pages.ROUTERS``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from etl_craft import __version__
from etl_craft.branding import LOGO_FOLDER
from etl_craft.drawing.page_policy import CONTENT_SECURITY_POLICY
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.access_log import AccessLog
from etl_craft.runtime.http_headers import SECURITY_HEADERS, SecurityHeaders
from etl_craft.runtime.http_tracing import instrument_app
from etl_craft_ui import errors
from etl_craft_ui.live import broadcaster_for
from etl_craft_ui.pages import ROUTERS
from etl_craft_ui.settings import UiSettings

ACCESS_LOGGER = "etl_craft_ui.access"
STATIC_DIR = Path(__file__).parent / "static"
UI_HEADERS = (
    *((name, value) for name, value in SECURITY_HEADERS if name != b"content-security-policy"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
)


# The static files (htmx, the style sheet, the logo) hold nothing private: a browser may keep
# them an hour rather than fetch them with every page.
STATIC_HEADERS = (
    *((name, value) for name, value in UI_HEADERS if name != b"cache-control"),
    (b"cache-control", b"public, max-age=3600"),
)


class UiApp(FastAPI):
    def build_middleware_stack(self) -> ASGIApp:
        inner = super().build_middleware_stack()
        pages, static = SecurityHeaders(inner, UI_HEADERS), SecurityHeaders(inner, STATIC_HEADERS)

        async def secured(scope: Scope, receive: Receive, send: Send) -> None:
            chosen = static if scope.get("path", "").startswith("/static/") else pages
            await chosen(scope, receive, send)

        return AccessLog(secured, ACCESS_LOGGER)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    live = app.state.live
    if live is not None:
        live.close()


def create_app(context: OperationContext, settings: UiSettings) -> FastAPI:
    """The UI serving ``context``'s project, its sessions signed with ``settings.secret``."""
    app = UiApp(
        title="etl-craft UI",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        redirect_slashes=False,
        lifespan=lifespan,
    )
    app.state.context = context
    app.state.settings = settings
    app.state.live = broadcaster_for(context)
    instrument_app(app)
    errors.install(app)
    # The logo is the shared library's, served beside the UI's own files under /static/.
    static = StaticFiles(directory=STATIC_DIR, packages=[LOGO_FOLDER])
    app.mount("/static", static, name="static")
    for router in ROUTERS:
        app.include_router(router)
    return app
