"""What the migration ledger (SCHEMA_MIGRATIONS) holds, and how it compares with the files that
should be in it, every difference at once.

The migration runner stops at the first difference, as a writer must; doctor reports them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from etl_craft.core.enums import MigrationStream
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.migrations import MigrationFile


@dataclass(frozen=True)
class AppliedMigration:
    version: int
    name: str
    checksum: str


@dataclass(frozen=True)
class LedgerDiff:
    applied: tuple[str, ...]
    pending: tuple[str, ...]
    changed: tuple[str, ...]
    # Applied, recorded, and no longer among the files.
    missing: tuple[str, ...]


def ledger_exists(conn: EngineConnection) -> bool:
    """Whether the Engine DB has etl-craft's schema at all (its migration ledger)."""
    return bool(conn.scalar("ledger_exists"))


def applied_migrations(
    conn: EngineConnection, stream: MigrationStream, scope: str
) -> tuple[AppliedMigration, ...]:
    rows = conn.all("applied_migrations", stream=stream.value, scope=scope)
    return tuple(
        AppliedMigration(int(row["version"]), str(row["name"]), str(row["checksum"]))
        for row in rows
    )


def compare(ledger: Sequence[AppliedMigration], files: Sequence[MigrationFile]) -> LedgerDiff:
    recorded = {row.version: row for row in ledger}
    by_version = {migration.version: migration for migration in files}
    return LedgerDiff(
        applied=tuple(row.name for row in recorded.values()),
        pending=tuple(file.name for file in files if file.version not in recorded),
        changed=tuple(
            file.name
            for file in files
            if file.version in recorded and recorded[file.version].checksum != file.checksum
        ),
        missing=tuple(row.name for version, row in recorded.items() if version not in by_version),
    )
