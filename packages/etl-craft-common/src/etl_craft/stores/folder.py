"""A store in a folder: each key a file under it, written whole or not at all."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.stores.base import StoredObject, check_key, sha256_of_file


class FolderStore:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.root = Path(unquote(urlsplit(url).path))

    def put_bytes(self, key: str, data: bytes) -> StoredObject:
        with self._writing(key) as handle:
            handle.write(data)
        return StoredObject(key, hashlib.sha256(data).hexdigest(), len(data))

    def put_file(self, key: str, path: Path) -> StoredObject:
        with self._writing(key) as handle, path.open("rb") as source:
            shutil.copyfileobj(source, handle)
        sha256, size = sha256_of_file(self._path(key))
        return StoredObject(key, sha256, size)

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise NotFoundError(
                f"store {self.url} has no object {key}; it was never written there or was "
                "removed (purged); check the store URL this process is configured with"
            ) from None
        except OSError as error:
            raise self._failure("read", key, error) from error

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as error:
            raise self._failure("delete", key, error) from error

    def list(self, prefix: str) -> list[str]:
        if not self.root.is_dir():
            return []
        keys = (
            path.relative_to(self.root).as_posix()
            for path in self.root.rglob("*")
            if path.is_file() and not path.name.startswith(".tmp-")
        )
        return sorted(key for key in keys if key.startswith(prefix))

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    @contextmanager
    def _writing(self, key: str) -> Iterator[IO[bytes]]:
        """A temporary file beside the target, renamed over it once complete: a reader sees
        the old object or the new one, never a part."""
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", dir=target.parent)
        except OSError as error:
            raise self._failure("write", key, error) from error
        try:
            with os.fdopen(descriptor, "wb") as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            Path(temporary).replace(target)
        except BaseException as error:
            Path(temporary).unlink(missing_ok=True)
            if isinstance(error, OSError):
                raise self._failure("write", key, error) from error
            raise

    def _failure(self, verb: str, key: str, error: OSError) -> ConfigurationError:
        return ConfigurationError(
            f"could not {verb} {key} in store {self.url}: {error.strerror or error}; expected "
            f"a folder this process may {verb} ({self.root}); fix its permissions or the "
            "store URL"
        )
