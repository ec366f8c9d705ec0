"""Serving the catalog as configured: the listen address, the public URL and its record.

The three ways to host it: locally (nothing recorded), behind the organization's reverse
proxy or ingress at Docs_site.base_url, or through an ngrok tunnel. The last two record the
URL visitors use in the Engine DB, and a changed URL is refused unless --replace-url says so.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from etl_craft.config.rules import public_base_url
from etl_craft.config.sections import DocsSite
from etl_craft.core.addresses import browser_url
from etl_craft.core.errors import EtlCraftError, UsageError
from etl_craft.operations.catalog.publications import (
    Hosting,
    Publication,
    PublicationRequest,
    publish_catalog,
)
from etl_craft.operations.context import OperationContext
from etl_craft_catalog.ngrok_tunnel import Tunnel, open_tunnel
from etl_craft_catalog.options import DEFAULT_HOST, DEFAULT_PORT
from etl_craft_catalog.serving.app import CatalogApp, SiteSettings
from etl_craft_catalog.serving.server import SiteServer
from etl_craft_catalog.serving.visitors import networks

log = logging.getLogger(__name__)

# The ngrok SDK forwards to the server from this process, so loopback is the tunnel's proxy.
LOOPBACK = ("127.0.0.1/32", "::1/128")
WATCH_SECONDS = 0.5


@dataclass(frozen=True)
class ServeOptions:
    output: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    base_url: str | None = None
    ngrok: bool = False
    replace_url: bool = False
    trusted_proxies: tuple[str, ...] = ()
    allowed_ips: tuple[str, ...] = ()
    ngrok_authtoken: str | None = None
    ngrok_domain: str | None = None

    @property
    def prefix(self) -> str:
        return urlsplit(self.base_url).path if self.base_url else "/"


def serve_options(args: argparse.Namespace, docs: DocsSite | None) -> ServeOptions:
    output = args.output or (docs.output if docs else None)
    if output is None:
        raise UsageError(
            "catalog serve found no project (craft-connector.yml) and no --output; give the "
            "site's folder with --output DIR, or run it inside a project"
        )
    base_url = args.base_url or (docs.base_url if docs else None)
    options = ServeOptions(
        output=Path(output).absolute(),
        host=args.host or (docs.host if docs else DEFAULT_HOST),
        port=args.port or (docs.port if docs else DEFAULT_PORT),
        base_url=_checked_base_url(base_url) if base_url else None,
        ngrok=args.ngrok,
        replace_url=args.replace_url,
        trusted_proxies=docs.trusted_proxies if docs else (),
        allowed_ips=docs.allowed_ips if docs else (),
        ngrok_authtoken=docs.ngrok_authtoken if docs else None,
        ngrok_domain=docs.ngrok_domain if docs else None,
    )
    if options.ngrok and options.base_url:
        raise UsageError(
            f"--ngrok publishes at the tunnel's URL, and a base URL ({options.base_url}) is "
            "set too; use one: leave --base-url and Docs_site.base_url out with --ngrok "
            "(Docs_site.ngrok_domain fixes the tunnel's URL), or drop --ngrok"
        )
    return options


def _checked_base_url(url: str) -> str:
    try:
        return public_base_url(url)
    except ValueError as error:
        raise UsageError(f"--base-url {url!r}: {error}") from None


def site_app(options: ServeOptions) -> CatalogApp:
    trusted = options.trusted_proxies + (LOOPBACK if options.ngrok else ())
    return CatalogApp(
        SiteSettings(
            site=options.output,
            prefix=options.prefix,
            trusted_proxies=networks(trusted),
            allowed_ips=networks(options.allowed_ips),
        )
    )


OpenTunnel = Callable[[ServeOptions], Tunnel]


def ngrok_tunnel(options: ServeOptions) -> Tunnel:
    return open_tunnel(options.port, options.ngrok_authtoken, options.ngrok_domain)


class HostedSite:
    """The server, its tunnel and its recorded URL for the length of a ``with`` block."""

    def __init__(
        self,
        options: ServeOptions,
        ctx: OperationContext | None,
        tunnel: OpenTunnel = ngrok_tunnel,
    ) -> None:
        self.options = options
        self._ctx, self._open_tunnel = ctx, tunnel
        self.server = SiteServer(site_app(options), options.host, options.port)
        self.tunnel: Tunnel | None = None
        self.publication: Publication | None = None

    def __enter__(self) -> HostedSite:
        if self.options.base_url:
            # Refused before listening: a server at the wrong URL serves nobody it should.
            self.publication = record_url(self._ctx, self.options, self.options.base_url)
        self.server.start()
        try:
            if self.options.ngrok:
                self.tunnel = self._open_tunnel(self.options)
                self.publication = record_url(self._ctx, self.options, self.tunnel.url())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        log.info("the catalog in %s is published at %s", self.options.output, self.url)
        return self

    def wait(self, stop: threading.Event, tick: Callable[[], None] | None = None) -> None:
        """Serve until ``stop``; the server ending on its own is an error."""
        while not stop.wait(WATCH_SECONDS):
            if not self.server.running:
                raise EtlCraftError("the catalog's HTTP server stopped unasked; see the log")
            if tick is not None:
                tick()

    @property
    def url(self) -> str:
        """Where people open it: its public URL once published, else where it listens."""
        return self.publication.public_url if self.publication else self.local_url

    @property
    def local_url(self) -> str:
        return browser_url(self.options.host, self.options.port, self.options.prefix)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.tunnel is not None:
            self.tunnel.close()
            self.tunnel = None
        self.server.stop()


def record_url(ctx: OperationContext | None, options: ServeOptions, url: str) -> Publication:
    if ctx is None:
        raise UsageError(
            f"publishing the catalog at {url} records that URL in the project's Engine DB, "
            "and there is no project here (no craft-connector.yml); run it inside the "
            "project, or serve locally without --base-url and --ngrok"
        )
    hosting = Hosting.NGROK if options.ngrok else Hosting.BASE_URL
    return publish_catalog(ctx, PublicationRequest(url, hosting, options.replace_url))
