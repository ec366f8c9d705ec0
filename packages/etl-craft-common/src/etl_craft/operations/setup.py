"""Setting up an Engine DB: init-db creates or updates its schema, migrate applies migrations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.errors import MigrationError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.action_log import record_action
from etl_craft.enginedb.connection import safe_url
from etl_craft.enginedb.guards import install_guards
from etl_craft.enginedb.migration_ledger import ledger_exists
from etl_craft.enginedb.migrations import (
    MigrationReport,
    initialize,
    lock_migrations,
    migrate_engine,
    migrate_project,
)
from etl_craft.operations.bundles import BundleView
from etl_craft.operations.context import OperationContext
from etl_craft.operations.migrate_validation import MigrationValidation


@dataclass(frozen=True)
class InitReport:
    schema: ClassVar[str] = "etl-craft/init-db/1"
    engine_db: str
    dialect: str
    project: str
    engine: MigrationReport
    guarded_tables: int
    action_id: int


@dataclass(frozen=True)
class MigrateReport:
    schema: ClassVar[str] = "etl-craft/migrate/1"
    engine_db: str
    dialect: str
    project: str
    streams: tuple[MigrationReport, ...]
    action_id: int
    bundle: BundleView | None = None  # migrate --publish-bundle: the bundle published


def init_db(ctx: OperationContext) -> InitReport:
    """Create the schema on an empty Engine DB, or bring it up to date; refresh every guard."""
    started_at = utc_now()
    ctx.engine.create_storage()
    engine = initialize(
        ctx.engine,
        ctx.actor,
        project_code=ctx.project_code,
        timezone=ctx.timezone,
        writer_role=ctx.writer_role,
    )
    with ctx.engine.transaction(ctx.actor) as conn:
        lock_migrations(conn)
        # A guard dropped by hand comes back here, which is the remedy doctor gives for it.
        guarded = install_guards(conn, ctx.writer_role)
        action_id = record_action(
            conn,
            ctx.actor,
            command="init-db",
            arguments=_arguments(ctx),
            started_at=started_at,
            project_code=ctx.project_code,
        )
    return InitReport(
        engine_db=safe_url(ctx.engine.url),
        dialect=ctx.engine.dialect,
        project=ctx.project_code,
        engine=engine,
        guarded_tables=len(guarded),
        action_id=action_id,
    )


def migrate(ctx: OperationContext, *, validated: bool = True) -> MigrateReport:
    """Apply etl-craft's pending migrations, then the project's; one transaction per file.

    Unless ``validated`` is False (recorded in the action's arguments), a project file that
    leaves a pipeline it changes failing validate is rolled back.
    """
    action_id = _record_request(ctx, "migrate", {"validate": validated})
    streams = [migrate_engine(ctx.engine, ctx.actor, ctx.writer_role)]
    if ctx.project is not None:
        streams.append(
            migrate_project(
                ctx.engine,
                ctx.actor,
                project_code=ctx.project_code,
                folder=ctx.project.migrations_dir,
                writer_role=ctx.writer_role,
                check=MigrationValidation(ctx) if validated else None,
            )
        )
    return MigrateReport(
        engine_db=safe_url(ctx.engine.url),
        dialect=ctx.engine.dialect,
        project=ctx.project_code,
        streams=tuple(streams),
        action_id=action_id,
    )


def _record_request(
    ctx: OperationContext, command: str, options: dict[str, object] | None = None
) -> int:
    # Recorded before the work, so a request that then fails is still on record.
    started_at = utc_now()
    with ctx.engine.transaction(ctx.actor) as conn:
        if not ledger_exists(conn):
            raise MigrationError(
                f"the Engine DB at {safe_url(ctx.engine.url)} has no etl-craft schema, so "
                f"there is nothing to migrate; run etl-craft init-db first"
            )
        return record_action(
            conn,
            ctx.actor,
            command=command,
            arguments={**_arguments(ctx), **(options or {})},
            started_at=started_at,
            project_code=ctx.project_code,
        )


def _arguments(ctx: OperationContext) -> dict[str, object]:
    connector = ctx.connector
    return {
        "config": None if connector is None else str(connector.path),
        "profile": None if connector is None else connector.profile,
        "project": ctx.project_code,
        "engine_db": safe_url(ctx.engine.url),
    }
