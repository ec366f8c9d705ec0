"""The Engine DB's schema version against this etl-craft's: a worker or an overseer of one
version never runs on an Engine DB migrated to another (no rolling upgrades)."""

from __future__ import annotations

from etl_craft import __version__
from etl_craft.core.enums import MigrationStream
from etl_craft.core.errors import MigrationError
from etl_craft.enginedb.connection import EngineConnection, EngineDB, safe_url
from etl_craft.enginedb.migrations import ENGINE_SCOPE, schema_version


def applied_schema_version(conn: EngineConnection) -> int | None:
    """The highest ENGINE-stream migration applied; None on a database never initialised."""
    if not conn.scalar("ledger_exists"):
        return None
    rows = conn.all("applied_migrations", stream=MigrationStream.ENGINE.value, scope=ENGINE_SCOPE)
    return max((int(row["version"]) for row in rows), default=None)


def refuse_other_schema_version(engine: EngineDB, process: str) -> None:
    """Raise unless ``engine`` is at the schema version this ``process`` (worker, overseer)
    is built for, naming both versions and what to do."""
    with engine.read() as conn:
        applied = applied_schema_version(conn)
    expected = schema_version(engine.dialect)
    if applied is None:
        raise MigrationError(
            f"the Engine DB at {safe_url(engine.url)} has no etl-craft schema; run etl-craft "
            f"init-db, then start the {process} again"
        )
    if applied == expected:
        return
    found = (
        f"the Engine DB at {safe_url(engine.url)} is at schema version {applied}, but this "
        f"{process} (etl-craft {__version__}) is built for schema version {expected}; "
    )
    if applied < expected:
        raise MigrationError(
            found + f"run etl-craft migrate with this version first, then start the {process}"
        )
    raise MigrationError(
        found + f"upgrade the {process} to the etl-craft version that migrated the Engine DB "
        "(etl-craft migrate can't take a schema back)"
    )
