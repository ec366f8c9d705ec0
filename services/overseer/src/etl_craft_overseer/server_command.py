"""What `etl-craft server` does when it runs: build the overseer and its pool, and serve."""

from __future__ import annotations

import argparse
import logging
import signal
from functools import partial
from types import FrameType
from zoneinfo import ZoneInfo

from etl_craft.cli.actions.telemetry import start_telemetry
from etl_craft.cli.context import operation_context
from etl_craft.config.alerts import Alerts
from etl_craft.config.sections import build_retention
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import UsageError
from etl_craft.enginedb.backoff import until_reachable
from etl_craft.enginedb.schema_versions import refuse_other_schema_version
from etl_craft.operations.cloning.clone import clone_project
from etl_craft.operations.cloning.schedule import ScheduledClone
from etl_craft.operations.context import OperationContext
from etl_craft.operations.retention.daily import DailyPurge
from etl_craft.operations.runs.foreground import ledger_lookup
from etl_craft.pools.base import Pool
from etl_craft.pools.local import LocalPool
from etl_craft_overseer.overseer import Overseer
from etl_craft_overseer.queue_pool import QueuePool

log = logging.getLogger(__name__)
OVERSEER_LOGGER = "etl_craft_overseer"


def handle(args: argparse.Namespace) -> int:
    if args.run_log and not log.isEnabledFor(logging.INFO):
        # What the overseer does to runs is what an operator watches its output for.
        logging.getLogger(OVERSEER_LOGGER).setLevel(logging.INFO)
    ctx = operation_context(args)
    try:
        if ctx.connector is not None:
            # It sends the alerts of every run it drives, hours after it started.
            ctx.connector.require_secrets("etl-craft server")
        until_reachable(
            lambda: refuse_other_schema_version(ctx.engine, "overseer"), what="the overseer"
        )
        overseer = build_overseer(ctx, args)
        # The Engine DB's series come from the overseer: one process per Engine DB exports them.
        start_telemetry(args, "etl-craft-overseer", ctx.engine)

        def stop(signum: int, frame: FrameType | None) -> None:
            log.info("signal %s: the overseer admits nothing more and stops", signum)
            overseer.stop()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        overseer.serve(standby=args.standby)
    finally:
        ctx.close()
    return 0


def build_overseer(ctx: OperationContext, args: argparse.Namespace) -> Overseer:
    settings = ctx.owner
    pool: Pool
    if args.pool_provider == "queue":
        if ctx.engine.dialect != "postgresql":
            raise UsageError(
                "--pool-provider queue needs a PostgreSQL Engine DB (workers claim with row "
                "locks); this one is SQLite. Use the local provider, or move the Engine DB"
            )
        pool = QueuePool(ctx.engine, args.pool)
    else:
        slots = settings.default_parallel_tasks
        pool = LocalPool(
            ctx.engine,
            settings,
            {
                SlotKind.INGESTION: _slots(args.ingestion_slots, slots, "--ingestion-slots"),
                SlotKind.WAREHOUSE: _slots(args.warehouse_slots, slots, "--warehouse-slots"),
            },
            ledger_lookup(ctx),
        )
    alerts = ctx.connector.alerts if ctx.connector is not None else Alerts()
    return Overseer(
        ctx.engine,
        settings,
        pool,
        ledger_lookup(ctx),
        daily_purge(ctx),
        alerts,
        clone_schedule(ctx),
    )


def daily_purge(ctx: OperationContext) -> DailyPurge:
    retention = ctx.connector.retention if ctx.connector else build_retention(None)
    return DailyPurge(retention, ZoneInfo(ctx.timezone), ctx.owner.logs_dir, ctx.log_store)


def clone_schedule(ctx: OperationContext) -> ScheduledClone | None:
    connector = ctx.connector
    if connector is None or connector.cloning is None:
        return None
    return ScheduledClone(
        connector.cloning.every_minutes * 60, partial(clone_project, ctx.engine, connector)
    )


def _slots(given: int | None, default: int, option: str) -> int:
    if given is None:
        return default
    if given < 0:
        raise UsageError(f"{option} {given} is negative; expected 0 or more slots")
    return given
