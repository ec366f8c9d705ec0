"""The `etl-craft ui` command's options: light, so that building the CLI's parser stays cheap."""

from __future__ import annotations

import argparse

from etl_craft.core import ranges

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8731


def configure_ui(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help=f"default: ETL_CRAFT_UI_HOST, else {DEFAULT_HOST}")
    parser.add_argument(
        "--port",
        type=ranges.PORT.argument(),
        help=f"default: ETL_CRAFT_UI_PORT, else {DEFAULT_PORT}",
    )
    parser.add_argument(
        "--secure-cookies",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="mark the session cookie Secure: on when the UI is reached over TLS, directly or "
        "through a proxy (default: ETL_CRAFT_UI_SECURE_COOKIES, else off)",
    )
