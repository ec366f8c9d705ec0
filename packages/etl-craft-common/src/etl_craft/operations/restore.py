"""etl-craft restore --table T --run R --reason TEXT: put an Iceberg target back to the snapshot
run R left, as a new snapshot (the history after it stays readable).

Refused while a task that writes the table runs, so no attempt computes its write from a base
that the restore then replaces. Recorded as an action with its reason before the work.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import ClassVar

from etl_craft.config.rules import WarehouseType
from etl_craft.core.errors import ConfigurationError, NotFoundError, RunStateError, UsageError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.action_log import record_action
from etl_craft.enginedb.restores import run_exists, running_writers_of, task_runs_of_run
from etl_craft.operations.context import OperationContext
from etl_craft.warehouse import connect
from etl_craft.warehouse.kinds import optional_driver
from etl_craft.warehouse.targets import TargetObject


@dataclass(frozen=True)
class RestoreView:
    schema: ClassVar[str] = "etl-craft/restore/1"
    table: str
    run_id: int
    task_run_id: int  # whose snapshot was restored
    snapshot_from: int
    snapshot_to: int
    rows: int
    reason: str
    action_id: int


def restore(ctx: OperationContext, table_text: str, run_id: int, reason: str) -> RestoreView:
    if not reason.strip():
        raise UsageError("etl-craft restore needs --reason: say why the table goes back")
    connector = ctx.connector
    if connector is None:
        raise ConfigurationError(
            "etl-craft restore found no craft-connector.yml, so it knows no warehouse; run it "
            "from the project folder or pass --config"
        )
    if connector.warehouse.type is not WarehouseType.ICEBERG:
        raise UsageError(
            f"etl-craft restore puts Iceberg tables back to an earlier snapshot; the "
            f"{connector.warehouse.type} warehouse keeps no snapshots of its tables"
        )
    target = TargetObject.parse(table_text)
    with ctx.engine.read() as conn:
        if not run_exists(conn, run_id):
            raise NotFoundError(f"run {run_id} is not on record; `etl-craft history` lists runs")
        task_runs = task_runs_of_run(conn, run_id)
        writers = running_writers_of(conn, target.sql)
    if writers:
        listed = ", ".join(f"{code} (task run {number})" for number, code in writers)
        raise RunStateError(
            f"{target} is being written now by {listed}; restore it once they end (or cancel "
            "their runs), so no write lands on top of the restored snapshot unseen"
        )
    with ctx.engine.transaction(ctx.actor) as conn:
        action_id = record_action(
            conn,
            ctx.actor,
            command="restore",
            arguments={"table": table_text, "run": run_id, "reason": reason},
            started_at=utc_now(),
            project_code=ctx.project_code,
        )
    optional_driver("pyiceberg", "iceberg", WarehouseType.ICEBERG)
    iceberg = importlib.import_module("etl_craft.warehouse.iceberg.restore")
    with connect(connector.warehouse) as warehouse:
        done = iceberg.restore_snapshot(warehouse, target, task_runs, run_id, action_id)
    return RestoreView(
        table=target.sql,
        run_id=run_id,
        task_run_id=done.task_run_id,
        snapshot_from=done.snapshot_from,
        snapshot_to=done.snapshot_to,
        rows=done.rows,
        reason=reason,
        action_id=action_id,
    )
