"""`etl-craft catalog run` (and `etl-craft-catalog`): the catalog-builder service."""

from __future__ import annotations

import argparse

from etl_craft.cli.actions.telemetry import start_telemetry
from etl_craft.cli.context import operation_context
from etl_craft.core.errors import UsageError
from etl_craft_catalog.hosting import HostedSite, serve_options
from etl_craft_catalog.rebuild import site_rebuild
from etl_craft_catalog.service import CatalogService
from etl_craft_catalog.stopping import stop_on_signals


def handle_run(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        if ctx.connector is None:
            raise UsageError(
                "catalog run builds the catalog of a project, and there is none here (no "
                "craft-connector.yml at or above this folder); run it inside the project, "
                "or give --config PATH"
            )
        docs = ctx.connector.docs_site
        options = serve_options(args, docs)
        stop = stop_on_signals("the catalog builder")
        start_telemetry(args, "etl-craft-catalog")
        service = CatalogService(site_rebuild(ctx, options.output), docs.schedule, ctx.timezone)
        service.stop = stop
        with HostedSite(options, ctx):
            service.run()
    finally:
        ctx.close()
    return 0
