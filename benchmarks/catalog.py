"""A catalog build of 300 pipelines x 10 tasks x 50 runs: seconds and Engine DB statements.

    uv run python benchmarks/catalog.py [ADMIN_URL] [--pipelines N] [--tasks N] [--runs N]

Without ADMIN_URL the Engine DB is a throwaway SQLite file; with a PostgreSQL admin URL a
throwaway database is created there and dropped. The build is timed twice: the first traces
every SELECT and stores the traces, the second reuses them (what a nightly rebuild does).
Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER
from tests.fixtures.synthetic_catalog import seed_catalog

from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.catalog.snapshot import read_catalog
from etl_craft.operations.context import OperationContext
from etl_craft_catalog.site import write_site


@contextmanager
def engine_url(admin_url: str | None, folder: Path) -> Iterator[str]:
    if admin_url is None:
        url = f"sqlite:///{folder / 'engine.db'}"
        initialise(url)
        yield url
        return
    name = unique_name("etl_craft_bench_catalog")
    url = create_database(admin_url, name)
    try:
        initialise(url)
        yield url
    finally:
        drop_database(admin_url, name)


def build(engine: EngineDB, folder: Path) -> tuple[float, float, int, int]:
    """(seconds reading, seconds writing pages, statements, pages) of one build."""
    sent: list[str] = []

    def count(*args: Any) -> None:
        sent.append(args[2])

    event.listen(engine.engine, "before_cursor_execute", count)
    started = time.perf_counter()
    catalog = read_catalog(OperationContext(None, None, engine, TESTER))
    read = time.perf_counter() - started
    event.remove(engine.engine, "before_cursor_execute", count)
    started = time.perf_counter()
    pages = write_site(catalog, folder)
    return read, time.perf_counter() - started, len(sent), pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("admin_url", nargs="?", help="a PostgreSQL admin URL (default: SQLite)")
    parser.add_argument("--pipelines", type=int, default=300)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, engine_url(args.admin_url, Path(scratch)) as url:
        engine = EngineDB(url)
        started = time.perf_counter()
        seed_catalog(engine, args.pipelines, args.tasks, args.runs)
        print(
            f"seeded {args.pipelines} x {args.tasks} tasks x {args.runs} runs "
            f"on {engine.dialect} in {time.perf_counter() - started:.1f}s"
        )
        for label in ("first build (traces every SELECT)", "rebuild (stored traces)"):
            site = Path(scratch) / label.split()[0]
            read, write, statements, pages = build(engine, site)
            print(
                f"{label}: {read + write:.1f}s ({read:.1f}s reading, {write:.1f}s writing "
                f"{pages} pages), {statements} Engine DB statements"
            )
        engine.dispose()


if __name__ == "__main__":
    main()
