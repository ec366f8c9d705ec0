"""etl-craft clone on PostgreSQL: a first clone of a large history, then the clones that keep it
up, against their rival (copying whole tables, the 0.1 clone), while a live run plays beside.

    uv run python benchmarks/clone.py ADMIN_URL [--runs N] [--attempts-per-run N]
        [--changed-runs N] [--warehouse duckdb|postgresql]

A throwaway Engine DB (and, for a PostgreSQL warehouse, a throwaway warehouse database) is
created on the server and dropped. It holds N ended runs, each with one task run and its
attempts (the purge benchmark's history). Figures: the first clone (every row: the rival's
cost at each turn), then, after --changed-runs runs change and as many run through, the
incremental clone; each with the live run's transactions timed beside it. Budget: the
incremental clone copies only what changed and takes a small fraction of the first; no live
transaction waits on a clone (the longest stays near its median alone). Run by hand, never
in CI.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package
from benchmarks.purge import SEED, LiveRuns
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER, execute, seed_pipeline

from etl_craft.config.sections import Cloning
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.cloning.clone import CloneView, WarehouseOpener, clone
from etl_craft.operations.cloning.masking import row_mask
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection

TOUCH = (
    "UPDATE AUD_PIPELINES_RUN_LOG SET MESSAGE = 'looked at again' WHERE PIPELINE_RUN_ID <= :changed"
)


def _timed(
    label: str, engine: EngineDB, live: tuple[int, int], work: Callable[[], CloneView]
) -> None:
    beside = LiveRuns(engine, live[0], live[1], label)
    beside.start()
    started = time.perf_counter()
    view = work()
    wall = time.perf_counter() - started
    beside.stopping.set()
    beside.join()
    rows = view.copied + sum(table.reread for table in view.tables)
    print(
        f"{label}: {view.copied} row(s) copied ({rows} read) in {wall:.2f}s, "
        f"{rows / wall:,.0f} rows/s; by table: "
        + ", ".join(f"{t.table} {t.copied}" for t in view.tables if t.copied)
    )
    seconds = sorted(beside.seconds)
    if seconds:
        print(
            f"  a live run's transactions beside it: {len(seconds)}, median "
            f"{statistics.median(seconds) * 1000:.1f} ms, longest {seconds[-1] * 1000:.1f} ms"
        )


def _opener(kind: str, admin: str, folder: Path) -> tuple[WarehouseOpener, str | None]:
    if kind == "duckdb":
        return partial(DuckDBConnection, str(folder / "mirror.duckdb")), None
    name = unique_name("etl_craft_bench_mirror")
    return partial(PostgreSQLConnection, create_database(admin, name)), name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("admin_url", help="a PostgreSQL admin URL")
    parser.add_argument("--runs", type=int, default=2_000)
    parser.add_argument("--attempts-per-run", type=int, default=4)
    parser.add_argument("--changed-runs", type=int, default=20)
    parser.add_argument("--warehouse", choices=("duckdb", "postgresql"), default="duckdb")
    args = parser.parse_args()
    name = unique_name("etl_craft_bench_clone")
    url = create_database(args.admin_url, name)
    engine = EngineDB(url)
    folder = Path(tempfile.mkdtemp(prefix="etl-craft-clone-"))
    opener, warehouse_db = _opener(args.warehouse, args.admin_url, folder)
    try:
        initialise(url)
        old = seed_pipeline(engine, tasks=("load",))
        live = seed_pipeline(engine, tasks=("load",))
        values = {"pipeline": old.pipeline_id, "task": old.task_ids["load"], "runs": args.runs}
        with engine.transaction(TESTER) as conn:
            for sql in SEED.strip().split(";\n"):
                execute(conn, sql, per_run=args.attempts_per_run, **values)
            execute(conn, "ANALYZE")
        print(f"seeded {args.runs} runs, {args.runs * args.attempts_per_run} attempts")
        cloning = Cloning("aud_mirror", 15, 60, 0)
        mask = row_mask(engine, None)
        beside = (live.pipeline_id, live.task_ids["load"])
        run_clone = partial(clone, engine, opener, cloning, mask)

        _timed(
            f"first clone into {args.warehouse} (the rival, each turn)", engine, beside, run_clone
        )
        _timed("a clone with nothing changed", engine, beside, run_clone)
        with engine.transaction(TESTER) as conn:
            execute(conn, TOUCH, changed=args.changed_runs)
        _timed(f"a clone after {args.changed_runs} runs changed", engine, beside, run_clone)
    finally:
        engine.dispose()
        drop_database(args.admin_url, name)
        if warehouse_db is not None:
            drop_database(args.admin_url, warehouse_db)


if __name__ == "__main__":
    main()
