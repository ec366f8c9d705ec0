"""Whether a service may take requests: the Engine DB answers and its schema is current."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft import __version__
from etl_craft.core.enums import MigrationStream
from etl_craft.core.errors import EtlCraftError
from etl_craft.enginedb.migration_ledger import applied_migrations, compare, ledger_exists
from etl_craft.enginedb.migrations import ENGINE_SCOPE, engine_files
from etl_craft.operations.context import OperationContext


@dataclass(frozen=True)
class Readiness:
    schema: ClassVar[str] = "etl-craft/readiness/1"
    ready: bool
    version: str
    engine_db: str  # the dialect
    problems: tuple[str, ...]


def readiness(ctx: OperationContext) -> Readiness:
    try:
        problems = _schema_problems(ctx)
    except EtlCraftError as error:
        # The error names the Engine DB by its URL without the password, never a secret.
        problems = (f"the Engine DB does not answer: {type(error).__name__}: {error}",)
    return Readiness(not problems, __version__, ctx.engine.dialect, problems)


def _schema_problems(ctx: OperationContext) -> tuple[str, ...]:
    with ctx.engine.read() as conn:
        if not ledger_exists(conn):
            return ("the Engine DB has no etl-craft schema; run etl-craft init-db",)
        ledger = applied_migrations(conn, MigrationStream.ENGINE, ENGINE_SCOPE)
    diff = compare(ledger, engine_files(ctx.engine.dialect))
    return (
        *(f"applied migration {name} is not in etl-craft {__version__}" for name in diff.missing),
        *(f"migration {name} differs from the one applied" for name in diff.changed),
        *(f"migration {name} is pending: run etl-craft migrate" for name in diff.pending),
    )
