"""etl-craft rehash: recompute a merge target's HASH_KEY values with the current change hash.

A merge finds changed rows by comparing HASH_KEY, so the stored values must come from the
expression the merge computes now: the same version, and the same compare columns in the same
order. Those columns belong to the tasks that merge into the target, so they are read from
the metadata, and tasks that disagree are refused rather than one of them chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.config.connector import Connector
from etl_craft.core.enums import Handler
from etl_craft.core.errors import (
    ConfigurationError,
    MetadataError,
    NotFoundError,
    SqlGuardError,
    WarehouseError,
)
from etl_craft.core.time import utc_now
from etl_craft.enginedb.action_log import record_action
from etl_craft.enginedb.hash_versions import HashedTarget, record_version, recorded_version
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow, read_project_metadata
from etl_craft.handlers.sql.spec import Action, ValidFrom
from etl_craft.handlers.sql_task import MERGES, hashed_target, parameter_columns
from etl_craft.operations.context import OperationContext
from etl_craft.warehouse import connect, hash_record, statements
from etl_craft.warehouse.audit import MANAGED_NAMES
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import CHANGE_HASH_VERSION, Column
from etl_craft.warehouse.targets import TargetObject


@dataclass(frozen=True)
class RehashView:
    schema: ClassVar[str] = "etl-craft/rehash/1"
    target: str
    warehouse: str
    dry_run: bool
    version_from: int | None  # None: no version was recorded
    version_to: int
    merge_tasks: tuple[str, ...]  # pipeline.task
    compare_columns: tuple[str, ...]
    rows_scanned: int
    rows_changed: int  # with --dry-run: the rows that would change
    action_id: int | None  # the AUD_ACTIONS row; a dry run changes nothing and records none


@dataclass(frozen=True)
class MergeTask:
    name: str
    keys: tuple[str, ...]
    compare: tuple[str, ...]  # MERGE_COMPARE_COLUMNS; empty for the default
    # SCD2_VALID_FROM_COLUMN when it dates the versions: left out of the default, as the merge does
    valid_from: str | None = None


def rehash(ctx: OperationContext, target_text: str, *, dry_run: bool = False) -> RehashView:
    connector = _connector(ctx)
    target = TargetObject.parse(target_text)
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
    with connect(connector.warehouse) as warehouse:
        hashed = hashed_target(warehouse, target)
        tasks = merge_tasks(metadata, warehouse, hashed, target)
        compare = compare_columns(tasks, _target_columns(warehouse, target), target)
        try:
            expression = warehouse.dialect.change_hash("t", compare)
        except SqlGuardError as error:
            raise SqlGuardError(f"can't rehash {target}: {error}") from error
        with ctx.engine.read() as conn:
            version_from = recorded_version(conn, hashed)
        action_id = None if dry_run else _record_request(ctx, target_text)
        ledger = connector.warehouse.ledger_schema
        scanned, changed = _rewrite(warehouse, target, expression, ledger, dry_run=dry_run)
    if not dry_run:
        # After the warehouse commit: a failure here is repaired by running rehash again.
        with ctx.engine.transaction(ctx.actor) as conn:
            record_version(conn, hashed, CHANGE_HASH_VERSION, ctx.actor, replace=True)
    return RehashView(
        target=target.sql,
        warehouse=hashed.warehouse_name,
        dry_run=dry_run,
        version_from=version_from,
        version_to=CHANGE_HASH_VERSION,
        merge_tasks=tuple(task.name for task in tasks),
        compare_columns=tuple(column.name for column in compare),
        rows_scanned=scanned,
        rows_changed=changed,
        action_id=action_id,
    )


def _connector(ctx: OperationContext) -> Connector:
    if ctx.connector is None:
        raise ConfigurationError(
            "etl-craft rehash found no craft-connector.yml, so it knows no warehouse; run it "
            "from the project folder or pass --config"
        )
    return ctx.connector


def merge_tasks(
    metadata: ProjectMetadata,
    warehouse: WarehouseConnection,
    hashed: HashedTarget,
    target: TargetObject,
) -> tuple[MergeTask, ...]:
    """The active SCD1_MERGE and SCD2_MERGE tasks of active pipelines that write the target."""
    pipelines = {p.pipeline_id: p.code for p in metadata.pipelines if p.active}
    found = tuple(
        MergeTask(
            f"{pipelines[task.pipeline_id]}.{task.code}",
            parameter_columns(task.parameter("MERGE_KEY")),
            parameter_columns(task.parameter("MERGE_COMPARE_COLUMNS")),
            _valid_from_column(task),
        )
        for task in metadata.tasks
        if task.active and task.pipeline_id in pipelines and _merges_into(task, warehouse, hashed)
    )
    if not found:
        raise MetadataError(
            f"no active SCD1_MERGE or SCD2_MERGE task of project {metadata.project_code} writes "
            f"{target}, so nothing defines the columns its HASH_KEY compares; rehash a merge "
            "target (other actions never compare HASH_KEY, so their targets need no rehash)"
        )
    return found


def _merges_into(task: TaskRow, warehouse: WarehouseConnection, hashed: HashedTarget) -> bool:
    action, text = task.parameter("ACTION"), task.parameter("TARGET_OBJECT")
    if task.handler is not Handler.SQL or text is None or (action or "").upper() not in MERGES:
        return False
    try:
        return hashed_target(warehouse, TargetObject.parse(text)) == hashed
    except (MetadataError, WarehouseError):
        # A TARGET_OBJECT this warehouse can't resolve is not this target; validate reports it.
        return False


def _target_columns(warehouse: WarehouseConnection, target: TargetObject) -> tuple[Column, ...]:
    columns = warehouse.columns(target)
    if not columns:
        raise NotFoundError(
            f"{target} does not exist in the {warehouse.dialect.name} warehouse "
            f"{warehouse.current_database()}; check --target (schema.table)"
        )
    if "hash_key" not in {column.key for column in columns}:
        raise SqlGuardError(
            f"{target} has no HASH_KEY column, so there is nothing to rehash; merges need it: "
            "add HASH_KEY VARCHAR(32) with ALTER TABLE, then rehash"
        )
    return columns


def compare_columns(
    tasks: tuple[MergeTask, ...], columns: tuple[Column, ...], target: TargetObject
) -> tuple[Column, ...]:
    """The one ordered list of compare columns every merging task agrees on, typed as stored."""
    contracts = {task.name: _contract(task, columns, target) for task in tasks}
    distinct = {tuple(column.key for column in contract) for contract in contracts.values()}
    if len(distinct) > 1:
        listed = "; ".join(
            f"{name} ({', '.join(column.name for column in contract)})"
            for name, contract in contracts.items()
        )
        raise MetadataError(
            f"the tasks that merge into {target} compare different columns: {listed}; a row "
            "has one HASH_KEY, so give these tasks the same MERGE_COMPARE_COLUMNS, in the "
            "same order, then rehash"
        )
    return next(iter(contracts.values()))


def _contract(
    task: MergeTask, columns: tuple[Column, ...], target: TargetObject
) -> tuple[Column, ...]:
    by_key = {column.key: column for column in columns}
    if task.compare:
        missing = [name for name in task.compare if name.lower() not in by_key]
        if missing:
            raise SqlGuardError(
                f"MERGE_COMPARE_COLUMNS of task {task.name} names {', '.join(missing)}, which "
                f"{target} doesn't have (it has {', '.join(by_key)}); correct "
                "MERGE_COMPARE_COLUMNS or add the column(s), then rehash"
            )
        return tuple(by_key[name.lower()] for name in task.compare)
    # The merge's default: every column it writes from the SELECT except the key.
    skipped = {key.lower() for key in task.keys} | MANAGED_NAMES
    if task.valid_from:
        skipped.add(task.valid_from.lower())
    return tuple(c for c in columns if c.key not in skipped)


def _valid_from_column(task: TaskRow) -> str | None:
    action = (task.parameter("ACTION") or "").upper()
    source = (task.parameter("SCD2_VALID_FROM") or "").upper()
    if action != Action.SCD2_MERGE or source != ValidFrom.COLUMN:
        return None
    return (task.parameter("SCD2_VALID_FROM_COLUMN") or "").strip() or None


def _record_request(ctx: OperationContext, target_text: str) -> int:
    # Recorded before the work, so a request that then fails is still on record.
    started_at = utc_now()
    with ctx.engine.transaction(ctx.actor) as conn:
        return record_action(
            conn,
            ctx.actor,
            command="rehash",
            arguments={"target": target_text},
            started_at=started_at,
            project_code=ctx.project_code,
        )


def _rewrite(
    warehouse: WarehouseConnection,
    target: TargetObject,
    expression: str,
    ledger_schema: str,
    *,
    dry_run: bool,
) -> tuple[int, int]:
    """Count the rows and, unless a dry run, rewrite the HASH_KEY values that differ."""
    table = target.sql
    counting = statements.count_hash_changes(table, expression)
    # One transaction under the mutation lock: no merge or append interleaves with the rewrite.
    with warehouse.mutation(target):
        found = warehouse.fetch_all(
            f"count the HASH_KEY values of {table} to change", counting.sql, counting.params
        )
        scanned, changed = int(found[0][0]), int(found[0][1])
        if changed and not dry_run:
            rewrite = statements.rewrite_hash_keys(table, expression)
            warehouse.execute(f"recompute HASH_KEY of {table}", rewrite.sql, rewrite.params)
        if not dry_run:
            # The values now hash these compare columns; the next merge checks and records it.
            _forget_record(warehouse, target, ledger_schema)
    return scanned, changed


def _forget_record(warehouse: WarehouseConnection, target: TargetObject, schema: str) -> None:
    if not warehouse.dialect.capabilities.hash_record:
        return
    if warehouse.exists(hash_record.record_table(schema)):
        hash_record.forget(warehouse, schema, hash_record.record_key(warehouse, target))
