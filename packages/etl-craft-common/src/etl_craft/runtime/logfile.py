"""Attempt log files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from etl_craft.config.urls import sqlite_file

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

TAIL_BYTES = 8 * 1024  # Logs.tail_bytes by default
STORED_LOGS = "logs"  # the keys of stored attempt logs start so


def tail(path: Path, limit: int = TAIL_BYTES) -> str | None:
    """At most the last ``limit`` bytes of the log, cut at a line start; None when there is
    no log."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return None
    if size > limit:
        newline = data.find(b"\n")
        data = data[newline + 1 :] if 0 <= newline < len(data) - 1 else data
    # A character cut at the start is dropped, not replaced: the tail stays within the limit.
    return data.decode("utf-8", errors="ignore")


def engine_key(url: str | URL) -> str:
    """A short name for one Engine DB, stable across runs and free of its credentials.

    Two Engine DBs (a SQLite file and a PostgreSQL database, say) number their runs
    independently, so their attempt logs must not share a folder.
    """
    path = sqlite_file(url) if isinstance(url, str) else None
    if path is not None:  # read without SQLAlchemy, as a reading command does
        backend, host, port, database = "sqlite", None, None, str(path)
    else:
        from sqlalchemy.engine import make_url

        parsed = make_url(url) if isinstance(url, str) else url
        backend, host, port = parsed.get_backend_name(), parsed.host, parsed.port
        database = parsed.database or ""
    if backend == "sqlite" and database not in ("", ":memory:"):
        database = str(Path(database).resolve())
    where = f"{backend}|{host or ''}|{port or ''}|{database}"
    return f"{backend}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


def attempt_logs_dir(logs_dir: Path, url: str | URL, project_code: str) -> Path:
    """Where the attempt logs of one project in one Engine DB go."""
    return logs_dir / f"{project_code}.{engine_key(url)}"


def attempt_log_path(logs_dir: Path, pipeline: str, run_id: int, task: str, attempt: int) -> Path:
    return logs_dir / pipeline / f"run-{run_id}" / f"{task}.attempt-{attempt}.log"


def stored_log_key(logs_dir: Path, path: Path) -> str:
    """The key of an attempt log in a Logs store: the folder of its project and Engine DB
    (``attempt_logs_dir``), then the log's path in it, so two Engine DBs never share a key."""
    return f"{STORED_LOGS}/{logs_dir.name}/{path.relative_to(logs_dir).as_posix()}"


def local_log_path(logs_root: Path, key: str) -> Path:
    """Where the owner on this host writes the log it stores under ``key`` while it runs."""
    return logs_root / key.removeprefix(f"{STORED_LOGS}/")


def bundle_cache_dir(url: str | URL) -> Path:
    """Where an owner materialises the bundles of one Engine DB: its bundle ids are its own."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "etl-craft" / "bundles" / engine_key(url)
