"""What `etl-craft worker` does when it runs: read its settings, register and claim."""

from __future__ import annotations

import argparse
import logging

from etl_craft.cli.actions.telemetry import start_telemetry
from etl_craft.cli.context import operation_context
from etl_craft.config.settings import load_settings
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import UsageError
from etl_craft.enginedb.backoff import until_reachable
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.identity import HOST
from etl_craft.runtime.reconcile import warehouse_ledger
from etl_craft_worker.agent import WorkerAgent, WorkerSettings
from etl_craft_worker.log_server import LogServer
from etl_craft_worker.main import DEFAULT_HEARTBEAT_SECONDS
from etl_craft_worker.startup import refuse_unsuitable, registration, resolve_pool


def handle(args: argparse.Namespace) -> int:
    ctx = worker_context(args)
    try:
        # A worker started while the Engine DB is away (a restart, a deployment starting in
        # any order) waits for it rather than exiting.
        until_reachable(lambda: refuse_unsuitable(ctx.engine), what="the worker")
        settings = until_reachable(lambda: worker_settings(ctx, args), what="the worker")
        assert settings is not None  # no stop event: it returns only with an answer
        levels = (args.log_level, settings.owner.log_level)
        logging.getLogger("etl_craft_worker").setLevel(
            min(logging.getLevelName(level) for level in levels)
        )
        ledger = warehouse_ledger(ctx.connector.warehouse) if ctx.connector else None
        agent = WorkerAgent(ctx.engine, settings, ledger)
        # The Engine DB's series come from the overseer; a worker exports what it does itself.
        start_telemetry(args, "etl-craft-worker")
        logs = log_server(args, agent)
        endpoint = None if logs is None else advertised(args, logs.port)
        try:
            agent.serve(registration(agent.worker_id, settings, ctx.engine.dialect, endpoint))
        finally:
            if logs is not None:
                logs.stop()
    finally:
        ctx.close()
    return 0


def worker_context(args: argparse.Namespace) -> OperationContext:
    """The worker's context, its Engine DB pool sized for its slots (enginedb/pool_budget)."""
    return operation_context(args, slots=args.ingestion_slots + args.warehouse_slots)


def log_server(args: argparse.Namespace, agent: WorkerAgent) -> LogServer | None:
    """The running attempts' logs for readers on other hosts, when a worker token is set."""
    token = load_settings().worker_token
    if token is None:
        return None
    server = LogServer(args.log_host, args.log_port, token, agent.log_path)
    server.start()
    return server


def advertised(args: argparse.Namespace, port: int) -> str:
    return str(args.log_address or f"http://{HOST}:{port}").rstrip("/")


def worker_settings(ctx: OperationContext, args: argparse.Namespace) -> WorkerSettings:
    service = load_settings()
    heartbeat = args.heartbeat_seconds
    if heartbeat is None:
        explicit = "heartbeat_seconds" in service.given
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
        # A worker's lease is ETL_CRAFT_LEASE_SECONDS and its heartbeat --heartbeat-seconds,
        # not the project's Orchestration lease_seconds.
        owner=ctx.owner_settings(timing=(float(service.lease_seconds), heartbeat)),
    )
