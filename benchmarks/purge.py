"""Purge of 1,000,000 synthetic attempt rows on PostgreSQL: wall time, and the longest a
concurrent run's statements waited meanwhile.

    uv run python benchmarks/purge.py ADMIN_URL [--runs N] [--attempts-per-run N]

A throwaway database is created on the server and dropped. It holds N runs ended 500 days
ago (past the default 400 days), each with one task run and its attempts. While
`etl-craft purge`'s operation deletes them in batches of Retention.batch_rows, a thread plays
a live run's statements on another pipeline (queue a run, start it, queue and end an attempt,
end the run, one transaction each) and times every transaction. Budgets: purge at most 5
minutes, no concurrent transaction slower than 1 s. Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER, execute, seed_pipeline

from etl_craft.config.sections import build_retention
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.retention.purge import PurgeRequest, purge

SEED = """
INSERT INTO AUD_PIPELINES_RUN_LOG (PIPELINE_RUN_ID, PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE,
    STATUS, QUEUED_AT, START_DATE, END_DATE, STARTED_BY, STARTED_BY_KIND)
SELECT g, :pipeline, 'bench:' || g, 'SCHEDULE', DATE '2025-01-01', 'SUCCESS',
       now() - interval '500 days', now() - interval '500 days',
       now() - interval '500 days' + g * interval '1 second', 'bench', 'SCHEDULE'
  FROM generate_series(1, :runs) AS g;
INSERT INTO AUD_TASK_RUN_LOG (TASK_RUN_ID, PIPELINE_RUN_ID, TASK_ID, STATUS, ATTEMPT_COUNT,
    UPDATED_BY, UPDATED_BY_KIND)
SELECT g, g, :task, 'SUCCESS', :per_run, 'bench', 'SYSTEM' FROM generate_series(1, :runs) AS g;
INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, SLOT_KIND, QUEUED_AT,
    ENDED_AT, TASK_LOG, REQUESTED_BY, REQUESTED_BY_KIND)
SELECT r, n, CASE WHEN n = :per_run THEN 'SUCCESS' ELSE 'FAILED' END, 'warehouse',
       now() - interval '500 days', now() - interval '500 days', repeat('x', 200), 'bench',
       'SCHEDULE'
  FROM generate_series(1, :runs) AS r CROSS JOIN generate_series(1, :per_run) AS n;
SELECT setval(pg_get_serial_sequence('aud_pipelines_run_log', 'pipeline_run_id'), :runs);
SELECT setval(pg_get_serial_sequence('aud_task_run_log', 'task_run_id'), :runs);
"""

LIVE_RUN = (
    "INSERT INTO AUD_PIPELINES_RUN_LOG (PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE, STATUS, "
    "QUEUED_AT, STARTED_BY, STARTED_BY_KIND) VALUES (:p, :k, 'MANUAL', DATE '2026-01-01', "
    "'QUEUED', now(), 'bench', 'HUMAN') RETURNING PIPELINE_RUN_ID",
    "UPDATE AUD_PIPELINES_RUN_LOG SET STATUS = 'IN-PROGRESS', START_DATE = now() "
    "WHERE PIPELINE_RUN_ID = :r",
    "INSERT INTO AUD_TASK_RUN_LOG (PIPELINE_RUN_ID, TASK_ID, STATUS, UPDATED_BY, UPDATED_BY_KIND) "
    "VALUES (:r, :t, 'IN-PROGRESS', 'bench', 'SYSTEM') RETURNING TASK_RUN_ID",
    "INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, SLOT_KIND, QUEUED_AT, "
    "ENDED_AT, REQUESTED_BY, REQUESTED_BY_KIND) VALUES (:tr, 1, 'SUCCESS', 'warehouse', now(), "
    "now(), 'bench', 'SYSTEM')",
    "UPDATE AUD_PIPELINES_RUN_LOG SET STATUS = 'SUCCESS', END_DATE = now() "
    "WHERE PIPELINE_RUN_ID = :r",
)


class LiveRuns(threading.Thread):
    """Plays runs on a pipeline of their own until stopped, timing each transaction."""

    def __init__(self, engine: EngineDB, pipeline_id: int, task_id: int, label: str) -> None:
        super().__init__(daemon=True)
        self.engine, self.pipeline_id, self.task_id = engine, pipeline_id, task_id
        self.label = label
        self.stopping = threading.Event()
        self.seconds: list[float] = []

    def run(self) -> None:
        number = 0
        while not self.stopping.is_set():
            number += 1
            values = {"p": self.pipeline_id, "k": f"{self.label}:{number}", "t": self.task_id}
            for index, sql in enumerate(LIVE_RUN):
                started = time.perf_counter()
                with self.engine.transaction(TESTER) as conn:
                    found = execute(conn, sql, **values)
                    if index == 0:
                        values["r"] = found.scalar_one()
                    if index == 2:
                        values["tr"] = found.scalar_one()
                self.seconds.append(time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("admin_url", help="a PostgreSQL admin URL")
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--attempts-per-run", type=int, default=5)
    args = parser.parse_args()
    name = unique_name("etl_craft_bench_purge")
    url = create_database(args.admin_url, name)
    engine = EngineDB(url)
    try:
        initialise(url)
        old = seed_pipeline(engine, tasks=("load",))
        live = seed_pipeline(engine, tasks=("load",))
        started = time.perf_counter()
        with engine.transaction(TESTER) as conn:
            for sql in SEED.strip().split(";\n"):
                execute(
                    conn,
                    sql,
                    pipeline=old.pipeline_id,
                    task=old.task_ids["load"],
                    runs=args.runs,
                    per_run=args.attempts_per_run,
                )
            execute(conn, "ANALYZE")
        attempts = args.runs * args.attempts_per_run
        print(
            f"seeded {args.runs} runs, {attempts} attempts in {time.perf_counter() - started:.0f}s"
        )

        baseline = LiveRuns(engine, live.pipeline_id, live.task_ids["load"], "alone")
        baseline.start()
        time.sleep(5)
        baseline.stopping.set()
        baseline.join()

        concurrent = LiveRuns(engine, live.pipeline_id, live.task_ids["load"], "beside")
        concurrent.start()
        started = time.perf_counter()
        view = purge(engine, TESTER, PurgeRequest(build_retention(None), utc_now()), None)
        wall = time.perf_counter() - started
        concurrent.stopping.set()
        concurrent.join()

        load = os.getloadavg()
        print(
            f"purge: {view.total_rows} rows in {wall:.1f}s (budget 300s), batches "
            f"{len(view.action_ids)}; by table: "
            + ", ".join(f"{t.table} {t.rows}" for t in view.tables if t.rows)
        )
        for label, thread in (("alone", baseline), ("during the purge", concurrent)):
            seconds = sorted(thread.seconds)
            if not seconds:
                print(f"a live run's transactions {label}: none completed")
                continue
            p99 = seconds[int(len(seconds) * 0.99)]
            print(
                f"a live run's transactions {label}: {len(seconds)}, median "
                f"{statistics.median(seconds) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
                f"longest {seconds[-1] * 1000:.1f} ms (budget 1000 ms)"
            )
        print(
            f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
            f"on {os.cpu_count()} cores"
        )
    finally:
        engine.dispose()
        drop_database(args.admin_url, name)


if __name__ == "__main__":
    main()
