"""Doctor's check of an Iceberg warehouse: the catalog answers and the location takes files."""

from __future__ import annotations

import uuid

from pyiceberg.io import load_file_io

from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.iceberg.catalog import settings_of
from etl_craft.warehouse.reach import Reached


def reach_iceberg(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    settings = settings_of(warehouse)
    catalog = settings.open()
    try:
        namespaces = catalog.list_namespaces()
    except Exception as error:  # the catalog database's driver raises its own errors
        raise WarehouseError(
            f"the Iceberg catalog {settings.shown} does not answer within {timeout_seconds} s: "
            f"{' '.join(str(error).split())}"
        ) from error
    probe = f"{settings.location.rstrip('/')}/.etl-craft-doctor-{uuid.uuid4().hex}"
    io = load_file_io({}, settings.location)
    try:
        with io.new_output(probe).create(overwrite=True) as stream:
            stream.write(b"etl-craft doctor")
        io.delete(probe)
    except OSError as error:
        raise WarehouseError(
            f"the Iceberg warehouse location {settings.location} can't be written: {error}; "
            "check Warehouse.location and its permissions"
        ) from error
    return Reached(
        f"Iceberg catalog {settings.shown} with {len(namespaces)} namespace(s); "
        f"location {settings.location} writable"
    )
