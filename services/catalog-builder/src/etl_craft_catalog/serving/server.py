"""The HTTP server of the catalog, run in a thread so that the caller owns the signals.

uvicorn, run in the main thread, re-raises a SIGTERM it handled once it has shut down, which
ends the process by the signal instead of exit 0; from a thread it installs no handler, and
``stop`` asks it to finish the requests in flight and return.
"""

from __future__ import annotations

import logging
import threading
import time

import uvicorn

from etl_craft.core.errors import UsageError
from etl_craft_catalog.serving.app import CatalogApp

log = logging.getLogger(__name__)
STARTUP_SECONDS = 30.0


class SiteServer:
    def __init__(self, app: CatalogApp, host: str, port: int) -> None:
        self.host, self.port = host, port
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            # Visitor addresses are the app's business: uvicorn's own X-Forwarded-For
            # handling would trust any loopback peer.
            proxy_headers=False,
            server_header=False,
            date_header=True,
            lifespan="off",
            log_config=None,
            access_log=False,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="catalog-http", daemon=True)

    def start(self) -> None:
        """Listen, or raise naming the address when it cannot."""
        self._thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise UsageError(
                    f"the catalog cannot listen on {self.host}:{self.port} (see the log above: "
                    "the port may be taken, or the address not this host's); choose another "
                    "with --host or --port, or Docs_site.host and port"
                )
            time.sleep(0.02)
        log.info("the catalog is served on http://%s:%s/", self.host, self.port)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()
