"""Whether the configured warehouse answers, asked once with a short timeout (doctor's check).

Nothing is created: a DuckDB file that does not exist yet is only judged by its folder, and an
existing one is opened read-only without the open lock a run takes, so a running pipeline
neither blocks the check nor is blocked by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg
from sqlalchemy.engine import make_url

from etl_craft.config.rules import MEMORY_DATABASE
from etl_craft.core.errors import WarehouseError


@dataclass(frozen=True)
class Reached:
    detail: str  # what answered, and where
    # A DuckDB file another process (a run) holds open: it exists, and can't be read now.
    busy: bool = False


def reach_postgresql(url: str, timeout_seconds: int) -> Reached:
    parsed = make_url(url)
    where = f"host {parsed.host or 'localhost'}, port {parsed.port or 5432}"
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        with psycopg.connect(plain, connect_timeout=timeout_seconds) as conn:
            version = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error as error:
        reason = " ".join(str(error).split())
        raise WarehouseError(
            f"the PostgreSQL warehouse at {where} (database {parsed.database}) does not answer "
            f"within {timeout_seconds} s: {reason}"
        ) from error
    shown = version[0] if version else "?"
    return Reached(f"PostgreSQL {shown} at {where}, database {parsed.database}")


def reach_duckdb(path: str) -> Reached:
    if path == MEMORY_DATABASE:
        return Reached("DuckDB in memory: each process has its own, empty at start")
    file = Path(path)
    if not file.exists():
        if not file.parent.is_dir():
            raise WarehouseError(
                f"the DuckDB warehouse {file} can't be created: its folder {file.parent} "
                "does not exist"
            )
        return Reached(f"DuckDB {file} does not exist yet; the first run creates it")
    try:
        duckdb.connect(str(file), read_only=True).close()
    except duckdb.Error as error:
        if "lock" in str(error).lower():
            return Reached(f"DuckDB {file} exists and is open in another process now", busy=True)
        raise WarehouseError(f"the DuckDB warehouse {file} can't be opened: {error}") from error
    return Reached(f"DuckDB {file} opens")
