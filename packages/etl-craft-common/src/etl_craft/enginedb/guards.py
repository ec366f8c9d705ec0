"""Write guards: attach etl-craft's triggers to every AUD_ and CFG_ table and the ledger.

The ledger (SCHEMA_MIGRATIONS) is guarded like history: a forged row would make every
``migrate`` refuse, a deleted one would apply an old file again.

Installed by code from the catalog rather than listed in schema.sql, so that a table a
project migration creates under a reserved prefix is guarded as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from etl_craft.config.rules import DEFAULT_WRITER_ROLE
from etl_craft.core.errors import MigrationError
from etl_craft.core.text import ROLE_RULE, is_role_name
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.named_statements import statement
from etl_craft.enginedb.watermarks import MIRRORED, WATERMARK

# Recorded history: never updated or deleted, even by etl-craft.
APPEND_ONLY_TABLES = frozenset(
    {
        "AUD_ACTIONS",
        "AUD_DEPENDENCY_CONSUMPTION",
        "AUD_GATE_DECISIONS",
        "AUD_METADATA_CHANGES",
        "AUD_PROJECT_BUNDLES",
        "AUD_RUN_INTERVENTIONS",
        "AUD_UI_SIGN_INS",
        "SCHEMA_MIGRATIONS",
    }
)
# Recorded history that etl-craft purge removes past its retention (and nothing else may).
PURGEABLE_TABLES = frozenset(
    {"AUD_DEPENDENCY_CONSUMPTION", "AUD_GATE_DECISIONS", "AUD_RUN_INTERVENTIONS"}
)
# Rows that become history when they reach a terminal status.
TERMINAL_IMMUTABLE_TABLES = frozenset({"AUD_TASK_ATTEMPTS"})

REMEDIES = {
    "AUD": "change runs with etl-craft run, mark or cancel, never by hand",
    "CFG": "change metadata with a project migration (etl-craft migrate)",
    "SCH": "apply migrations with etl-craft init-db or migrate, never by hand",
}
STAMP_COLUMNS = ("CREATED_BY", "CREATE_DATE", "UPDATED_BY", "UPDATE_DATE")
_IDENTIFIER = re.compile(r"[A-Z][A-Z0-9_]*")


@dataclass(frozen=True)
class ReservedTable:
    name: str
    key_column: str | None

    @property
    def prefix(self) -> str:
        return self.name[:3]


def reserved_tables(conn: EngineConnection) -> list[ReservedTable]:
    return [
        ReservedTable(str(row["table_name"]), row["key_column"])
        for row in conn.all("reserved_tables")
    ]


def table_columns(conn: EngineConnection, table: str) -> list[str]:
    """The columns of ``table``, in order."""
    return [str(row["column_name"]) for row in conn.all("table_columns", table_name=table)]


def install_guards(conn: EngineConnection, writer_role: str = DEFAULT_WRITER_ROLE) -> list[str]:
    """Attach (or refresh) every guard; returns the tables guarded.

    On PostgreSQL only the tables' owner and the members of ``writer_role`` may write them.
    """
    if not is_role_name(writer_role):
        raise MigrationError(
            f"writer role {writer_role!r} is not a plain PostgreSQL role name; expected "
            f"{ROLE_RULE}; set Engine.writer_role in craft-connector.yml to such a name"
        )
    tables = reserved_tables(conn)
    for table in tables:
        _check_identifier(table.name)
        _apply(
            conn,
            "guard_template",
            table=table.name,
            remedy=REMEDIES[table.prefix],
            writer_role=writer_role,
        )
        stamps = _stamp_conditions(conn, table.name)
        if table.name in PURGEABLE_TABLES:
            _apply(conn, "purgeable_template", table=table.name, **stamps)
        elif table.name in APPEND_ONLY_TABLES:
            _apply(conn, "append_only_template", table=table.name, **stamps)
        if table.name in TERMINAL_IMMUTABLE_TABLES:
            _apply(conn, "terminal_immutable_template", table=table.name, **stamps)
        if table.name in MIRRORED:
            _apply(conn, "stamp_insert_template", table=table.name)
            if MIRRORED[table.name].changes:
                _apply(conn, "stamp_update_template", table=table.name)
        if table.prefix == "CFG":
            _install_capture(conn, table)
    return [table.name for table in tables]


def _stamp_conditions(conn: EngineConnection, table: str) -> dict[str, str]:
    """SQLite's history guards let through the UPDATE that stamps a row's UPDATED_AT (its
    triggers stamp after the write, where PostgreSQL's change the row being written): the first
    stamp of a row just inserted, or the stamp of the change that ended an attempt, each
    changing nothing but UPDATED_AT."""
    if conn.dialect != "sqlite" or table not in MIRRORED:
        return {"first_stamp": "0", "restamp": "0"}
    others = [name for name in table_columns(conn, table) if name != WATERMARK]
    for name in others:
        _check_identifier(name)
    unchanged = " AND ".join(f"NEW.{name} IS OLD.{name}" for name in others)
    return {
        "first_stamp": f"OLD.{WATERMARK} IS NULL AND NEW.{WATERMARK} IS NOT NULL AND {unchanged}",
        "restamp": f"NEW.{WATERMARK} IS NOT OLD.{WATERMARK} AND {unchanged}",
    }


def _install_capture(conn: EngineConnection, table: ReservedTable) -> None:
    if table.key_column is None:
        raise MigrationError(
            f"table {table.name} has no primary key; every CFG_ table needs one so that "
            "its changes can be recorded by key; add a PRIMARY KEY in the migration"
        )
    values = {"table": table.name, "key": table.key_column, "key_lower": table.key_column.lower()}
    columns = table_columns(conn, table.name)
    missing = [name for name in STAMP_COLUMNS if name not in columns]
    if missing:
        raise MigrationError(
            f"table {table.name} lacks the audit columns {', '.join(missing)}; every CFG_ "
            "table carries CREATED_BY, CREATE_DATE, UPDATED_BY and UPDATE_DATE"
        )
    if conn.dialect == "sqlite":
        for name in columns:
            _check_identifier(name)
        values["row_json"] = ", ".join(f"'{name.lower()}', R.{name}" for name in columns)
        values["old_json"] = ", ".join(f"'{name.lower()}', OLD.{name}" for name in columns)
    _apply(conn, "metadata_template", **values)


def _apply(conn: EngineConnection, template: str, **values: str) -> None:
    conn.script(statement(conn.dialect, template).sql.format(**values))


def _check_identifier(name: str) -> None:
    if not _IDENTIFIER.fullmatch(name):
        raise MigrationError(
            f"table or column {name!r} under a reserved prefix is not a plain identifier; "
            "use letters, digits and underscores only"
        )
