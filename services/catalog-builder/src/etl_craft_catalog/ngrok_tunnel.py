"""The ngrok adapter: a tunnel to the local server, from the optional `ngrok` extra.

The SDK is imported here alone, and only when `--ngrok` asks for it, so that local and
organization hosting need neither the SDK nor ngrok credentials.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from etl_craft.core.errors import ConfigurationError, UsageError

EXTRA_MISSING = (
    "catalog serve --ngrok needs the ngrok SDK, which is the optional extra "
    "etl-craft-catalog[ngrok] and is not installed; install it (pip install "
    "'etl-craft-catalog[ngrok]', or uv sync --extra ngrok), or serve without --ngrok "
    "(locally, or behind your own reverse proxy with Docs_site.base_url)"
)


class Tunnel(Protocol):
    def url(self) -> str: ...

    def close(self) -> None: ...


def open_tunnel(port: int, authtoken: str | None, domain: str | None) -> Tunnel:
    try:
        sdk = importlib.import_module("ngrok")
    except ImportError:
        raise UsageError(EXTRA_MISSING) from None
    if authtoken is None:
        raise ConfigurationError(
            "catalog serve --ngrok needs an ngrok authtoken, found none; name the variable "
            "holding it in Docs_site.ngrok_authtoken_variable (such as NGROK_AUTHTOKEN) and "
            "set that variable in the environment or the project's .env"
        )
    options: dict[str, Any] = {"authtoken": authtoken}
    if domain:
        options["domain"] = domain
    listener = sdk.forward(f"127.0.0.1:{port}", **options)
    return _SdkTunnel(sdk, listener)


class _SdkTunnel:
    def __init__(self, sdk: Any, listener: Any) -> None:
        self._sdk, self._listener = sdk, listener

    def url(self) -> str:
        return str(self._listener.url())

    def close(self) -> None:
        self._sdk.disconnect(self.url())
