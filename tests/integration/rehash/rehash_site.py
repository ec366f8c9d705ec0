"""A project whose merge target lives in a real warehouse, and the ways tests act on it."""

from __future__ import annotations

import itertools
import logging
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.config.connector import load_connector
from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, Handler
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.enginedb.hash_versions import HashedTarget, record_version, recorded_version
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.handlers.invocation import Task, TaskEnvironment
from etl_craft.handlers.sql_task import hashed_target, run_sql_task
from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import Row, WarehouseConnection
from etl_craft.warehouse.targets import TargetObject
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk

# Attempt ids key the warehouse ledger, so they must not repeat within one warehouse.
_ATTEMPTS = itertools.count(random.randrange(1, 2**40))
TARGET = "dm.customers"
SOURCE = "src.customers"
COLUMNS = "id, name, amount, seen"
SELECT = f"SELECT {COLUMNS} FROM {SOURCE}"
SOURCE_ROWS = (
    "(1, 'Ann', 10.50, CAST('2024-01-02 03:04:05.123456+02' AS TIMESTAMP WITH TIME ZONE)), "
    "(2, NULL, 0.00, NULL), "
    "(3, '', -1.25, CAST('2024-06-30 23:59:59.5+00' AS TIMESTAMP WITH TIME ZONE))"
)
# What etl-craft's first change hash looked like: NULL and '' agree, and '|' can collide.
VERSION_1_HASH = (
    "MD5(COALESCE(CAST(name AS VARCHAR), '') || '|' || COALESCE(CAST(amount AS VARCHAR), '') "
    "|| '|' || COALESCE(CAST(seen AS VARCHAR), ''))"
)


@dataclass
class Site:
    project: ProjectOnDisk
    warehouse_kind: str

    @contextmanager
    def warehouse(self) -> Iterator[WarehouseConnection]:
        # Opened and closed each time: a DuckDB file admits one process at a time.
        with connect(self.project.connector.warehouse) as conn:
            yield conn

    def sql(self, *statements: str) -> None:
        with self.warehouse() as conn:
            for statement in statements:
                conn.execute("prepare the test", statement)

    def rows(self, sql: str) -> list[Row]:
        with self.warehouse() as conn:
            return conn.fetch_all("read back", sql)

    def definition(self, target: str = TARGET) -> list[tuple[str, str]]:
        with self.warehouse() as conn:
            return [(c.name, c.type) for c in conn.columns(TargetObject.parse(target))]

    def hashed(self, target: str = TARGET) -> HashedTarget:
        with self.warehouse() as conn:
            return hashed_target(conn, TargetObject.parse(target))

    def recorded(self, target: str = TARGET) -> int | None:
        hashed = self.hashed(target)
        with self.project.engine.read() as conn:
            return recorded_version(conn, hashed)

    def record(self, version: int, target: str = TARGET) -> None:
        hashed = self.hashed(target)
        with self.project.engine.transaction(TESTER) as conn:
            record_version(conn, hashed, version, TESTER, replace=True)

    def load_source(self) -> None:
        self.sql(
            "CREATE SCHEMA IF NOT EXISTS src",
            f"CREATE TABLE {SOURCE} (id INTEGER, name VARCHAR(20), amount DECIMAL(12,2), "
            "seen TIMESTAMP WITH TIME ZONE)",
            f"INSERT INTO {SOURCE} VALUES {SOURCE_ROWS}",
        )

    def downgrade(self, target: str = TARGET, where: str = "id <> 2") -> None:
        """Make the target look written by version 1: old HASH_KEY values, version 1 recorded."""
        self.sql(f"UPDATE {target} SET HASH_KEY = {VERSION_1_HASH} WHERE {where}")
        self.record(1, target)

    def run_task(self, pipeline: str, task: str) -> Counts:
        """One attempt of a task, in this process, with its parameters from the metadata."""
        with self.project.engine.read() as conn:
            metadata = read_project_metadata(conn, "default")
        pipeline_row = metadata.pipeline(pipeline)
        row = next(t for t in metadata.tasks_of(pipeline_row.pipeline_id) if t.code == task)
        attempt = next(_ATTEMPTS)
        invocation = AttemptInvocation(
            attempt_id=attempt,
            attempt_number=1,
            status=AttemptStatus.RUNNING,
            owner_id="tester-owner",
            task_run_id=attempt,
            pipeline_run_id=attempt,
            pipeline_id=pipeline_row.pipeline_id,
            task_id=row.task_id,
            project_code="default",
            pipeline_code=pipeline,
            task_code=task,
            handler=Handler.SQL,
            run_key="manual:test",
            run_date=date(2026, 11, 30),
            parameters=dict(row.parameters),
            pipeline_parameters={},
        )
        logger = logging.LoggerAdapter(logging.getLogger("tests.rehash"))
        connector = self.project.connector
        redactor = Redactor(connector.secrets)
        environment = TaskEnvironment(
            connector, self.project.project, self.project.engine, logger, TESTER, redactor
        )
        return run_sql_task(Task(invocation, environment)).counts

    def cli(self, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run_cli(["--config", str(self.project.config), *args])
        out, err = capsys.readouterr()
        return code, out, err


def pipelines_sql(*tasks: tuple[str, str, dict[str, str]]) -> str:
    """CFG_ rows for (pipeline, task, parameters) triples: one SQL task each."""
    statements: list[str] = []
    for pipeline in dict.fromkeys(p for p, _, _ in tasks):
        statements.append(
            "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, "
            f"'{pipeline}' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';"
        )
    for pipeline, task, parameters in tasks:
        chosen = f"FROM CFG_PIPELINES WHERE PIPELINE_CODE = '{pipeline}'"
        statements.append(
            f"INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) "
            f"SELECT PIPELINE_ID, '{task}', 'SQL' {chosen};"
        )
        for name, value in parameters.items():
            quoted = value.replace("'", "''")
            statements.append(
                "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
                f"SELECT t.TASK_ID, '{name}', '{quoted}' FROM CFG_TASKS t "
                "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = t.PIPELINE_ID "
                f"WHERE p.PIPELINE_CODE = '{pipeline}' AND t.TASK_CODE = '{task}';"
            )
    return "\n".join(statements)


def merge(target: str, action: str = "SCD1_MERGE", **more: str) -> dict[str, str]:
    base = {"ACTION": action, "TARGET_OBJECT": target, "SOURCE_SQL": SELECT, "MERGE_KEY": "id"}
    return base | more


def plain(action: str, target: str) -> dict[str, str]:
    return {"ACTION": action, "TARGET_OBJECT": target, "SOURCE_SQL": SELECT}


# customers: setup then merge into dm.customers; fresh: the same into dm.fresh; drop: drops it.
PROJECT_TASKS = pipelines_sql(
    ("customers", "setup", plain("SETUP_TABLE", TARGET)),
    ("customers", "merge", merge(TARGET)),
    ("fresh", "setup", plain("SETUP_TABLE", "dm.fresh")),
    ("fresh", "merge", merge("dm.fresh")),
    ("rebuild", "create", plain("CREATE_TABLE", TARGET)),
    ("drop", "drop", {"ACTION": "DROP_TABLE", "TARGET_OBJECT": TARGET}),
)
DEPENDENCY = """
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.PIPELINE_ID = u.PIPELINE_ID AND d.TASK_CODE = 'merge' AND u.TASK_CODE = 'setup';
"""


def use_postgres_warehouse(project: ProjectOnDisk, url: str) -> None:
    config = project.config.read_text().replace(
        "type: duckdb\n  path: warehouse.duckdb", "type: postgresql\n  url: ${TEST_WAREHOUSE_URL}"
    )
    project.config.write_text(config)
    env_file = project.root / ".env"
    existing = env_file.read_text() if env_file.exists() else ""
    env_file.write_text(f"{existing}TEST_WAREHOUSE_URL={url}\n")
    project.connector = load_connector(project.config, profile=None, environ={})
