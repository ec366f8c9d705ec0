"""`etl-craft catalog serve`: serve the built site until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import sys

from etl_craft.cli.context import context_request, operation_context
from etl_craft.operations.context import OperationContext, locate_connector
from etl_craft_catalog.hosting import HostedSite, serve_options
from etl_craft_catalog.stopping import stop_on_signals


def project_context(args: argparse.Namespace) -> OperationContext | None:
    """The project's context when there is a project; serving locally needs none."""
    if locate_connector(context_request(args)) is None:
        return None
    return operation_context(args)


def handle_serve(args: argparse.Namespace) -> int:
    ctx = project_context(args)
    try:
        options = serve_options(args, ctx.connector.docs_site if ctx and ctx.connector else None)
        stop = stop_on_signals("catalog serve")
        with HostedSite(options, ctx) as hosted:
            print(
                f"etl-craft catalog serve: the catalog is at {hosted.url}",
                file=sys.stderr,
                flush=True,
            )
            hosted.wait(stop)
    finally:
        if ctx is not None:
            ctx.close()
    return 0
