"""How a migration ledger compares with the files that should be in it, every difference at once.

The migration runner stops at the first difference, as a writer must; doctor reports them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import RowMapping

from etl_craft.enginedb.migrations import MigrationFile


@dataclass(frozen=True)
class LedgerDiff:
    applied: tuple[str, ...]
    pending: tuple[str, ...]
    changed: tuple[str, ...]
    # Applied, recorded, and no longer among the files.
    missing: tuple[str, ...]


def compare(ledger: Sequence[RowMapping], files: Sequence[MigrationFile]) -> LedgerDiff:
    """``ledger``: rows with version, name and checksum, as applied_migrations returns them."""
    recorded = {int(row["version"]): row for row in ledger}
    by_version = {migration.version: migration for migration in files}
    return LedgerDiff(
        applied=tuple(str(row["name"]) for row in recorded.values()),
        pending=tuple(file.name for file in files if file.version not in recorded),
        changed=tuple(
            file.name
            for file in files
            if file.version in recorded and recorded[file.version]["checksum"] != file.checksum
        ),
        missing=tuple(
            str(row["name"]) for version, row in recorded.items() if version not in by_version
        ),
    )
