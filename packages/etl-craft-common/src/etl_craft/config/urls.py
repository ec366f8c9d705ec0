"""Database URLs as they may be shown: their password and credential-like query values masked.

A password may sit in a URL's userinfo or in its query (``?password=...``, which the drivers
accept too); both are masked wherever a URL is shown, and both are secrets a redactor masks.
An Engine or warehouse URL that carries a credential in its query is refused outright: the
driver would let it override the configured secret, and a query value is too easily copied
into a log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from etl_craft.core.redaction import DEFAULT_NAMES, MASK

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

# Query keys drivers read credentials from that the sensitive name patterns do not match.
CREDENTIAL_QUERY_KEYS = frozenset({"pass", "passwd", "pwd", "private_key_file_pwd"})
# Query keys that hand a driver a credential (B48): refused in an Engine or warehouse URL.
REFUSED_QUERY_KEYS = frozenset(
    {"password", "pass", "pwd", "passwd", "token", "access_token", "secret", "private_key_file_pwd"}
)
UNREADABLE = "(a URL that does not parse, not shown: it may hold a password)"


def is_credential_key(key: str) -> bool:
    return key.lower() in CREDENTIAL_QUERY_KEYS or DEFAULT_NAMES.key(key)


def url_secrets(url: str | URL) -> set[str]:
    """The password of ``url`` and the values of its credential-like query keys."""
    parsed = _parsed(url)
    if parsed is None:
        return set()
    found = {str(parsed.password)} if parsed.password else set()
    for key, value in parsed.query.items():
        if is_credential_key(key):
            found |= {value} if isinstance(value, str) else set(value)
    return found


def mask_url(url: str | URL) -> str:
    """``url`` with its password and credential-like query values shown as ***."""
    parsed = _parsed(url)
    if parsed is None:
        return UNREADABLE
    credentials = [key for key in parsed.query if is_credential_key(key)]
    shown = parsed.render_as_string(hide_password=True)
    if not credentials:
        return shown
    kept = parsed.difference_update_query(credentials).render_as_string(hide_password=True)
    separator = "&" if "?" in kept else "?"
    return kept + separator + "&".join(f"{key}={MASK}" for key in credentials)


def query_credential_problem(url: str | URL) -> str | None:
    """Why ``url`` may not be used, when its query carries a credential."""
    parsed = _parsed(url)
    if parsed is None:
        return None
    found = sorted(key for key in parsed.query if key.lower() in REFUSED_QUERY_KEYS)
    if not found:
        return None
    keys = ", ".join(f"?{key}=" for key in found)
    return (
        f"carries a credential in its query ({keys}{MASK}); expected none there: put "
        "the secret in a variable and name it in the URL's password (${VARIABLE}) instead"
    )


def _parsed(url: str | URL) -> URL | None:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not isinstance(url, str):
        return url
    try:
        return make_url(url)
    except ArgumentError:
        return None


# How SQLAlchemy's URLs open: a backend, a driver after "+" perhaps, then "://".
_SCHEME = re.compile(r"(?P<backend>\w+)(?:\+\w+)?://")
# Without a query and percent-escapes, whose reading is SQLAlchemy's to do.
_SQLITE_FILE = re.compile(r"sqlite(?:\+pysqlite)?:///(?P<path>[^?%]+)")


def backend_name(url: str) -> str:
    """The database ``url`` names, read as SQLAlchemy reads it (``postgres`` is PostgreSQL),
    without importing SQLAlchemy for a URL of the usual shape."""
    found = _SCHEME.match(url)
    if found is None:
        from sqlalchemy.engine import make_url

        return make_url(url).get_backend_name()  # raises SQLAlchemy's own parse error
    return "postgresql" if found["backend"] == "postgres" else found["backend"]


def sqlite_file(url: str) -> Path | None:
    """The file of an SQLite URL with no options (``sqlite:///relative/path``,
    ``sqlite:////absolute/path``); None for any other URL, an in-memory database included."""
    found = _SQLITE_FILE.fullmatch(url)
    if found is None or found["path"] == ":memory:":
        return None
    return Path(found["path"])
