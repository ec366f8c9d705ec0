"""Where a person's browser reaches a service that listens on a host and port."""

from __future__ import annotations

# Listening on every interface: this machine's browser reaches it on the loopback address.
EVERY_INTERFACE = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104


def browser_url(host: str, port: int, path: str = "/") -> str:
    """The URL a browser on this machine opens for a service listening on ``host``:``port``."""
    reached = EVERY_INTERFACE.get(host, host)
    if ":" in reached:  # an IPv6 address is written in brackets
        reached = f"[{reached}]"
    return f"http://{reached}:{port}{path}"
