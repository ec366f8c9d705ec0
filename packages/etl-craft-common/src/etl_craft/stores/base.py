"""What every store does, and the shape of its URL and of its keys."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import urlsplit

from etl_craft.core.errors import ConfigurationError

SCHEMES = ("file", "s3")
URL_EXPECTATION = (
    "expected file:///absolute/folder (a folder, local or shared) or s3://bucket/prefix "
    "(any S3-compatible service)"
)
READ_SIZE = 1024 * 1024


@dataclass(frozen=True)
class StoreSettings:
    """A store as configured: its URL, and for s3:// where the service answers."""

    url: str
    endpoint_url: str | None = None  # an S3-compatible service's address; None: AWS's own
    region: str | None = None

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme

    def require_valid(self, setting: str) -> None:
        problem = store_url_problem(self.url)
        if problem is not None:
            raise ConfigurationError(f"{setting} is {self.url!r}; {problem}")


@dataclass(frozen=True)
class StoredObject:
    key: str
    sha256: str
    size: int


class ObjectStore(Protocol):
    @property
    def url(self) -> str:
        """The store's URL, as configured: error messages and locations start with it."""

    def put_bytes(self, key: str, data: bytes) -> StoredObject: ...

    def put_file(self, key: str, path: Path) -> StoredObject: ...

    def get(self, key: str) -> bytes:
        """The object's bytes; NotFoundError when the store has no such key."""

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None:
        """Remove the object; a key already gone is no error."""

    def list(self, prefix: str) -> list[str]:
        """The keys starting with ``prefix``, sorted."""


def store_url_problem(url: str) -> str | None:
    """Why ``url`` is no store URL, or None."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        return URL_EXPECTATION
    if parts.query or parts.fragment:
        return f"a store URL takes no query or fragment; {URL_EXPECTATION}"
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            return f"a file:// store is an absolute folder (three slashes); {URL_EXPECTATION}"
        return None
    if not parts.netloc:
        return f"an s3:// store names its bucket; {URL_EXPECTATION}"
    return None


def check_key(key: str) -> str:
    """A key is a relative path of plain segments: it never leaves the store's folder."""
    path = PurePosixPath(key)
    if (
        not key
        or path.is_absolute()
        or any(part in ("", ".", "..") for part in key.split("/"))
        or "\\" in key
    ):
        raise ValueError(
            f"store key {key!r} is not a relative path of plain segments such as "
            "logs/daily/run-1/load.attempt-1.log"
        )
    return key


def sha256_of_file(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(READ_SIZE):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size
