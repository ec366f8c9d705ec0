"""etl-craft purge: delete history past its retention, in bounded batches, oldest first.

Each batch is one transaction that records itself in AUD_ACTIONS (who, when, which table, how
many rows) before it deletes, since the history guards let only such a transaction delete.
With an archive, a batch's rows are copied into the warehouse before its transaction commits.
A dry run does the same in one transaction that is rolled back, so its counts are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import ClassVar

from etl_craft.config.sections import Retention
from etl_craft.core.actor import Actor
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.action_log import record_action
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.metadata import active_project_id
from etl_craft.enginedb.retention import (
    BEFORE_ALL,
    CONSUMPTION,
    RUN_TABLES,
    Cutoffs,
    PurgedTable,
    RunCursor,
    delete_rows,
    dependent_ids,
    expired_consumption,
    expired_runs,
    lock_runs,
)
from etl_craft.operations.retention.archive import Archive
from etl_craft.operations.retention.log_files import LogFiles
from etl_craft.stores import ObjectStore

COMMAND = "purge"


@dataclass(frozen=True)
class PurgedRows:
    table: str
    rows: int


@dataclass(frozen=True)
class PurgeView:
    schema: ClassVar[str] = "etl-craft/purge/1"
    dry_run: bool
    project: str | None  # None: every project
    runs_ended_before: datetime
    logs_older_than: datetime
    consumption_before: datetime
    interventions_before: datetime | None  # None: interventions are kept for ever
    archive_to: str | None
    tables: tuple[PurgedRows, ...]  # every purged table, in purge order
    log_files: int  # attempt log files and stored logs removed (a dry run: that would be)
    action_ids: tuple[int, ...]  # the AUD_ACTIONS rows of the batches; none for a dry run

    @property
    def total_rows(self) -> int:
        return sum(table.rows for table in self.tables)


@dataclass(frozen=True)
class PurgeRequest:
    retention: Retention
    now: datetime
    project_code: str | None = None
    dry_run: bool = False

    def cutoffs(self, project_id: int | None) -> Cutoffs:
        kept = self.retention.interventions_days
        return Cutoffs(
            runs=self._days_ago(self.retention.run_history_days),
            consumption=self._days_ago(self.retention.consumption_days),
            interventions=BEFORE_ALL if kept is None else self._days_ago(kept),
            project_id=project_id,
        )

    def _days_ago(self, days: int) -> datetime:
        return self.now - timedelta(days=days)


Batch = Callable[[], AbstractContextManager[EngineConnection]]


@dataclass
class _Purge:
    engine: EngineDB
    actor: Actor
    request: PurgeRequest
    cutoffs: Cutoffs
    archive: Archive | None
    log_files: LogFiles
    batch: Batch
    counts: dict[str, int] = field(default_factory=dict)
    action_ids: list[int] = field(default_factory=list)
    reopened: set[int] = field(default_factory=set)

    def run(self) -> None:
        self._drain(lambda conn: expired_consumption(conn, self.cutoffs, self._size), CONSUMPTION)
        cursor = RunCursor()
        while True:
            with self.batch() as conn:
                found = expired_runs(conn, self.cutoffs, cursor, self._size)
            if not found:
                return
            run_ids = [run_id for run_id, _ in found]
            for table in RUN_TABLES:
                self._drain(partial(self._dependents, table=table, runs=run_ids), table)
            cursor = RunCursor(found[-1][1], found[-1][0])

    @property
    def _size(self) -> int:
        return self.request.retention.batch_rows

    def _dependents(self, conn: EngineConnection, table: PurgedTable, runs: list[int]) -> list[int]:
        """A batch of ``table``'s rows of ``runs``, their runs locked still ended.

        Only the runs of the rows found are locked: locking every run of the walk's batch for
        each table and batch costs more than the deletes. A run reopened since it was found is
        left out of this purge with its rows.
        """
        while True:
            kept = [run for run in runs if run not in self.reopened]
            found = dependent_ids(conn, table, kept, self._size)
            if not found:
                return []
            wanted = sorted({run for _, run in found})
            locked = set(lock_runs(conn, wanted))
            self.reopened.update(run for run in wanted if run not in locked)
            rows = [row for row, run in found if run in locked]
            if rows:
                return rows

    def _drain(self, find: Callable[[EngineConnection], list[int]], table: PurgedTable) -> None:
        """Delete what ``find`` finds, a batch per transaction, until it finds nothing."""
        while True:
            with self.batch() as conn:
                ids = find(conn)
                if not ids:
                    return
                self._delete(conn, table, ids)
            self.log_files.settle()

    def _delete(self, conn: EngineConnection, table: PurgedTable, ids: list[int]) -> None:
        action_id = record_action(
            conn,
            self.actor,
            command=COMMAND,
            arguments={
                "table": table.table,
                "rows": len(ids),
                "first_id": ids[0],
                "last_id": ids[-1],
                "archive_to": self.archive.schema if self.archive else None,
            },
            started_at=self.request.now,
            project_code=self.request.project_code,
        )
        conn.mark_purge(action_id)
        rows = delete_rows(conn, table, ids)
        if self.archive is not None:
            # Before the Engine DB commits: a row is never gone from both places.
            self.archive.keep(conn, table.table, rows)
        if table.table == "AUD_TASK_ATTEMPTS":
            self.log_files.forget(str(row["log_path"]) for row in rows if row["log_path"])
        self.counts[table.table] = self.counts.get(table.table, 0) + len(rows)
        self.action_ids.append(action_id)


def purge(
    engine: EngineDB,
    actor: Actor,
    request: PurgeRequest,
    logs_dir: Path | None,
    archive: Archive | None = None,
    log_store: ObjectStore | None = None,
) -> PurgeView:
    """Purge what ``request``'s retention lets go; ``logs_dir`` holds attempt logs on this host,
    ``log_store`` the logs of ended attempts whose owners had a Logs store."""
    with engine.read() as conn:
        project_id = _project_id(conn, request.project_code)
    cutoffs = request.cutoffs(project_id)
    logs_before = request.now - timedelta(days=request.retention.attempt_log_days)
    log_files = LogFiles(logs_dir, logs_before, dry_run=request.dry_run, store=log_store)
    if request.dry_run:
        with engine.rehearsal(actor) as conn:
            work = _Purge(engine, actor, request, cutoffs, None, log_files, _same(conn))
            work.run()
    else:
        work = _Purge(engine, actor, request, cutoffs, archive, log_files, _each(engine, actor))
        work.run()
    removed = log_files.sweep()
    return PurgeView(
        dry_run=request.dry_run,
        project=request.project_code,
        runs_ended_before=cutoffs.runs,
        logs_older_than=logs_before,
        consumption_before=cutoffs.consumption,
        interventions_before=(
            None if request.retention.interventions_days is None else cutoffs.interventions
        ),
        archive_to=archive.schema if archive else None,
        tables=tuple(
            PurgedRows(table.table, work.counts.get(table.table, 0)) for table in RUN_TABLES
        ),
        log_files=removed,
        action_ids=() if request.dry_run else tuple(work.action_ids),
    )


def _project_id(conn: EngineConnection, project_code: str | None) -> int | None:
    if project_code is None:
        return None
    found = active_project_id(conn, project_code)
    if found is None:
        raise NotFoundError(
            f"project {project_code!r} is not an active project of this Engine DB, so there is "
            "nothing of it to purge; check --project (etl-craft list shows the projects)"
        )
    return found


def _each(engine: EngineDB, actor: Actor) -> Batch:
    return lambda: engine.transaction(actor)


def _same(conn: EngineConnection) -> Batch:
    @contextmanager
    def within() -> Iterator[EngineConnection]:
        yield conn

    return within
