"""A month of a 100-pipeline project, compressed, with the daily purge on: does the Engine DB
stay flat once history is older than the retention window?

    uv run python benchmarks/retention_month.py ADMIN_URL [--pipelines N] [--days N]
        [--every-minutes N] [--history-days N]

A throwaway PostgreSQL database is created and dropped. Each simulated day adds the history
that N pipelines of 4 tasks, each run every --every-minutes minutes, leave (a run, its 4 task
runs, an attempt each and a retry for one task run in 20), written in bulk with that day's
times; then the daily purge runs as of the day's end with a retention window of
--history-days days (runs, attempt logs and consumption alike), and a plain VACUUM stands in
for the autovacuum a real day gives. It prints the AUD_ rows and bytes at days 1, 15 and the
last, and after each day when --every-day is set. The budget: rows and bytes flat once the
window has passed (no growth between day 15 and the last beyond the day-to-day noise).
Run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests package
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER, execute

from etl_craft.config.sections import build_retention
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.retention.purge import PurgeRequest, purge

PIPELINES = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'month_' || g FROM CFG_PROJECTS, generate_series(1, :pipelines) AS g
 WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'task_' || n, 'SQL' FROM CFG_PIPELINES, generate_series(1, 4) AS n
 WHERE PIPELINE_CODE LIKE 'month\\_%'
"""

# One day of history: a run per pipeline every :every minutes from :day, each with its task
# runs and attempts; a retry (a FAILED attempt before the SUCCESS) for one task run in 20.
DAY = """
INSERT INTO AUD_PIPELINES_RUN_LOG (PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE, STATUS,
    QUEUED_AT, START_DATE, END_DATE, STARTED_BY, STARTED_BY_KIND)
SELECT p.PIPELINE_ID, 'month:' || p.PIPELINE_ID || ':' || :day_key || ':' || s, 'SCHEDULE',
       CAST(:day AS DATE), 'SUCCESS',
       :day + s * :every * interval '1 minute', :day + s * :every * interval '1 minute',
       :day + s * :every * interval '1 minute' + interval '2 minutes', 'schedule', 'SCHEDULE'
  FROM CFG_PIPELINES p, generate_series(0, :runs_per_day - 1) AS s
 WHERE p.PIPELINE_CODE LIKE 'month\\_%';
INSERT INTO AUD_TASK_RUN_LOG (PIPELINE_RUN_ID, TASK_ID, STATUS, ATTEMPT_COUNT, UPDATED_BY,
    UPDATED_BY_KIND)
SELECT r.PIPELINE_RUN_ID, t.TASK_ID, 'SUCCESS',
       CASE WHEN (r.PIPELINE_RUN_ID + t.TASK_ID) % 20 = 0 THEN 2 ELSE 1 END,
       'worker', 'WORKER'
  FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_TASKS t ON t.PIPELINE_ID = r.PIPELINE_ID
 WHERE r.RUN_KEY LIKE 'month:%:' || :day_key || ':%';
INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, SLOT_KIND, QUEUED_AT,
    STARTED_AT, ENDED_AT, TASK_LOG, REQUESTED_BY, REQUESTED_BY_KIND)
SELECT t.TASK_RUN_ID, n, CASE WHEN n = t.ATTEMPT_COUNT THEN 'SUCCESS' ELSE 'FAILED' END,
       'warehouse', r.START_DATE, r.START_DATE, r.END_DATE, repeat('log line ', 40),
       'schedule', 'SCHEDULE'
  FROM AUD_TASK_RUN_LOG t
  JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID
  CROSS JOIN generate_series(1, 2) AS n
 WHERE r.RUN_KEY LIKE 'month:%:' || :day_key || ':%' AND n <= t.ATTEMPT_COUNT
"""

SIZE = """
SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname LIKE 'aud\\_%'
"""


def _rows(engine: EngineDB) -> int:
    tables = ("AUD_PIPELINES_RUN_LOG", "AUD_TASK_RUN_LOG", "AUD_TASK_ATTEMPTS", "AUD_ACTIONS")
    with engine.read() as conn:
        return sum(int(execute(conn, f"SELECT count(*) FROM {t}").scalar_one()) for t in tables)


def _vacuum(url: str) -> int:
    """VACUUM the AUD_ tables (what autovacuum does in a day); the AUD_ tables' bytes after."""
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        names = conn.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'aud\\_%'"
        ).fetchall()
        for (name,) in names:
            conn.execute(f"VACUUM {name}")
        found = conn.execute(SIZE).fetchone()
    return int(found[0]) if found else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("admin_url", help="a PostgreSQL admin URL")
    parser.add_argument("--pipelines", type=int, default=100)
    parser.add_argument("--every-minutes", type=int, default=15)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--history-days", type=int, default=7)
    parser.add_argument("--every-day", action="store_true", help="print each day, not 1/15/last")
    args = parser.parse_args()
    runs_per_day = 24 * 60 // args.every_minutes
    name = unique_name("etl_craft_bench_month")
    url = create_database(args.admin_url, name)
    engine = EngineDB(url)
    window = str(args.history_days)
    retention = build_retention(None)
    retention = type(retention)(
        run_history_days=args.history_days,
        attempt_log_days=args.history_days,
        consumption_days=args.history_days,
        interventions_days=None,
        daily_at=retention.daily_at,
        batch_rows=retention.batch_rows,
    )
    first = datetime(2026, 1, 1, tzinfo=UTC)
    shown = {1, 15, args.days}
    print(
        f"{args.pipelines} pipelines x 4 tasks, a run every {args.every_minutes} min "
        f"({runs_per_day} runs a day each), {args.days} days, retention window {window} days"
    )
    print("day  AUD rows   AUD MB  purged rows  day's insert s  purge s")
    try:
        initialise(url)
        with engine.transaction(TESTER) as conn:
            for sql in PIPELINES.strip().split(";\n"):
                execute(conn, sql, pipelines=args.pipelines)
        for day in range(1, args.days + 1):
            start = first + timedelta(days=day - 1)
            began = time.perf_counter()
            with engine.transaction(TESTER) as conn:
                for sql in DAY.strip().split(";\n"):
                    execute(
                        conn,
                        sql,
                        day=start,
                        day_key=f"{day:03d}",
                        every=args.every_minutes,
                        runs_per_day=runs_per_day,
                    )
            inserted = time.perf_counter() - began
            began = time.perf_counter()
            view = purge(engine, TESTER, PurgeRequest(retention, start + timedelta(days=1)), None)
            purged = time.perf_counter() - began
            size = _vacuum(url)
            if args.every_day or day in shown:
                print(
                    f"{day:3d}  {_rows(engine):9,d}  {size / 2**20:7.1f}  {view.total_rows:11,d}"
                    f"  {inserted:14.1f}  {purged:7.1f}"
                )
        load = os.getloadavg()
        print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        engine.dispose()
        drop_database(args.admin_url, name)


if __name__ == "__main__":
    main()
