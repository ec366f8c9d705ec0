"""The `etl-craft worker` command and its `etl-craft-worker` console entry point."""

from __future__ import annotations

import argparse
import logging

from etl_craft.cli.context import operation_context
from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft.cli.telemetry import add_telemetry_options, start_telemetry
from etl_craft.config.settings import load_settings
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.launcher import TaskSetup
from etl_craft.runtime.reconcile import warehouse_ledger
from etl_craft_worker.agent import WorkerAgent, WorkerSettings
from etl_craft_worker.startup import refuse_unsuitable, registration, resolve_pool

DEFAULT_HEARTBEAT_SECONDS = 10.0
METRICS_PORT = 9731


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool", help="the pool to claim from (default: the project's DEFAULT_POOL, else default)"
    )
    parser.add_argument(
        "--ingestion-slots",
        type=_count,
        default=4,
        metavar="N",
        help="how many PYTHON attempts run at once (default 4)",
    )
    parser.add_argument(
        "--warehouse-slots",
        type=_count,
        default=16,
        metavar="M",
        help="how many SQL, BUSINESS_RULES and EMAIL_ALERT attempts run at once (default 16)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=_drain_seconds,
        default=300.0,
        metavar="S",
        help="on SIGTERM, how long running attempts may finish before they are stopped "
        "(default 300; 0 stops them at once)",
    )
    parser.add_argument(
        "--heartbeat-seconds",
        type=_seconds,
        metavar="S",
        help="how often leases are renewed and cancel requests read "
        f"(default: ETL_CRAFT_HEARTBEAT_SECONDS when set, else {DEFAULT_HEARTBEAT_SECONDS:g})",
    )
    add_telemetry_options(parser, METRICS_PORT)


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        refuse_unsuitable(ctx.engine)
        settings = worker_settings(ctx, args)
        levels = (args.log_level, settings.tasks.log_level)
        logging.getLogger("etl_craft_worker").setLevel(
            min(logging.getLevelName(level) for level in levels)
        )
        ledger = warehouse_ledger(ctx.connector.warehouse) if ctx.connector else None
        agent = WorkerAgent(ctx.engine, settings, ledger)
        # The Engine DB's series come from the overseer; a worker exports what it does itself.
        start_telemetry(args, "etl-craft-worker")
        agent.serve(registration(agent.worker_id, settings, ctx.engine.dialect))
    finally:
        ctx.close()
    return 0


def worker_settings(ctx: OperationContext, args: argparse.Namespace) -> WorkerSettings:
    service = load_settings()
    heartbeat = args.heartbeat_seconds
    if heartbeat is None:
        explicit = "heartbeat_seconds" in service.model_fields_set
        heartbeat = float(service.heartbeat_seconds) if explicit else DEFAULT_HEARTBEAT_SECONDS
    if heartbeat >= service.lease_seconds:
        raise UsageError(
            f"--heartbeat-seconds {heartbeat:g} is not below the lease of "
            f"{service.lease_seconds}s (ETL_CRAFT_LEASE_SECONDS); expected a heartbeat well "
            "inside the lease, such as a quarter of it"
        )
    if args.ingestion_slots + args.warehouse_slots == 0:
        raise UsageError(
            "--ingestion-slots and --warehouse-slots are both 0; give the worker a slot of "
            "at least one kind"
        )
    return WorkerSettings(
        pool=resolve_pool(ctx.engine, args.pool, ctx.project_code),
        slots={
            SlotKind.INGESTION: args.ingestion_slots,
            SlotKind.WAREHOUSE: args.warehouse_slots,
        },
        drain_seconds=args.drain_seconds,
        heartbeat_seconds=heartbeat,
        lease_seconds=float(service.lease_seconds),
        poll_seconds=service.poll_seconds,
        tasks=TaskSetup(
            engine_url=ctx.engine.url.render_as_string(hide_password=False),
            config_path=ctx.connector.path if ctx.connector else None,
            profile=ctx.connector.profile if ctx.connector else None,
            logs_dir=ctx.attempt_logs_dir,
            log_level=service.log_level,
        ),
    )


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; expected 0 or more slots")
    return value


def _drain_seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; expected 0 or more seconds")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive; expected seconds above 0")
    return value


COMMAND = Command(
    name="worker",
    help="run the worker agent: claim queued attempts of a pool and run them",
    configure=configure,
    handler=handle,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["worker"])
