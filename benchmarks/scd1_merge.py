"""SCD1_MERGE with 100,000 changed rows on PostgreSQL: time and rows/s. Run by hand, never in CI.

    uv run python benchmarks/scd1_merge.py [ADMIN_URL] [--rows N]

ADMIN_URL defaults to ETL_CRAFT_TEST_DATABASE_URL; a throwaway database is created and dropped.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from datetime import date

import psycopg
from sqlalchemy.engine import make_url

from etl_craft.handlers.sql import Action, SqlActionSpec, run_sql_action
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.targets import TargetObject

TARGET = TargetObject("bench", "customers")
SOURCE = "SELECT id, name, CAST(balance AS DECIMAL(12,2)) AS balance, segment FROM bench.src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "admin_url", nargs="?", default=os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    )
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    if not args.admin_url:
        parser.error("give an admin URL or set ETL_CRAFT_TEST_DATABASE_URL")
    name = f"etl_craft_bench_{uuid.uuid4().hex[:8]}"
    admin = make_url(args.admin_url).set(drivername="postgresql")
    with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        benchmark(admin.set(database=name).render_as_string(hide_password=False), args.rows)
    finally:
        with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def spec(action: Action, attempt: int) -> SqlActionSpec:
    return SqlActionSpec(
        action=action,
        target=TARGET,
        source_sql=SOURCE,
        pipeline_id=1,
        pipeline_run_id=attempt,
        task_run_id=attempt,
        attempt_id=attempt,
        actor="benchmark",
        run_date=date.today(),
        merge_key=("id",),
    )


def benchmark(url: str, rows: int) -> None:
    with PostgreSQLConnection(url) as conn:
        conn.execute("create the source", "CREATE SCHEMA bench")
        conn.execute(
            "fill the source",
            "CREATE TABLE bench.src AS SELECT g AS id, 'name ' || g AS name, "
            "CAST(g % 1000 AS DECIMAL(12,2)) AS balance, CAST(g % 7 AS VARCHAR(10)) AS segment "
            f"FROM generate_series(1, {rows}) g",
        )
        run_sql_action(conn, spec(Action.SETUP_TABLE, 1))
        run_sql_action(conn, spec(Action.SCD1_MERGE, 2))
        conn.execute("change every row", "UPDATE bench.src SET balance = balance + 0.01")
        started = time.perf_counter()
        counts = run_sql_action(conn, spec(Action.SCD1_MERGE, 3))
        elapsed = time.perf_counter() - started
    assert counts.updated == rows, counts
    print(
        f"SCD1_MERGE of {rows:,} changed rows on PostgreSQL: {elapsed:.2f} s, "
        f"{rows / elapsed:,.0f} rows/s ({counts})"
    )


if __name__ == "__main__":
    main()
