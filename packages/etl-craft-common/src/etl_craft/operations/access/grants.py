"""The GRANT statements that give logins etl-craft's writer or read-only access to the Engine DB.

Writes are authorized by role (the guard triggers let only the tables' owner and members of
the writer role write), so a service login needs membership of the writer role; a reporting
login needs only the reader role. The reader reads every column but those that may hold a
secret: parameter values (a parameter named *TOKEN* or *PASSWORD* holds one in clear), the
metadata changes that copy them, the tokens' hashes and the users' password hashes.
Statements are printed, never run: granting is the owner's or a superuser's act.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.defaults import READER_ROLE
from etl_craft.core.errors import ConfigurationError, MigrationError
from etl_craft.core.text import ROLE_RULE, is_role_name, quoted_identifier
from etl_craft.enginedb.connection import EngineDB, safe_url
from etl_craft.enginedb.guards import table_columns
from etl_craft.enginedb.server_checks import table_owner

WRITER_TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
WRITER_SEQUENCE_PRIVILEGES = "USAGE, SELECT, UPDATE"
# The columns the reader role never reads, by table.
SECRET_COLUMNS = {
    "AUD_METADATA_CHANGES": ("BEFORE_JSON", "AFTER_JSON"),
    "AUD_UI_SESSIONS": ("SESSION_SHA256",),
    "CFG_API_TOKENS": ("TOKEN_SHA256",),
    "CFG_PIPELINE_PARAMETERS": ("PARAMETER_VALUE",),
    "CFG_TASK_PARAMETERS": ("PARAMETER_VALUE",),
    "CFG_USERS": ("PASSWORD_HASH",),
}


# A login bound to a pool is a member of this role plus the pool's name in lower case: the
# Engine DB then refuses its claims of any other pool's attempts (etl_craft_refuse_foreign_claim).
POOL_ROLE_PREFIX = "etl_craft_pool_"
_ROLE_NAME_LIMIT = 63


@dataclass(frozen=True)
class WorkerLogin:
    login: str
    pool: str

    @property
    def pool_role(self) -> str:
        return POOL_ROLE_PREFIX + self.pool.lower()


@dataclass(frozen=True)
class GrantRequest:
    writer_role: str
    reader_role: str = READER_ROLE
    writer_logins: tuple[str, ...] = ()
    reader_logins: tuple[str, ...] = ()
    # Logins of workers that may claim only their pool's attempts.
    worker_logins: tuple[WorkerLogin, ...] = ()


@dataclass(frozen=True)
class GrantsReport:
    schema: ClassVar[str] = "etl-craft/grants/1"
    engine_db: str
    table_schema: str
    owner: str
    writer_role: str
    reader_role: str
    statements: tuple[str, ...]


def grants(db: EngineDB, request: GrantRequest) -> GrantsReport:
    for role in (request.writer_role, request.reader_role):
        _check_role(role)
    for worker in request.worker_logins:
        _check_pool_role(worker)
    schema, owner = _table_owner(db)
    with db.read() as conn:
        readable = {table: table_columns(conn, table) for table in SECRET_COLUMNS}
    return GrantsReport(
        engine_db=safe_url(db.url),
        table_schema=schema,
        owner=owner,
        writer_role=request.writer_role,
        reader_role=request.reader_role,
        statements=(
            *_role(
                schema,
                owner,
                request.writer_role,
                WRITER_TABLE_PRIVILEGES,
                WRITER_SEQUENCE_PRIVILEGES,
            ),
            *_role(schema, owner, request.reader_role, "SELECT", "SELECT"),
            *_without_secrets(request.reader_role, readable),
            *_memberships(request.writer_role, request.writer_logins),
            *_memberships(request.reader_role, request.reader_logins),
            *_pool_bindings(request.writer_role, request.worker_logins),
        ),
    )


def _table_owner(db: EngineDB) -> tuple[str, str]:
    where = safe_url(db.url)
    if db.dialect != "postgresql":
        raise ConfigurationError(
            f"the Engine DB {where} is SQLite, which has no logins to grant to; its guard is "
            "the file's mode (etl-craft creates it 0600): keep it so, or move to a PostgreSQL "
            "Engine DB for roles"
        )
    with db.read() as conn:
        found = table_owner(conn)
    if found is None:
        raise MigrationError(
            f"the Engine DB {where} has no etl-craft schema to grant on; run etl-craft init-db "
            "first"
        )
    return found.schema_name, found.owner


def _role(schema: str, owner: str, role: str, tables: str, sequences: str) -> list[str]:
    where = quoted_identifier(schema)
    # Default privileges cover the tables later migrations create, project ones included.
    defaults = f"ALTER DEFAULT PRIVILEGES FOR ROLE {quoted_identifier(owner)} IN SCHEMA {where}"
    return [
        f"CREATE ROLE {role} NOLOGIN;",
        f"GRANT USAGE ON SCHEMA {where} TO {role};",
        f"GRANT {tables} ON ALL TABLES IN SCHEMA {where} TO {role};",
        f"GRANT {sequences} ON ALL SEQUENCES IN SCHEMA {where} TO {role};",
        f"{defaults} GRANT {tables} ON TABLES TO {role};",
        f"{defaults} GRANT {sequences} ON SEQUENCES TO {role};",
    ]


def _without_secrets(role: str, columns: dict[str, list[str]]) -> list[str]:
    """Take back the reader's SELECT on each table with secret columns, and give it the rest."""
    statements = []
    for table, names in columns.items():
        kept = ", ".join(name for name in names if name not in SECRET_COLUMNS[table])
        statements += [
            f"REVOKE SELECT ON {table} FROM {role};",
            f"GRANT SELECT ({kept}) ON {table} TO {role};",
        ]
    return statements


def _memberships(role: str, logins: tuple[str, ...]) -> list[str]:
    return [f"GRANT {role} TO {quoted_identifier(login)};" for login in logins]


def _pool_bindings(writer_role: str, workers: tuple[WorkerLogin, ...]) -> list[str]:
    """A worker login writes as a writer, and claims only from the pools whose roles it has."""
    statements: list[str] = []
    for role in sorted({worker.pool_role for worker in workers}):
        statements.append(f"CREATE ROLE {role} NOLOGIN;")
    for worker in workers:
        login = quoted_identifier(worker.login)
        statements += [f"GRANT {writer_role} TO {login};", f"GRANT {worker.pool_role} TO {login};"]
    return statements


def _check_pool_role(worker: WorkerLogin) -> None:
    if not is_role_name(worker.pool_role) or len(worker.pool_role) > _ROLE_NAME_LIMIT:
        raise ConfigurationError(
            f"pool {worker.pool!r} of worker login {worker.login!r} can't name a PostgreSQL role "
            f"({worker.pool_role!r}: expected {ROLE_RULE}, at most {_ROLE_NAME_LIMIT} "
            "characters); bind the login to a pool with a shorter plain name"
        )


def _check_role(role: str) -> None:
    if not is_role_name(role):
        raise ConfigurationError(
            f"role name {role!r} is not a plain PostgreSQL role name; expected {ROLE_RULE}; "
            "choose such a name"
        )
