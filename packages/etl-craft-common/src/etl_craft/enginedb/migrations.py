"""Engine DB migrations: etl-craft's own (ENGINE stream) and a project's metadata (PROJECT stream).

Every file runs in its own transaction under the migration lock, is recorded in
SCHEMA_MIGRATIONS with its SHA-256, and may never change once applied.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import psycopg
from sqlalchemy import exc as sa_exc

from etl_craft.config.rules import DEFAULT_WRITER_ROLE
from etl_craft.core.actor import Actor
from etl_craft.core.enums import MigrationStream
from etl_craft.core.errors import MigrationError
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.guards import install_guards
from etl_craft.enginedb.script_errors import Statement, describe, located_statement, statements

ENGINE_SCOPE = "engine"
FILE_NAME = re.compile(r"(\d{4})_([A-Za-z0-9_\-]+)\.sql")
DEFAULT_POOL = "default"
# Called in a file's transaction before the file runs (to note what it starts from); what it
# returns is called after, and rolls the file back by raising.
FileCheck = Callable[[EngineConnection], Callable[["MigrationFile"], None]]


class PendingMigrationsError(MigrationError):
    """The project's folder holds files the Engine DB has not applied, so a new file can't be
    judged after them."""


@dataclass(frozen=True)
class MigrationFile:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


@dataclass(frozen=True)
class MigrationReport:
    stream: MigrationStream
    scope: str
    applied: tuple[str, ...]
    already_applied: int
    version: int


def schema_sql(dialect: str) -> str:
    return (files("etl_craft.enginedb") / "schema" / dialect / "schema.sql").read_text()


def engine_files(dialect: str) -> list[MigrationFile]:
    folder = files("etl_craft.enginedb") / "migrations" / dialect
    entries = [(entry.name, entry.read_text()) for entry in folder.iterdir()]
    return _ordered(f"etl-craft's {dialect} migrations", entries)


def project_files(folder: Path) -> list[MigrationFile]:
    if not folder.is_dir():
        return []
    entries = [(path.name, path.read_text()) for path in folder.iterdir() if path.is_file()]
    return _ordered(str(folder), entries)


def schema_version(dialect: str) -> int:
    return max(migration.version for migration in engine_files(dialect))


def _ordered(where: str, entries: Sequence[tuple[str, str]]) -> list[MigrationFile]:
    by_version: dict[int, MigrationFile] = {}
    for name, sql in entries:
        if name.startswith(".") or not name.endswith(".sql"):
            continue
        match = FILE_NAME.fullmatch(name)
        if match is None:
            raise MigrationError(
                f"migration file {name} in {where} is not named NNNN_description.sql; "
                "rename it, for example 0002_add_orders_pipeline.sql"
            )
        version = int(match[1])
        if version in by_version:
            raise MigrationError(
                f"migrations {by_version[version].name} and {name} in {where} share version "
                f"{version}; give each file its own number"
            )
        by_version[version] = MigrationFile(version, name, sql)
    return [by_version[version] for version in sorted(by_version)]


def lock_migrations(conn: EngineConnection) -> None:
    """Hold back every other migration runner until this transaction ends."""
    conn.run("lock_migrations")


def initialize(
    db: EngineDB,
    actor: Actor,
    *,
    project_code: str,
    timezone: str,
    writer_role: str = DEFAULT_WRITER_ROLE,
) -> MigrationReport:
    """Create the current schema on an empty Engine DB, or bring an existing one up to date."""
    with db.transaction(actor) as conn:
        lock_migrations(conn)
        fresh = not conn.scalar("ledger_exists")
        if fresh:
            _execute(conn, "schema.sql", schema_sql(db.dialect))
            install_guards(conn, writer_role)
            for migration in engine_files(db.dialect):
                _record(conn, MigrationStream.ENGINE, ENGINE_SCOPE, migration, actor)
    if fresh:
        report = MigrationReport(
            MigrationStream.ENGINE, ENGINE_SCOPE, ("schema.sql",), 0, schema_version(db.dialect)
        )
    else:
        report = migrate_engine(db, actor, writer_role)
    with db.transaction(actor) as conn:
        conn.run("ensure_project", project_code=project_code, timezone=timezone)
        conn.run(
            "ensure_pool", pool_name=DEFAULT_POOL, description="the pool of tasks that name none"
        )
    return report


def migrate_engine(
    db: EngineDB, actor: Actor, writer_role: str = DEFAULT_WRITER_ROLE
) -> MigrationReport:
    files = engine_files(db.dialect)
    return _migrate(db, actor, (MigrationStream.ENGINE, ENGINE_SCOPE), files, writer_role)


def migrate_project(
    db: EngineDB,
    actor: Actor,
    *,
    project_code: str,
    folder: Path,
    writer_role: str = DEFAULT_WRITER_ROLE,
    check: FileCheck | None = None,
) -> MigrationReport:
    """Apply the folder's pending files; ``check`` judges each applied file inside its
    transaction, before it is recorded, and rolls it back by raising."""
    with db.read() as conn:
        if not conn.scalar("ledger_exists"):
            raise MigrationError(
                f"the Engine DB has no etl-craft schema, so project migrations in {folder} "
                "can't be applied; run etl-craft init-db first"
            )
    files = project_files(folder)
    target = (MigrationStream.PROJECT, project_code)
    return _migrate(db, actor, target, files, writer_role, check)


def next_project_version(db: EngineDB, *, project_code: str, folder: Path) -> int:
    """The number the project's next migration file gets: one past every file in ``folder``
    and every version the Engine DB applied (a file another checkout applied counts too)."""
    with db.read() as conn:
        ledger = _ledger(conn, MigrationStream.PROJECT, project_code)
    versions = [migration.version for migration in project_files(folder)]
    return max([*versions, *ledger, 0]) + 1


def rehearse_project_file(
    db: EngineDB,
    actor: Actor,
    *,
    project_code: str,
    folder: Path,
    migration: MigrationFile,
    check: FileCheck,
) -> None:
    """Run ``migration`` as migrate would run it next, let ``check`` see it inside the file's
    transaction, and roll everything back: nothing is written and no file is needed."""
    files = project_files(folder)
    target = (MigrationStream.PROJECT, project_code)
    with db.rehearsal(actor, migration=migration.name) as conn:
        lock_migrations(conn)
        ledger = _ledger(conn, *target)
        _verify(ledger, files, MigrationStream.PROJECT)
        pending = [file.name for file in files if file.version not in ledger]
        if pending:
            raise PendingMigrationsError(
                f"project migration(s) {', '.join(pending)} in {folder} are not applied yet, so "
                f"{migration.name} can't be judged after them; run etl-craft migrate first"
            )
        newest = max([*ledger, *(file.version for file in files), 0])
        if migration.version <= newest:
            raise MigrationError(
                f"migration {migration.name} has version {migration.version}, but the project "
                f"is at version {newest} already; expected version {newest + 1}: start again "
                "from the current metadata"
            )
        judge = check(conn)
        _execute(conn, migration.name, migration.sql)
        judge(migration)


def _migrate(
    db: EngineDB,
    actor: Actor,
    target: tuple[MigrationStream, str],
    migrations: list[MigrationFile],
    writer_role: str,
    check: FileCheck | None = None,
) -> MigrationReport:
    stream, scope = target
    applied: list[str] = []
    known = 0
    for migration in migrations:
        label = migration.name if stream is MigrationStream.PROJECT else None
        with db.transaction(actor, migration=label) as conn:
            lock_migrations(conn)
            ledger = _ledger(conn, stream, scope)
            _verify(ledger, migrations, stream)
            if migration.version in ledger:
                known += 1
                continue
            judge = None if check is None else check(conn)
            _execute(conn, migration.name, migration.sql)
            if judge is not None:
                judge(migration)
            # The guards are today's, so they wait for etl-craft's last migration: an older
            # schema may lack the functions they call.
            if stream is MigrationStream.PROJECT or migration is migrations[-1]:
                install_guards(conn, writer_role)
            _record(conn, stream, scope, migration, actor)
            applied.append(migration.name)
    if not migrations:
        with db.read() as conn:
            _verify(_ledger(conn, stream, scope), migrations, stream)
    version = max((migration.version for migration in migrations), default=0)
    return MigrationReport(stream, scope, tuple(applied), known, version)


def _ledger(
    conn: EngineConnection, stream: MigrationStream, scope: str
) -> dict[int, tuple[str, str]]:
    if not conn.scalar("ledger_exists"):
        return {}
    rows = conn.all("applied_migrations", stream=stream.value, scope=scope)
    return {int(row["version"]): (str(row["name"]), str(row["checksum"])) for row in rows}


def _verify(
    ledger: dict[int, tuple[str, str]], migrations: list[MigrationFile], stream: MigrationStream
) -> None:
    by_version = {migration.version: migration for migration in migrations}
    for version, (name, checksum) in sorted(ledger.items()):
        migration = by_version.get(version)
        if migration is None:
            remedy = (
                "upgrade etl-craft to the version that applied it"
                if stream is MigrationStream.ENGINE
                else "restore the file; applied migrations are history and are never removed"
            )
            raise MigrationError(f"applied {stream.value} migration {name} is missing; {remedy}")
        if migration.checksum != checksum:
            raise MigrationError(
                f"migration {migration.name} changed after it was applied (recorded SHA-256 "
                f"{checksum[:12]}..., file now {migration.checksum[:12]}...); restore the "
                "applied text and put the change in a new migration file"
            )


def _execute(conn: EngineConnection, name: str, sql: str) -> None:
    if conn.dialect != "sqlite":
        _run(conn, name, sql, None)
        return
    # One statement at a time, so a failure names the statement and its line in the file.
    for statement in statements(sql):
        _run(conn, name, statement.text, statement)


def _run(conn: EngineConnection, name: str, sql: str, statement: Statement | None) -> None:
    try:
        conn.script(sql)
    except (sa_exc.DBAPIError, sqlite3.Error, psycopg.Error) as error:
        where = statement or located_statement(sql, error)
        raise MigrationError(
            f"{describe(error, f'migration {name}', where)}. The file was rolled back: fix it "
            "and run etl-craft migrate again"
        ) from error


def _record(
    conn: EngineConnection,
    stream: MigrationStream,
    scope: str,
    migration: MigrationFile,
    actor: Actor,
) -> None:
    conn.run(
        "record_migration",
        stream=stream.value,
        scope=scope,
        version=migration.version,
        name=migration.name,
        checksum=migration.checksum,
        applied_by=actor.name,
    )
