"""Signed cookie values: a JSON object and its HMAC-SHA256 under the UI's secret.

The value is readable by whoever holds the cookie (it holds no secret: a token's name, its
role, a CSRF token and an expiry) but cannot be changed or forged without the secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any


def sign(payload: dict[str, Any], secret: str) -> str:
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_b64(_mac(body, secret))}"


def unsign(value: str, secret: str) -> dict[str, Any] | None:
    """The payload of a value ``sign`` made with ``secret``; None for anything else."""
    body, dot, mac = value.partition(".")
    if not dot or not hmac.compare_digest(mac.encode(), _b64(_mac(body, secret)).encode()):
        return None
    try:
        loaded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, binascii.Error):
        return None
    return loaded if isinstance(loaded, dict) else None


def _mac(body: str, secret: str) -> bytes:
    return hmac.new(secret.encode(), body.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
