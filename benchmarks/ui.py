"""Server time of the web UI's runs grid (50 runs x 30 tasks) and of one run's page: p50/p95.

    uv run python benchmarks/ui.py [ADMIN_URL] [--runs N] [--tasks N] [--requests N]

A throwaway PostgreSQL database is created at ADMIN_URL (default: ETL_CRAFT_TEST_DATABASE_URL,
else the local server), filled with one pipeline of chained tasks and its runs through the
metadata fixtures (every task run SUCCESS), and dropped at the end. The UI app runs in-process
under FastAPI's TestClient, signed in with an operator token; each request is timed from send
to the whole answer. The grid is timed as the fragment htmx asks for every 2 s, and as the page.
Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER
from tests.fixtures.synthetic_catalog import seed_catalog
from tests.integration.ui.conftest import settings_of, sign_in

from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.access.api_tokens import TokenRequest, create_token
from etl_craft.operations.context import OperationContext
from etl_craft_ui.app import create_app

LOCAL = "postgresql://postgres@127.0.0.1:5432/postgres"


def timed(client: TestClient, path: str, requests: int) -> tuple[list[float], list[float], int]:
    """(p50, p95) of wall-clock ms, the same of this process's CPU ms (the app runs in it,
    so this is the figure a loaded machine changes least), and the answer's bytes."""
    client.get(path).raise_for_status()  # the first answer warms templates and the pool
    wall, cpu = [], []
    size = 0
    for _ in range(requests):
        started, used = time.perf_counter(), time.process_time()
        answer = client.get(path)
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
        answer.raise_for_status()
        size = len(answer.content)
    return _cuts(wall), _cuts(cpu), size


def _cuts(samples: list[float]) -> list[float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return [cuts[49], cuts[94]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "admin_url", nargs="?", default=os.environ.get("ETL_CRAFT_TEST_DATABASE_URL", LOCAL)
    )
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    name = unique_name("etl_craft_bench_ui")
    url = create_database(args.admin_url, name)
    try:
        initialise(url)
        engine = EngineDB(url)
        seed_catalog(engine, 1, args.tasks, args.runs)
        ctx = OperationContext(None, None, engine, TESTER)
        token = create_token(ctx, TokenRequest("bench_operator", "operator")).token
        with TestClient(create_app(ctx, settings_of()), follow_redirects=False) as client:
            assert sign_in(client, token).status_code == 303
            run_id = _newest_run(client)
            print(
                f"PostgreSQL Engine DB: {args.runs} runs x {args.tasks} tasks, "
                f"{args.requests} requests each; load average {os.getloadavg()[0]:.1f}"
            )
            for label, path in (
                (f"grid fragment ({args.runs} runs)", f"/partials/runs-grid?limit={args.runs}"),
                (f"grid page ({args.runs} runs)", f"/runs?limit={args.runs}"),
                (f"run page (run {run_id})", f"/runs/{run_id}"),
                ("run task table fragment", f"/partials/runs/{run_id}/tasks"),
            ):
                (p50, p95), (cpu50, cpu95), size = timed(client, path, args.requests)
                print(
                    f"{label}: p50 {p50:.1f} ms, p95 {p95:.1f} ms (CPU p50 {cpu50:.1f} ms, "
                    f"p95 {cpu95:.1f} ms), {size} bytes"
                )
        engine.dispose()
    finally:
        drop_database(args.admin_url, name)


def _newest_run(client: TestClient) -> int:
    page = client.get("/partials/runs-grid?limit=1").text
    marker = '<tr data-run="'
    start = page.index(marker) + len(marker)
    return int(page[start : page.index('"', start)])


if __name__ == "__main__":
    main()
