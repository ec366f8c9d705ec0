"""A file load of one 100,000-row CSV into DuckDB and PostgreSQL: seconds and rows/s.

    uv run python benchmarks/file_loads.py [ADMIN_URL] [--rows N]

ADMIN_URL defaults to ETL_CRAFT_TEST_DATABASE_URL; a throwaway PostgreSQL database is created
there and dropped, and without one only DuckDB is measured. The time covers what an attempt
does: hashing the file, reading and converting every value, and the fenced insert. Run by hand,
never in CI.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.enginedb.offsets import OffsetType
from etl_craft.handlers.files.load import load_files
from etl_craft.handlers.files.spec import read_spec
from etl_craft.handlers.scripts.contract import ScriptContext

PARAMETERS = {
    "FILE_PATTERN": "landing/*.csv",
    "FILE_FORMAT": "CSV",
    "TARGET_OBJECT": "lnd.orders",
    "FILE_COLUMNS": "order_id BIGINT, customer TEXT, amount DECIMAL(10,2), ordered_on DATE",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "admin_url", nargs="?", default=os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    )
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_csv(root / "landing" / "orders.csv", args.rows)
        duckdb_file = str(root / "warehouse.duckdb")
        measure(root, Warehouse(WarehouseType.DUCKDB, None, duckdb_file, "etl_craft", None))
        if args.admin_url:
            with_postgresql(root, args.admin_url)


def with_postgresql(root: Path, admin_url: str) -> None:
    name = f"etl_craft_bench_{uuid.uuid4().hex[:8]}"
    admin = make_url(admin_url).set(drivername="postgresql")
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        url = admin.set(database=name).render_as_string(hide_password=False)
        measure(root, Warehouse(WarehouseType.POSTGRESQL, url, None, "etl_craft", None))
    finally:
        with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def write_csv(path: Path, rows: int) -> None:
    path.parent.mkdir(parents=True)
    with path.open("w") as handle:
        handle.write("order_id,customer,amount,ordered_on\n")
        for n in range(rows):
            handle.write(
                f"{n},customer {n % 977},{n % 10_000 / 100:.2f},2026-01-{1 + n % 28:02d}\n"
            )


def measure(root: Path, warehouse: Warehouse) -> None:
    context = ScriptContext(
        offset=None,
        offset_type=OffsetType.TEXT,
        input_params={},
        run_date=date.today(),
        pipeline_id=1,
        pipeline_run_id=1,
        task_id=1,
        task_run_id=1,
        attempt_id=1,
        log=logging.getLogger("benchmark"),
        warehouse_settings=warehouse,
    )
    started = time.perf_counter()
    result = load_files(read_spec("benchmark", PARAMETERS.get), context, root)
    elapsed = time.perf_counter() - started
    rows = result.counts.inserted or 0
    print(
        f"file load of {rows:,} CSV rows into {warehouse.type}: {elapsed:.2f} s, "
        f"{rows / elapsed:,.0f} rows/s"
    )


if __name__ == "__main__":
    main()
