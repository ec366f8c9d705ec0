"""Seeding business rules and reading their flags back."""

from __future__ import annotations

from datetime import date
from typing import Any

from etl_craft.enginedb.connection import EngineDB
from etl_craft.handlers.rules import RulesResult, RulesRun, run_business_rules
from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.metadata import TESTER, execute, seed_pipeline, seed_run, seed_task_run


class RuleTask:
    """One BUSINESS_RULES task of a fresh pipeline, with a run and a task run per check."""

    def __init__(self, db: EngineDB) -> None:
        self.db = db
        pipeline = seed_pipeline(db, tasks=("rules",), handler="BUSINESS_RULES")
        self.pipeline_id = pipeline.pipeline_id
        self.task_id = pipeline.task_ids["rules"]
        self.task_runs: dict[int, int] = {}

    def add_rule(self, code: str, target: str, sql: str, **options: Any) -> int:
        with self.db.transaction(TESTER) as conn:
            return int(
                execute(
                    conn,
                    "INSERT INTO CFG_BUSINESS_RULES (TASK_ID, RULE_CODE, RULE_TYPE, TARGET_TABLE, "
                    "KEY_COLUMNS, RULE_SQL, WAVE) VALUES (:t, :c, :y, :tt, :k, :s, :w) "
                    "RETURNING BUSINESS_RULE_ID",
                    t=self.task_id,
                    c=code,
                    y=options.get("rule_type", "REPORT"),
                    tt=target,
                    k=options.get("keys", "order_id"),
                    s=sql,
                    w=options.get("wave", 1),
                ).scalar_one()
            )

    def new_run(self) -> int:
        return seed_run(self.db, self.pipeline_id, "IN-PROGRESS")

    def check(
        self,
        warehouse: WarehouseConnection,
        run_id: int,
        *,
        forced: bool = False,
        **tokens: Any,
    ) -> RulesResult:
        """``tokens``: the RulesRun fields SQL tokens read (pipeline_code, pipeline_parameters...)."""
        # One task run per run; checking again stands for another attempt of it.
        if run_id not in self.task_runs:
            self.task_runs[run_id] = seed_task_run(self.db, run_id, self.task_id, "IN-PROGRESS")
        task_run_id = self.task_runs[run_id]
        run = RulesRun(
            task_id=self.task_id,
            task_code="rules",
            pipeline_id=self.pipeline_id,
            pipeline_run_id=run_id,
            task_run_id=task_run_id,
            run_date=date(2026, 1, 1),
            forced=forced,
            **tokens,
        )
        with self.db.transaction(TESTER) as conn:
            return run_business_rules(conn, warehouse, run)

    def flags(self, rule_id: int) -> dict[str, str | None]:
        """Each key's latest flag: None while it stands, else its CLEAR_REASON."""
        with self.db.read() as conn:
            rows = execute(
                conn,
                "SELECT KEY_VALUE, CLEAR_REASON, CLEARED_AT FROM AUD_BUSINESS_RULE_FLAGS "
                "WHERE BUSINESS_RULE_ID = :r ORDER BY FLAG_ID",
                r=rule_id,
            ).all()
        return {str(key): reason for key, reason, _ in rows}

    def standing(self, rule_id: int) -> set[str]:
        return {key for key, reason in self.flags(rule_id).items() if reason is None}


def orders_table(warehouse: WarehouseConnection, schema: str) -> str:
    table = f"{schema}.orders"
    warehouse.execute(
        "create orders",
        f"CREATE TABLE {table} (order_id INTEGER, amount DECIMAL(10, 2), "
        "ACTIVE_FLAG VARCHAR(1), PIPELINE_RUN_ID BIGINT, TASK_RUN_ID BIGINT)",
    )
    return table


def insert(
    warehouse: WarehouseConnection,
    table: str,
    rows: list[tuple[int, int]],
    run_id: int,
    active: str = "Y",
) -> None:
    for order_id, amount in rows:
        warehouse.execute(
            "insert an order",
            f"INSERT INTO {table} VALUES ({order_id}, {amount}, '{active}', {run_id}, 1)",
        )
