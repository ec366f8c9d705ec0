"""The Engine DB's statement timing and the series its collector reads at scrape time."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.gauges import register_engine_collector
from etl_craft.enginedb.transitions import claim_attempt, lose_attempt, queue_attempt
from etl_craft.runtime.metrics import time_engine_statements
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.worker.queueing import python_pipeline, queue_run

COUNT = "etl_craft_enginedb_statement_seconds_count"


def observed(statement: str) -> float:
    return REGISTRY.get_sample_value(COUNT, {"statement": statement}) or 0.0


def test_each_engine_db_statement_is_timed_under_its_name(sqlite_project: ProjectOnDisk) -> None:
    time_engine_statements()
    engine = EngineDB(sqlite_project.connector.engine_url)
    named, unnamed = observed("metrics_clock"), observed("unnamed:PRAGMA")
    with engine.read() as conn:
        conn.scalar("metrics_clock")
        conn.scalar("metrics_clock")
        conn.connection.exec_driver_sql("PRAGMA user_version")
    engine.dispose()

    assert observed("metrics_clock") == named + 2
    assert observed("unnamed:PRAGMA") == unnamed + 1
    assert (REGISTRY.get_sample_value(f"{COUNT[:-6]}_sum", {"statement": "metrics_clock"}) or 0) > 0


def test_a_process_serving_no_metrics_neither_times_statements_nor_loads_prometheus(
    sqlite_project: ProjectOnDisk,
) -> None:
    """A one-shot command such as `etl-craft status` starts some 40 ms sooner without it."""
    program = (
        "import sys\n"
        "from etl_craft.enginedb.connection import EngineDB\n"
        f"engine = EngineDB({str(sqlite_project.connector.engine_url)!r})\n"
        "with engine.read() as conn:\n"
        "    print(conn.scalar('metrics_clock') is not None)\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60
    )

    assert ran.stdout.split() == ["True", "False"]


@pytest.mark.postgres
def test_a_delayed_retry_is_queued_but_not_due_and_the_oldest_due_wait_is_aged(
    pg_project: ProjectOnDisk,
) -> None:
    python_pipeline(pg_project, "waits", ["first", "second"])
    queued = queue_run(pg_project, "waits", ["first", "second"])
    with pg_project.engine.transaction(SYSTEM) as conn:
        claim_attempt(conn, queued["first"], SYSTEM, owner_id="gone:1", lease_seconds=-1)
        lose_attempt(conn, queued["first"], SYSTEM, message="its owner vanished")
        [(task_run_id,)] = conn.connection.exec_driver_sql(
            f"SELECT TASK_RUN_ID FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = {queued['first']}"
        ).all()
        queue_attempt(
            conn,
            task_run_id,
            SYSTEM,
            slot_kind=SlotKind.INGESTION,
            not_before=utc_now() + timedelta(hours=1),
        )
    registry = CollectorRegistry()
    register_engine_collector(pg_project.engine, registry)

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"pool": "default", **labels})

    assert value("etl_craft_attempts", slot_kind="ingestion", status="QUEUED") == 2
    assert value("etl_craft_queue_depth", slot_kind="ingestion") == 1
    assert value("etl_craft_retries_queued", slot_kind="ingestion") == 1
    assert (value("etl_craft_queue_oldest_age_seconds", slot_kind="ingestion") or 0) > 0
    assert value("etl_craft_queue_depth", slot_kind="warehouse") == 0
    assert (
        registry.get_sample_value("etl_craft_runs", {"project": "default", "status": "IN-PROGRESS"})
        == 1
    )
    assert registry.get_sample_value("etl_craft_enginedb_up") == 1
