"""Where an Iceberg warehouse keeps its catalog and its files, from craft-connector.yml."""

from __future__ import annotations

import fcntl
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import ConfigurationError, WarehouseError

log = logging.getLogger("etl_craft.warehouse")

DEFAULT_CATALOG_NAME = "etl_craft"
# Beside a SQLite catalog file when no location is set.
DEFAULT_LOCATION_SUFFIX = ".files"


@dataclass(frozen=True)
class IcebergSettings:
    catalog_uri: str  # a SQLAlchemy URL of the catalog's database
    location: str  # where table files go: a URL (file:// or s3://)
    catalog_name: str
    # Where writers of one target queue: a folder for a SQLite catalog, the catalog's PostgreSQL
    # database (advisory locks) otherwise.
    lock_folder: Path | None
    lock_url: str | None
    shown: str  # the catalog without secrets, for messages

    def open(self) -> Catalog:
        # The first open creates the catalog's tables; task processes starting together would
        # race to create them, so they queue on a lock, and a lost race is tried once more.
        with self._opening():
            try:
                return self._open()
            except Exception as error:  # tried again below, which reports its own error
                log.debug("opening the Iceberg catalog %s once more: %s", self.shown, error)
            try:
                return self._open()
            except Exception as error:  # the driver's own errors differ per catalog database
                raise WarehouseError(
                    f"can't open the Iceberg catalog {self.shown}: {error}; check Warehouse.url "
                    "or Warehouse.path in craft-connector.yml and that the database answers"
                ) from error

    def _open(self) -> Catalog:
        return SqlCatalog(self.catalog_name, uri=self.catalog_uri, warehouse=self.location)

    @contextmanager
    def _opening(self) -> Iterator[None]:
        if self.lock_folder is None:
            yield
            return
        with (self.lock_folder / ".etl-craft-iceberg-catalog.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def settings_of(warehouse: Warehouse) -> IcebergSettings:
    name = warehouse.options.get("catalog_name", DEFAULT_CATALOG_NAME)
    location = warehouse.options.get("location")
    if (warehouse.url is None) == (warehouse.path is None):
        raise ConfigurationError(
            "the iceberg warehouse needs exactly one catalog: Warehouse.url (a PostgreSQL URL) "
            "or Warehouse.path (a SQLite file in the project such as lakehouse.db)"
        )
    if warehouse.path is not None:
        catalog_file = Path(warehouse.path).resolve()
        folder = _location(location, catalog_file.parent, catalog_file)
        return IcebergSettings(
            f"sqlite:///{catalog_file}", folder, name, catalog_file.parent, None, str(catalog_file)
        )
    url = make_url(str(warehouse.url))
    if not url.drivername.startswith("postgresql"):
        raise ConfigurationError(
            f"Warehouse.url of the iceberg warehouse is a {url.drivername} URL; expected a "
            "PostgreSQL URL (postgresql://user@host:5432/database) or Warehouse.path (SQLite)"
        )
    if location is None:
        raise ConfigurationError(
            "the iceberg warehouse with a PostgreSQL catalog has no location; set "
            "Warehouse.location to the folder (or s3:// URL) for its table files"
        )
    engine_url = url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    shown = url.render_as_string(hide_password=True)
    return IcebergSettings(engine_url, _location(location, None, None), name, None, plain, shown)


def _location(location: str | None, base: Path | None, catalog_file: Path | None) -> str:
    if location is None:
        assert catalog_file is not None  # only a SQLite catalog has a default location
        location = f"{catalog_file}{DEFAULT_LOCATION_SUFFIX}"
    if "://" in location:
        return location
    path = Path(location)
    if not path.is_absolute():
        if base is None:
            raise ConfigurationError(
                f"Warehouse.location {location!r} is relative, but a PostgreSQL catalog has no "
                "folder to resolve it against; write an absolute folder or an s3:// URL"
            )
        path = base / path
    path.mkdir(parents=True, exist_ok=True)
    return path.resolve().as_uri()


def ensure_namespace(catalog: Catalog, namespace: str) -> None:
    """Create ``namespace`` unless the catalog has it. The SQL catalog looks, then inserts:
    task processes that create one namespace at once (a pipeline's setup tasks, say) may all
    find it missing, and all but the first insert then break the catalog's key, while the
    namespace they wanted is there."""
    try:
        catalog.create_namespace_if_not_exists(namespace)
    except IntegrityError:
        if not catalog.namespace_exists(namespace):
            raise


def load(catalog: Catalog, schema: str, table: str) -> Table | None:
    """The table as the catalog has it now, or None when there is none."""
    try:
        return catalog.load_table((schema, table))
    except NoSuchTableError:
        return None
