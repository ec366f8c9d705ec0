"""One attempt's view of its warehouse work: the spec, the connection, and shared stamps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql.phases import Phases
from etl_craft.handlers.sql.spec import SqlActionSpec
from etl_craft.warehouse.audit import TIMESTAMP
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.parsing import ParsedSelect
from etl_craft.warehouse.statements import Statement, Value, bound, flag


@dataclass
class Context:
    conn: WarehouseConnection
    spec: SqlActionSpec
    now: datetime  # one instant for every stamp of the attempt: closed and new SCD2 versions meet
    token: str  # makes this attempt's scratch table names unique
    select: ParsedSelect | None  # parsed before the target lock is taken
    scratch: list[str] = field(default_factory=list)
    phases: Phases = field(default_factory=Phases)
    # Whether the target's hash record is read and kept (warehouse.hash_record): a published
    # attempt's, on a warehouse that keeps one; never a rehearsal's, which has no ledger.
    hash_records: bool = False

    @property
    def target(self) -> str:
        return self.spec.target.sql

    def scratch_name(self, suffix: str) -> str:
        # Temporary tables can't be schema-qualified, so the random token keeps them apart.
        name = f"etl_{suffix}_{self.spec.task_run_id}_{self.spec.attempt_id}_{self.token}"
        self.scratch.append(name)
        return name

    def run(self, purpose: str, statement: Statement) -> int:
        return self.conn.execute(f"{purpose} ({self.target})", statement.sql, statement.params)

    def count(self, purpose: str, statement: Statement) -> int:
        value = self.conn.fetch_value(f"{purpose} ({self.target})", statement.sql, statement.params)
        return int(value or 0)

    def target_columns(self) -> tuple[Column, ...]:
        """The existing target's columns; a missing target is refused before anything is written."""
        columns = self.conn.columns(self.spec.target)
        if not columns:
            raise SqlGuardError(
                f"{self.target} does not exist; {self.spec.action} writes only existing tables: "
                "add a SETUP_TABLE task for it earlier in the pipeline, or create it in the "
                "warehouse"
            )
        return columns

    def inserted(self, present: set[str]) -> set[str]:
        """The target's columns an INSERT writes: those the warehouse numbers itself are left
        to it (a ROW_ID identity column)."""
        if not self.conn.dialect.capabilities.identity_columns:
            return present
        return present - self.conn.numbered_columns(self.spec.target)

    def bind(self, value: object, sql_type: str) -> Value:
        return bound(self.conn.dialect, value, sql_type)

    def update_stamps(self, present: set[str]) -> dict[str, Value]:
        """Who changed a row and when, for the audit columns the target has."""
        stamps = {
            "UPDATE_DATE": self.bind(self.now, TIMESTAMP),
            "UPDATED_BY": self.bind(self.spec.actor, "VARCHAR"),
            "PIPELINE_ID": self.bind(self.spec.pipeline_id, "BIGINT"),
            "PIPELINE_RUN_ID": self.bind(self.spec.pipeline_run_id, "BIGINT"),
            "TASK_RUN_ID": self.bind(self.spec.task_run_id, "BIGINT"),
        }
        return {name: value for name, value in stamps.items() if name.lower() in present}

    def close_stamps(self, present: set[str], valid_to: Value) -> dict[str, Value]:
        """A closed SCD2 version: the run that opened it keeps PIPELINE_RUN_ID and TASK_RUN_ID."""
        stamps = {
            "ACTIVE_FLAG": flag(False),
            "VALID_TO": valid_to,
            "UPDATE_DATE": self.bind(self.now, TIMESTAMP),
            "UPDATED_BY": self.bind(self.spec.actor, "VARCHAR"),
            "CLOSED_PIPELINE_RUN_ID": self.bind(self.spec.pipeline_run_id, "BIGINT"),
            "CLOSED_TASK_RUN_ID": self.bind(self.spec.task_run_id, "BIGINT"),
        }
        return {name: value for name, value in stamps.items() if name.lower() in present}

    def insert_stamps(self, present: set[str], change_hash: str, row_id: Value) -> dict[str, Value]:
        stamps = {
            "ROW_ID": row_id,
            "HASH_KEY": Value(change_hash),
            "CREATE_DATE": self.bind(self.now, TIMESTAMP),
            "CREATED_BY": self.bind(self.spec.actor, "VARCHAR"),
            "DELETE_FLAG": flag(False),
            "ACTIVE_FLAG": flag(True),
            "VALID_FROM": self.bind(self.now, TIMESTAMP),
        }
        chosen = {name: value for name, value in stamps.items() if name.lower() in present}
        return chosen | self.update_stamps(present)


def require_columns(ctx: Context, present: set[str], needed: tuple[str, ...], why: str) -> None:
    missing = [name for name in needed if name.lower() not in present]
    if missing:
        raise SqlGuardError(
            f"{ctx.target} has no {', '.join(missing)} column(s), which {ctx.spec.action} needs "
            f"because {why}; add them with ALTER TABLE or recreate the target with SETUP_TABLE"
        )
