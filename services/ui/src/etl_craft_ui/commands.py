"""`etl-craft ui`: serve the project's web UI with uvicorn, as `etl-craft api` serves the API."""

from __future__ import annotations

import argparse
import logging
import sys
from types import FrameType

import uvicorn

from etl_craft.cli.context import operation_context
from etl_craft.core.addresses import browser_url
from etl_craft.runtime.tracing import configure_tracing
from etl_craft_ui.app import ACCESS_LOGGER, create_app
from etl_craft_ui.live import Broadcaster
from etl_craft_ui.settings import load_ui_settings

# On shutdown uvicorn waits this long for answers to finish, then cancels what is left.
SHUTDOWN_GRACE_SECONDS = 3
STARTUP_FAILURE = 3  # uvicorn.run's exit status when it cannot serve (its port is taken, say)


class UiServer(uvicorn.Server):
    """Ends the pages' event streams as soon as it is asked to stop: they never end by
    themselves, and uvicorn waits for every open answer before it stops (the browsers come
    back to the next process)."""

    def __init__(self, config: uvicorn.Config, live: Broadcaster | None) -> None:
        super().__init__(config)
        self.live = live

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self.live is not None:
            self.live.end_streams()


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
    app = create_app(ctx, settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,  # logging stays etl-craft's (--log-level, --log-format)
        access_log=False,  # uvicorn's would show every query string whole
        server_header=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
    )
    server = UiServer(config, app.state.live)
    try:
        server.run()
    finally:
        ctx.close()
    return 0 if server.started else STARTUP_FAILURE
