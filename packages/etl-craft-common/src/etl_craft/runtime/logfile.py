"""Attempt log files."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy.engine import URL

TAIL_CHARACTERS = 4000


def tail(path: Path, characters: int = TAIL_CHARACTERS) -> str | None:
    """The last ``characters`` of the log, cut at a line start; None when there is no log."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - characters * 4))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    if len(text) <= characters:
        return text
    cut = text[-characters:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut


def engine_key(url: URL) -> str:
    """A short name for one Engine DB, stable across runs and free of its credentials.

    Two Engine DBs (a SQLite file and a PostgreSQL database, say) number their runs
    independently, so their attempt logs must not share a folder.
    """
    database = url.database or ""
    if url.get_backend_name() == "sqlite" and database not in ("", ":memory:"):
        database = str(Path(database).resolve())
    where = f"{url.get_backend_name()}|{url.host or ''}|{url.port or ''}|{database}"
    return f"{url.get_backend_name()}-{hashlib.sha256(where.encode()).hexdigest()[:8]}"


def attempt_logs_dir(logs_dir: Path, url: URL, project_code: str) -> Path:
    """Where the attempt logs of one project in one Engine DB go."""
    return logs_dir / f"{project_code}.{engine_key(url)}"


def attempt_log_path(logs_dir: Path, pipeline: str, run_id: int, task: str, attempt: int) -> Path:
    return logs_dir / pipeline / f"run-{run_id}" / f"{task}.attempt-{attempt}.log"
