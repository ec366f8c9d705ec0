"""The options of `etl-craft catalog` and its actions: light, imported to build the parser."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli.telemetry import add_telemetry_options
from etl_craft.core import ranges

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8732
STRICT_FAILURE = 1  # catalog build --strict, when a SELECT could not be traced
SERVE_HELP = "serve the built catalog site (default 127.0.0.1:8732) until SIGTERM or SIGINT"
RUN_HELP = "run the catalog builder: build now and on Docs_site.schedule, and serve the site"
METRICS_PORT = 9733


def configure_run(parser: argparse.ArgumentParser) -> None:
    add_serve_options(parser)
    add_telemetry_options(parser, METRICS_PORT)


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output", type=Path, metavar="DIR", help="the site (default: Docs_site.output)"
    )
    parser.add_argument("--host", help=f"listen address (default: Docs_site.host, {DEFAULT_HOST})")
    parser.add_argument(
        "--port",
        type=ranges.PORT.argument(),
        help=f"listen port (default: Docs_site.port, {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the external URL a reverse proxy serves it at, its path the prefix "
        "(default: Docs_site.base_url)",
    )
    parser.add_argument(
        "--ngrok", action="store_true", help="publish through an ngrok tunnel (the ngrok extra)"
    )
    parser.add_argument(
        "--replace-url",
        action="store_true",
        help="publish at a URL other than the one recorded, replacing it (recorded as an action)",
    )


def configure_build(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        type=Path,
        metavar="DIR",
        help="the site's folder, a link to its release (default: Docs_site.output)",
    )
    parser.add_argument(
        "--with-warehouse",
        action="store_true",
        help="read column types from the warehouse, and the columns of tables no task writes",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"exit {STRICT_FAILURE} without publishing when any SELECT could not be traced",
    )


def configure_serve(parser: argparse.ArgumentParser) -> None:
    add_serve_options(parser)
