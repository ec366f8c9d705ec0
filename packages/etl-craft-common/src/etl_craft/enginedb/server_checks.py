"""What doctor and the grant printer read about the Engine DB server itself: its version, the
guard triggers, who else may write etl-craft's tables, and the connections in use."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from etl_craft.enginedb.connection import EngineConnection, Row

# (table, role) -> the write privileges that role holds on that table
HeldPrivileges = dict[tuple[str, str], list[str]]


@dataclass(frozen=True)
class GuardTrigger:
    table_name: str
    trigger_name: str
    disabled: bool


@dataclass(frozen=True)
class LiveWorker:
    worker_id: str
    slots: int  # of every kind together


@dataclass(frozen=True)
class ConnectionUse:
    """What the server allows and what etl-craft's processes are now (PostgreSQL)."""

    max_connections: int
    reserved: int  # kept for superusers and pg_use_reserved_connections
    connections: int  # open now
    overseers: int  # leading overseers
    workers: tuple[LiveWorker, ...]
    tasks: int  # running task processes


@dataclass(frozen=True)
class TableOwner:
    schema_name: str
    owner: str


def server_version(conn: EngineConnection) -> str:
    return str(conn.scalar("server_version"))


def guard_triggers(conn: EngineConnection) -> tuple[GuardTrigger, ...]:
    """Every etl-craft trigger on an AUD_ or CFG_ table, and whether it was switched off."""
    return tuple(
        GuardTrigger(str(row["table_name"]), str(row["trigger_name"]), bool(row["disabled"]))
        for row in conn.all("guard_triggers")
    )


def _held(rows: Sequence[Row]) -> HeldPrivileges:
    held: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        held[(str(row["table_name"]), str(row["grantee"]))].append(str(row["privilege"]))
    return dict(held)


def foreign_write_grants(conn: EngineConnection, writer_role: str) -> HeldPrivileges:
    """Write privileges on every table and sequence of etl-craft's schema granted to a role
    other than the owner, the writer role and the current user (PostgreSQL); a sequence's
    name reads ``SEQUENCE name``."""
    return _held(conn.all("foreign_write_grants", writer_role=writer_role))


def foreign_write_logins(conn: EngineConnection, writer_role: str) -> HeldPrivileges:
    """Logins that may write a table or sequence of etl-craft's schema yet are neither
    superusers, the owner's members nor the writer role's (PostgreSQL)."""
    return _held(conn.all("foreign_write_logins", writer_role=writer_role))


def connection_use(conn: EngineConnection) -> ConnectionUse:
    """The server's connection limit and use, and etl-craft's live processes (PostgreSQL)."""
    limit = conn.one("connection_budget")
    demand = conn.one("connection_demand")
    assert limit is not None, "an aggregate query returns one row"
    assert demand is not None, "an aggregate query returns one row"
    workers = tuple(
        LiveWorker(str(row["worker_id"]), int(row["slots"]))
        for row in conn.all("connection_demand_workers")
    )
    return ConnectionUse(
        max_connections=int(limit["max_connections"]),
        reserved=int(limit["reserved_connections"]),
        connections=int(limit["connections"]),
        overseers=int(demand["overseers"]),
        workers=workers,
        tasks=int(demand["tasks"]),
    )


def table_owner(conn: EngineConnection) -> TableOwner | None:
    """The schema etl-craft's tables live in and their owner; None before init-db."""
    row = conn.one("table_owner")
    if row is None or row["owner"] is None:
        return None
    return TableOwner(str(row["schema_name"]), str(row["owner"]))
