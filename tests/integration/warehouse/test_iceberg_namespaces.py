"""Task processes that create one Iceberg namespace at once (a pipeline's setup tasks, each
writing a table of one schema) all succeed: the SQL catalog looks, then inserts, so all but
the first used to break its key and fail their attempt."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyiceberg.catalog.sql import SqlCatalog

from etl_craft.warehouse.iceberg.catalog import ensure_namespace

WRITERS = 4
NAMESPACES = 6


def test_writers_that_create_one_namespace_at_once_all_succeed(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    location = (tmp_path / "files").as_uri()
    # One catalog each, as each task process opens its own; the first creates the tables.
    catalogs = [SqlCatalog("etl_craft", uri=uri, warehouse=location) for _ in range(WRITERS)]
    together = threading.Barrier(WRITERS)

    def writer(catalog: SqlCatalog) -> Callable[[], None]:
        def create_each() -> None:
            for number in range(NAMESPACES):
                together.wait(timeout=30)  # every writer looks at the same moment
                ensure_namespace(catalog, f"layer_{number}")

        return create_each

    with ThreadPoolExecutor(WRITERS) as pool:
        for done in [pool.submit(writer(catalog)) for catalog in catalogs]:
            done.result(timeout=120)

    expected = {(f"layer_{number}",) for number in range(NAMESPACES)}
    for catalog in catalogs:
        assert set(catalog.list_namespaces()) == expected
