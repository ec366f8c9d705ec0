"""What a worker checks before it registers: a PostgreSQL Engine DB at its own schema version."""

from __future__ import annotations

import os

from etl_craft import __version__
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.connection import EngineDB, safe_url
from etl_craft.enginedb.migrations import DEFAULT_POOL, schema_version
from etl_craft.enginedb.schema_versions import refuse_other_schema_version
from etl_craft.enginedb.workers import WorkerRegistration, project_pool
from etl_craft.runtime.identity import HOST
from etl_craft_worker.agent import WorkerSettings


def refuse_unsuitable(engine: EngineDB) -> None:
    """Raise unless ``engine`` can hold the queue and matches this worker's schema version."""
    if engine.dialect != "postgresql":
        raise ConfigurationError(
            f"the Engine DB at {safe_url(engine.url)} is {engine.dialect}; the worker queue "
            "needs a PostgreSQL Engine DB (workers claim with row locks that skip). Run the "
            "pipelines on this machine with etl-craft run (the local pool) instead, or point "
            "the Engine section of craft-connector.yml at PostgreSQL"
        )
    refuse_other_schema_version(engine, "worker")


def resolve_pool(engine: EngineDB, requested: str | None, project_code: str) -> str:
    """--pool, else the project's DEFAULT_POOL, else the default pool."""
    if requested:
        return requested
    with engine.read() as conn:
        return project_pool(conn, project_code) or DEFAULT_POOL


def registration(
    worker_id: str, settings: WorkerSettings, dialect: str, log_endpoint: str | None = None
) -> WorkerRegistration:
    return WorkerRegistration(
        worker_id=worker_id,
        pool=settings.pool,
        host=HOST,
        pid=os.getpid(),
        version=__version__,
        schema_version=schema_version(dialect),
        ingestion_slots=settings.slots[SlotKind.INGESTION],
        warehouse_slots=settings.slots[SlotKind.WAREHOUSE],
        log_endpoint=log_endpoint,
    )
