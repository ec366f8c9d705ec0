"""A target put back to the snapshot a run left, as a new snapshot on top of its history."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from etl_craft.core.errors import NotFoundError
from etl_craft.warehouse.iceberg.catalog import load
from etl_craft.warehouse.iceberg.connection import IcebergConnection, without_retries
from etl_craft.warehouse.iceberg.publisher import PREFIX, TASK_RUN_ID
from etl_craft.warehouse.targets import TargetObject

RESTORED_FROM = f"{PREFIX}restored-from-snapshot"
RESTORE_ACTION = f"{PREFIX}restore-action-id"


@dataclass(frozen=True)
class Restored:
    snapshot_from: int  # the snapshot the run left
    snapshot_to: int  # the new snapshot, of the same rows
    task_run_id: int  # the task run whose snapshot it is
    rows: int


def left_by(table: Table, task_runs: Set[int]) -> Snapshot | None:
    """The newest snapshot a task run of ``task_runs`` committed to the table."""
    found = [
        snapshot
        for snapshot in table.snapshots()
        if snapshot.summary is not None
        and (snapshot.summary.get(TASK_RUN_ID) or "").isdigit()
        and int(str(snapshot.summary.get(TASK_RUN_ID))) in task_runs
    ]
    return max(found, key=lambda snapshot: snapshot.sequence_number or 0, default=None)


def restore_snapshot(
    conn: IcebergConnection, target: TargetObject, task_runs: Set[int], run: int, action_id: int
) -> Restored:
    """Under the target's writer lock: one OVERWRITE snapshot whose data files are the ones the
    run's snapshot held. No row is rewritten, and the history before it stays readable."""
    with conn.writer_lock(target):
        table = load(conn.catalog, target.schema.lower(), target.table.lower())
        if table is None:
            raise NotFoundError(
                f"{target} is not a table of the Iceberg catalog {conn.settings.shown}; check "
                "--table (namespace.table)"
            )
        chosen = left_by(table, task_runs)
        if chosen is None:
            raise NotFoundError(
                f"no snapshot of {target} was committed by run {run} (its task runs "
                f"{', '.join(map(str, sorted(task_runs))) or 'none'}), or it has expired; "
                "`etl-craft history` lists the runs, and a run that wrote the table names it"
            )
        summary = chosen.summary
        assert summary is not None
        task_run = int(str(summary.get(TASK_RUN_ID)))
        properties = {
            RESTORED_FROM: str(chosen.snapshot_id),
            RESTORE_ACTION: str(action_id),
            f"{PREFIX}restored-from-run": str(run),
        }
        kept = [task.file for task in table.scan(snapshot_id=chosen.snapshot_id).plan_files()]
        transaction = without_retries(table)
        with transaction.update_snapshot(snapshot_properties=properties).overwrite() as swap:
            for task in table.scan().plan_files():
                swap.delete_data_file(task.file)
            for data_file in kept:
                swap.append_data_file(data_file)
        committed = transaction.commit_transaction().current_snapshot()
        assert committed is not None
        rows = sum(data_file.record_count for data_file in kept)
        return Restored(chosen.snapshot_id, committed.snapshot_id, task_run, rows)
