"""doctor's checks of a reachable Engine DB: schema, migrations, guards, access and capacity."""

from __future__ import annotations

import stat
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from sqlalchemy import exc as sa_exc

from etl_craft import __version__
from etl_craft.config.rules import DEFAULT_WRITER_ROLE
from etl_craft.core.enums import MigrationStream
from etl_craft.core.errors import EtlCraftError
from etl_craft.core.text import quoted_identifier
from etl_craft.enginedb.connection import EngineDB, safe_url
from etl_craft.enginedb.guards import APPEND_ONLY_TABLES, TERMINAL_IMMUTABLE_TABLES, reserved_tables
from etl_craft.enginedb.migration_ledger import applied_migrations, compare, ledger_exists
from etl_craft.enginedb.migrations import ENGINE_SCOPE, engine_files, project_files
from etl_craft.enginedb.server_checks import (
    connection_use,
    foreign_write_grants,
    foreign_write_logins,
    guard_triggers,
    server_version,
)
from etl_craft.enginedb.watermarks import MIRRORED
from etl_craft.operations.doctor.connection_budget import REMEDY as BUDGET_REMEDY
from etl_craft.operations.doctor.connection_budget import ConnectionBudget, connection_budget
from etl_craft.operations.doctor.connection_budget import describe as describe_budget
from etl_craft.operations.validate.blocking import describe, project_blocking_findings


class CheckStatus(StrEnum):
    PASS = "PASS"  # noqa: S105 (a check status, not a password)
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Check:
    name: str
    status: CheckStatus
    detail: str
    remedy: str | None = None


@dataclass(frozen=True)
class Target:
    """What the configuration told doctor about the Engine DB and the project."""

    url: str | None
    project_code: str | None
    migrations_dir: Path | None
    # Why project checks can't run, when they can't.
    project_problem: str | None
    writer_role: str = DEFAULT_WRITER_ROLE
    db_pool_size: int | None = None  # Orchestration.db_pool_size, when the project sets it


ENGINE_DB = "engine-db"
SCHEMA = "schema"
PROJECT_MIGRATIONS = "project-migrations"
WRITE_GUARDS = "write-guards"
FILE_MODE = "engine-file-mode"
GRANTS = "grants"
CONNECTIONS = "connections"
PIPELINES = "pipelines"
DATABASE_CHECKS = (
    ENGINE_DB,
    SCHEMA,
    PROJECT_MIGRATIONS,
    WRITE_GUARDS,
    FILE_MODE,
    GRANTS,
    CONNECTIONS,
    PIPELINES,
)
INIT_REMEDY = "run etl-craft init-db"
DEFAULT_PROJECT = "default"  # the project of an Engine DB used without a craft-connector.yml

# Triggers each reserved table carries, by kind, as enginedb/sql/<dialect>/guards.sql installs them.
_GUARD_TRIGGERS = {"postgresql": 3, "sqlite": 3}
_HISTORY_TRIGGERS = 2
_CAPTURE_TRIGGERS = {"postgresql": 2, "sqlite": 3}
_TRIGGER_KINDS = (
    ("etl_craft_guard", "guard"),
    ("etl_craft_history", "history"),
    ("etl_craft_watermark", "watermark"),
    ("etl_craft_stamp", "capture"),
    ("etl_craft_capture", "capture"),
)


def skipped(names: tuple[str, ...], reason: str) -> list[Check]:
    return [Check(name, CheckStatus.SKIP, f"skipped: {reason}") for name in names]


@dataclass(frozen=True)
class DatabaseChecks:
    checks: list[Check]
    budget: ConnectionBudget | None  # PostgreSQL's, when its check could read it


def run_all(db: EngineDB, target: Target) -> DatabaseChecks:
    reach = _guarded(ENGINE_DB, lambda: _reach(db))
    if reach.status is CheckStatus.FAIL:
        reason = f"the Engine DB is unreachable (see {ENGINE_DB})"
        return DatabaseChecks([reach, *skipped(DATABASE_CHECKS[1:], reason)], None)
    no_schema = (
        None if _initialised(db) else f"the Engine DB has no etl-craft schema (see {SCHEMA})"
    )
    budget: list[ConnectionBudget] = []
    checks = [
        reach,
        _guarded(SCHEMA, lambda: _schema(db)),
        _guarded(PROJECT_MIGRATIONS, lambda: _project_migrations(db, target), no_schema),
        _guarded(WRITE_GUARDS, lambda: _write_guards(db), no_schema),
        _guarded(FILE_MODE, lambda: _file_mode(db)),
        _guarded(GRANTS, lambda: _grants(db, target.writer_role)),
        _guarded(CONNECTIONS, lambda: _connections(db, target, budget)),
        _guarded(PIPELINES, lambda: _pipelines(db, target), no_schema),
    ]
    return DatabaseChecks(checks, budget[0] if budget else None)


def _guarded(name: str, check: Callable[[], Check], skip_reason: str | None = None) -> Check:
    if skip_reason is not None:
        return Check(name, CheckStatus.SKIP, f"skipped: {skip_reason}")
    # One check going wrong in an unforeseen way must not hide the others.
    try:
        return check()
    except (EtlCraftError, sa_exc.SQLAlchemyError, OSError) as error:
        return Check(
            name,
            CheckStatus.FAIL,
            f"the check itself failed: {type(error).__name__}: {error}",
            "rerun with --log-level DEBUG; check the Engine DB login may read the catalog",
        )


def _reach(db: EngineDB) -> Check:
    where = safe_url(db.url)
    file = _sqlite_file(db)
    if file is not None and not file.exists():
        return Check(
            ENGINE_DB,
            CheckStatus.FAIL,
            f"the SQLite Engine DB file {file} does not exist",
            f"{INIT_REMEDY} to create it, or point the Engine path at the existing file",
        )
    try:
        with db.read() as conn:
            version = server_version(conn)
    except EtlCraftError as error:
        return Check(
            ENGINE_DB,
            CheckStatus.FAIL,
            str(error),
            f"start the server or fix the Engine url (or ETL_CRAFT_ENGINE_URL) for {where}",
        )
    return Check(ENGINE_DB, CheckStatus.PASS, f"{db.dialect} {version} at {where}")


def _sqlite_file(db: EngineDB) -> Path | None:
    database = db.url.database
    if db.dialect != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database)


def _initialised(db: EngineDB) -> bool:
    try:
        with db.read() as conn:
            return ledger_exists(conn)
    except (EtlCraftError, sa_exc.SQLAlchemyError):
        return False


def _schema(db: EngineDB) -> Check:
    with db.read() as conn:
        if not ledger_exists(conn):
            return Check(
                SCHEMA,
                CheckStatus.FAIL,
                f"the Engine DB at {safe_url(db.url)} has no etl-craft schema "
                "(no SCHEMA_MIGRATIONS ledger)",
                INIT_REMEDY,
            )
        ledger = applied_migrations(conn, MigrationStream.ENGINE, ENGINE_SCOPE)
    files = engine_files(db.dialect)
    diff = compare(ledger, files)
    problems = [
        *(f"applied migration {name} is not in etl-craft {__version__}" for name in diff.missing),
        *(f"migration {name} differs from the one applied" for name in diff.changed),
        *(f"migration {name} is pending" for name in diff.pending),
    ]
    if problems:
        remedy = (
            "upgrade etl-craft to the version that migrated this Engine DB"
            if diff.missing or diff.changed
            else "run etl-craft migrate"
        )
        return Check(SCHEMA, CheckStatus.FAIL, "; ".join(problems), remedy)
    version = max(file.version for file in files)
    return Check(
        SCHEMA, CheckStatus.PASS, f"schema version {version}, as etl-craft {__version__} expects"
    )


def _project_migrations(db: EngineDB, target: Target) -> Check:
    if target.project_problem or target.migrations_dir is None or target.project_code is None:
        return Check(PROJECT_MIGRATIONS, CheckStatus.SKIP, f"skipped: {target.project_problem}")
    folder, code = target.migrations_dir, target.project_code
    files = project_files(folder)
    with db.read() as conn:
        ledger = applied_migrations(conn, MigrationStream.PROJECT, code)
    diff = compare(ledger, files)
    if diff.changed or diff.missing:
        problems = [
            *(f"{name} changed after it was applied" for name in diff.changed),
            *(f"applied {name} is missing from {folder}" for name in diff.missing),
        ]
        remedy = (
            "restore the applied text of each file (applied migrations are history) and put "
            "any change in a new migration file"
        )
        return Check(PROJECT_MIGRATIONS, CheckStatus.FAIL, "; ".join(problems), remedy)
    if diff.pending:
        detail = f"{len(diff.pending)} pending in {folder}: {', '.join(diff.pending)}"
        return Check(PROJECT_MIGRATIONS, CheckStatus.WARN, detail, "run etl-craft migrate")
    detail = f"project {code}: {len(diff.applied)} applied, none pending in {folder}"
    return Check(PROJECT_MIGRATIONS, CheckStatus.PASS, detail)


def _write_guards(db: EngineDB) -> Check:
    with db.read() as conn:
        tables = reserved_tables(conn)
        found: defaultdict[str, Counter[str]] = defaultdict(Counter)
        disabled = []
        for row in guard_triggers(conn):
            table, trigger = row.table_name, row.trigger_name
            if row.disabled:
                disabled.append(f"trigger {trigger} on {table} is disabled")
            else:
                found[table][_trigger_kind(trigger)] += 1
    gaps = disabled + [
        f"{table.name} has {found[table.name][kind]} of {count} enabled {kind} triggers"
        for table in tables
        for kind, count in _expected_triggers(db.dialect, table.name).items()
        if found[table.name][kind] < count
    ]
    if gaps:
        return Check(
            WRITE_GUARDS,
            CheckStatus.FAIL,
            "; ".join(gaps),
            f"{INIT_REMEDY}, which reinstalls the guards of every AUD_ and CFG_ table",
        )
    detail = f"all {len(tables)} AUD_ and CFG_ tables carry their guard triggers"
    return Check(WRITE_GUARDS, CheckStatus.PASS, detail)


def _trigger_kind(name: str) -> str:
    return next((kind for prefix, kind in _TRIGGER_KINDS if name.startswith(prefix)), "other")


def _expected_triggers(dialect: str, table: str) -> dict[str, int]:
    expected = {"guard": _GUARD_TRIGGERS[dialect]}
    if table in APPEND_ONLY_TABLES or table in TERMINAL_IMMUTABLE_TABLES:
        expected["history"] = _HISTORY_TRIGGERS
    if table.startswith("CFG_"):
        expected["capture"] = _CAPTURE_TRIGGERS[dialect]
    if table in MIRRORED:
        # Insert, and update where rows change: what a clone's watermark is read from.
        expected["watermark"] = 2 if MIRRORED[table].changes else 1
    return expected


def _file_mode(db: EngineDB) -> Check:
    file = _sqlite_file(db)
    if file is None:
        return Check(FILE_MODE, CheckStatus.SKIP, f"skipped: a {db.dialect} Engine DB is no file")
    mode = stat.S_IMODE(file.stat().st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Check(
            FILE_MODE,
            CheckStatus.WARN,
            f"{file} has mode {mode:04o}: group or others may write it, around etl-craft's "
            "guards and audit",
            f"chmod go-w {file}",
        )
    return Check(FILE_MODE, CheckStatus.PASS, f"{file} has mode {mode:04o}: only its owner writes")


def _grants(db: EngineDB, writer_role: str) -> Check:
    if db.dialect != "postgresql":
        return Check(GRANTS, CheckStatus.SKIP, "skipped: a SQLite Engine DB has no logins")
    with db.read() as conn:
        grants = foreign_write_grants(conn, writer_role)
        logins = foreign_write_logins(conn, writer_role)
    if not grants and not logins:
        return Check(
            GRANTS,
            CheckStatus.PASS,
            f"no login but the owner's and {writer_role}'s members may write a table or "
            "sequence of the Engine DB",
        )
    held = [
        *(
            f"{role} holds {', '.join(privileges)} on {table}"
            for (table, role), privileges in grants.items()
        ),
        *(
            f"login {role} may {', '.join(privileges)} {table}"
            for (table, role), privileges in logins.items()
        ),
    ]
    revokes = " ".join(
        f"REVOKE {', '.join(privileges)} ON {table} FROM {_role(grantee)};"
        for (table, grantee), privileges in grants.items()
    )
    return Check(
        GRANTS,
        CheckStatus.FAIL,
        f"{'; '.join(held)}: only the guard triggers stand between them and etl-craft's "
        "tables, and nothing between them and its sequences (setval resets an id)",
        f"as the owner, run: {revokes} and revoke the roles that carry the rest; a login "
        f"etl-craft's services use belongs in {writer_role} (etl-craft setup --print-grants)",
    )


def _role(name: str) -> str:
    if name == "PUBLIC":
        return name
    return quoted_identifier(name)


def _connections(db: EngineDB, target: Target, found: list[ConnectionBudget]) -> Check:
    if db.dialect != "postgresql":
        return Check(CONNECTIONS, CheckStatus.SKIP, "skipped: SQLite has no connection limit")
    with db.read() as conn:
        budget = connection_budget(connection_use(conn), target.db_pool_size)
    found.append(budget)
    if budget.over:
        return Check(CONNECTIONS, CheckStatus.WARN, describe_budget(budget), BUDGET_REMEDY)
    return Check(CONNECTIONS, CheckStatus.PASS, describe_budget(budget))


def _pipelines(db: EngineDB, target: Target) -> Check:
    """A pipeline that cannot run is not ready, whatever the installation around it."""
    project = target.project_code or DEFAULT_PROJECT
    with db.read() as conn:
        blocked = project_blocking_findings(conn, project)
    if not blocked:
        return Check(PIPELINES, CheckStatus.PASS, f"no pipeline of project {project} is blocked")
    lines = [
        f"pipeline {code}: {describe(finding)}"
        for code, findings in sorted(blocked.items())
        for finding in findings
    ]
    return Check(
        PIPELINES,
        CheckStatus.FAIL,
        f"{len(blocked)} pipeline(s) of project {project} cannot run:\n" + "\n".join(lines),
        "fix each finding in a new project migration and run etl-craft migrate; etl-craft "
        "validate lists every finding",
    )
