"""`etl-craft ui`: serve the project's web UI with uvicorn, as `etl-craft api` serves the API."""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from etl_craft.cli.context import operation_context
from etl_craft.core.addresses import browser_url
from etl_craft.runtime.tracing import configure_tracing
from etl_craft_ui.app import ACCESS_LOGGER, create_app
from etl_craft_ui.settings import load_ui_settings

# A page's event stream never ends by itself: on shutdown, uvicorn waits this long for answers
# to finish, then cancels what is left (the browser reconnects to the next process).
SHUTDOWN_GRACE_SECONDS = 3


def handle_ui(args: argparse.Namespace) -> int:
    settings = load_ui_settings(host=args.host, port=args.port, secure_cookies=args.secure_cookies)
    ctx = operation_context(args)
    configure_tracing("etl-craft-ui", inherit=False)
    # One line per request even at the default level: who read or did what, and when.
    logging.getLogger(ACCESS_LOGGER).setLevel(logging.INFO)
    url = browser_url(settings.host, settings.port)
    print(
        f"etl-craft ui: project {ctx.project_code} at {url} ; sign in with an API token "
        "(make one with: etl-craft token create --name <you> --role operator)",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn.run(
            create_app(ctx, settings),
            host=settings.host,
            port=settings.port,
            log_config=None,  # logging stays etl-craft's (--log-level, --log-format)
            access_log=False,  # uvicorn's would show every query string whole
            server_header=False,
            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        )
    finally:
        ctx.close()
    return 0
