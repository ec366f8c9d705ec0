"""The Engine DB connection budget: each process's pool, and doctor's sum of them against
what the PostgreSQL server allows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.pool import NullPool, QueuePool

from etl_craft.cli.main import build_parser
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.workers import WorkerRegistration
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft.operations.doctor.connection_budget import over_budget
from etl_craft.operations.doctor.report import doctor
from etl_craft.runtime import child
from etl_craft_worker.worker_command import worker_context
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.cli.conftest import run_cli
from tests.integration.worker.test_queue_claim import claim, queue
from tests.integration.worker.test_worker_rows import register


def slotted(name: str, ingestion: int, warehouse: int) -> WorkerRegistration:
    return WorkerRegistration(
        f"host:{name}:1:ab", "default", "host", 1, "0.1.0", 1, ingestion, warehouse
    )


def server_limits(db: EngineDB) -> tuple[int, int]:
    with db.engine.connect() as conn:
        limit = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
        reserved = int(conn.exec_driver_sql("SHOW superuser_reserved_connections").scalar_one())
    return limit, reserved


def pool_of(db: EngineDB) -> tuple[int, int]:
    pool = db.engine.pool
    assert isinstance(pool, QueuePool)
    return pool.size(), pool._max_overflow


def set_pool_size(project: ProjectOnDisk, size: int) -> None:
    config = project.root / "craft-connector.yml"
    config.write_text(config.read_text() + f"Orchestration:\n  db_pool_size: {size}\n")


@pytest.mark.parametrize(
    ("ingestion", "warehouse", "pool"), [(4, 16, 5), (1, 0, 3), (8, 0, 3), (8, 1, 4), (0, 64, 10)]
)
def test_a_worker_pools_two_connections_and_one_per_eight_slots(
    tmp_path: Path,
    pg_fresh_url: str,
    monkeypatch: pytest.MonkeyPatch,
    ingestion: int,
    warehouse: int,
    pool: int,
) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    project.engine.dispose()
    monkeypatch.chdir(project.root)
    argv = ["worker", "--ingestion-slots", str(ingestion), "--warehouse-slots", str(warehouse)]
    ctx = worker_context(build_parser().parse_args(argv))
    try:
        assert pool_of(ctx.engine) == (pool, 0)
    finally:
        ctx.close()


def test_db_pool_size_sizes_every_pool_a_worker_s_too(tmp_path: Path, pg_fresh_url: str) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    project.engine.dispose()
    set_pool_size(project, 4)

    for slots in (None, 64):
        ctx = build_context(ContextRequest(config=project.config, cwd=project.root, slots=slots))
        try:
            assert pool_of(ctx.engine) == (4, 0)
        finally:
            ctx.close()


def test_the_overseer_api_and_ui_pool_ten_connections_and_never_more(
    tmp_path: Path, pg_fresh_url: str
) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    project.engine.dispose()
    ctx = build_context(ContextRequest(config=project.config, cwd=project.root))
    try:
        assert pool_of(ctx.engine) == (10, 0)
    finally:
        ctx.close()


def test_a_task_process_holds_one_connection_only_while_it_speaks(pg_fresh_url: str) -> None:
    # The engine a task process (runtime/child) opens, as the fork server prepares it.
    engine = child._engine(pg_fresh_url)
    closed: list[object] = []
    event.listen(engine.engine, "close", lambda dbapi, record: closed.append(dbapi))
    try:
        assert isinstance(engine.engine.pool, NullPool)
        with psycopg.connect(pg_fresh_url, autocommit=True, application_name="observer") as seen:
            with engine.read(), engine.read():
                during, closed_during = task_connections(seen), len(closed)
        closed_after = len(closed)
    finally:
        engine.dispose()
    # Each read its own connection, closed as the read ends: none is kept for later.
    assert (during, closed_during, closed_after) == (2, 0, 2)


def task_connections(observer: psycopg.Connection[Any]) -> int:
    found = observer.execute(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = 'etl-craft' AND datname = current_database()"
    ).fetchone()
    assert found is not None
    return int(found[0])


def test_the_budget_names_each_process_and_what_the_server_allows(
    tmp_path: Path, pg_fresh_url: str
) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    limit, reserved = server_limits(project.engine)
    first, second = slotted("a", 4, 16), slotted("b", 1, 0)
    register(project.engine, first, second)
    queue(project.engine, 1)
    claim(project.engine, first.worker_id)

    report = doctor(ContextRequest(config=project.config, cwd=project.root))
    project.engine.dispose()

    [check] = [check for check in report.checks if check.name == "connections"]
    # overseer 10 + worker a 5 + worker b 3 + tasks 21 (slots) + api 10 + ui 10
    total = 59
    available = limit - reserved
    lines = check.detail.splitlines()
    assert lines[0].startswith(
        f"budget {total} of {available} connections ({total / available:.0%}): "
        f"max_connections {limit} less {reserved} reserved; "
    )
    assert lines[1:] == [
        "overseer x1: 10 (a pool of 10 (the default) each, its advisory-lock session and "
        "listener included)",
        "worker host:a:1:ab: 5 (20 slot(s): a pool of 2 + 1 per 8 slots)",
        "worker host:b:1:ab: 3 (1 slot(s): a pool of 2 + 1 per 8 slots)",
        "task processes: 21 (one connection each at most: the live workers' 21 slots, 1 "
        "running now)",
        "api: 10 (a pool of 10 (the default))",
        "ui: 10 (a pool of 10 (the default))",
    ]
    budget = report.connection_budget
    assert budget is not None
    assert (budget.total, budget.max_connections, budget.reserved) == (total, limit, reserved)
    assert check.status.value == ("WARN" if total > 0.8 * available else "PASS")


def test_doctor_warns_past_four_fifths_of_the_server_s_connections(
    tmp_path: Path, pg_fresh_url: str
) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    limit, reserved = server_limits(project.engine)
    available = limit - reserved
    # One connection per slot for its tasks plus its pool: enough slots to pass 80%.
    register(project.engine, slotted("big", 0, available))
    project.engine.dispose()

    report = doctor(ContextRequest(config=project.config, cwd=project.root))

    [check] = [check for check in report.checks if check.name == "connections"]
    assert check.status.value == "WARN"
    assert f"above 80% of {available}, {0.8 * available:g}" in check.detail.splitlines()[0]
    assert check.remedy is not None
    for remedy in ("db_pool_size", "fewer slots", "max_connections", "PgBouncer", "overseer"):
        assert remedy in check.remedy


def test_the_warning_starts_past_four_fifths_of_what_the_server_allows() -> None:
    # max_connections 100 less 3 reserved: 97, of which 80% is 77.6.
    assert not over_budget(77, 97)
    assert over_budget(78, 97)
    assert not over_budget(80, 100)
    assert over_budget(81, 100)


def test_doctor_prints_the_budget_and_gives_it_in_json(tmp_path: Path, pg_fresh_url: str) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    limit, reserved = server_limits(project.engine)
    register(project.engine, slotted("a", 2, 6))
    project.engine.dispose()
    set_pool_size(project, 4)

    printed = run_cli("doctor", cwd=project.root, env={}).stdout
    done = run_cli("--format", "json", "doctor", cwd=project.root, env={})

    # overseer 4 + worker a 4 + tasks 8 + api 4 + ui 4
    assert f"connections         budget 24 of {limit - reserved} connections (" in printed
    assert "worker host:a:1:ab: 4 (8 slot(s): a pool of 4 (Orchestration.db_pool_size))" in printed
    budget = json.loads(done.stdout)["connection_budget"]
    assert [(d["process"], d["connections"]) for d in budget["demands"]] == [
        ("overseer x1", 4),
        ("worker host:a:1:ab", 4),
        ("task processes", 8),
        ("api", 4),
        ("ui", 4),
    ]
    assert (budget["total"], budget["max_connections"], budget["reserved"]) == (
        24,
        limit,
        reserved,
    )
    assert budget["available"] == limit - reserved
