"""`etl-craft ui`: serve the project's web UI with uvicorn, as `etl-craft api` serves the API."""

from __future__ import annotations

import argparse

import uvicorn

from etl_craft.cli.context import operation_context
from etl_craft.cli.registry import Command
from etl_craft.runtime.tracing import configure_tracing
from etl_craft_ui.app import create_app
from etl_craft_ui.settings import DEFAULT_HOST, DEFAULT_PORT, load_ui_settings


def configure_ui(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help=f"default: ETL_CRAFT_UI_HOST, else {DEFAULT_HOST}")
    parser.add_argument("--port", type=int, help=f"default: ETL_CRAFT_UI_PORT, else {DEFAULT_PORT}")
    parser.add_argument(
        "--secure-cookies",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="mark the session cookie Secure: on when the UI is reached over TLS, directly or "
        "through a proxy (default: ETL_CRAFT_UI_SECURE_COOKIES, else off)",
    )


def handle_ui(args: argparse.Namespace) -> int:
    settings = load_ui_settings(host=args.host, port=args.port, secure_cookies=args.secure_cookies)
    ctx = operation_context(args)
    configure_tracing("etl-craft-ui", inherit=False)
    try:
        uvicorn.run(
            create_app(ctx, settings),
            host=settings.host,
            port=settings.port,
            log_config=None,  # logging stays etl-craft's (--log-level, --log-format)
            access_log=False,  # uvicorn's would show every query string whole
            server_header=False,
        )
    finally:
        ctx.close()
    return 0


UI = Command(
    "ui",
    f"serve the web UI (default {DEFAULT_HOST}:{DEFAULT_PORT}); sign in with an API token",
    configure_ui,
    handle_ui,
)
