"""A small history to purge: runs past their retention beside the retained runs that still
reference some of them, with attempt log files on disk."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from etl_craft.core.time import to_sqlite_text, utc_now
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.stores import ObjectStore
from tests.fixtures.metadata import TESTER, execute, seed_pipeline, seed_run, seed_task_run

OLD = timedelta(days=500)  # past the default 400 days of run history


@dataclass(frozen=True)
class History:
    expired: int  # a run past its retention that nothing retained references
    consumed: int  # a run past its retention consumed by a retained run
    intervened: int  # a run past its retention with an intervention (kept for ever)
    retained: int  # a recent run
    expired_attempts: tuple[int, ...]
    expired_logs: tuple[Path, ...]
    retained_log: Path


def stamp(db: EngineDB, moment: datetime) -> Any:
    return to_sqlite_text(moment) if db.dialect == "sqlite" else moment


def build_history(db: EngineDB, logs: Path, store: ObjectStore | None = None) -> History:
    """With ``store``, each log is in it (as an owner with a Logs store leaves it), not in
    ``logs``; the paths returned are then the keys' local counterparts."""
    now = utc_now()
    up = seed_pipeline(db, tasks=("load",))
    down = seed_pipeline(db, tasks=("report",))
    consumed = _ended_run(db, up.pipeline_id, now - OLD)
    expired = _ended_run(db, down.pipeline_id, now - OLD)
    intervened = _ended_run(db, down.pipeline_id, now - OLD)
    retained = _ended_run(db, down.pipeline_id, now)
    with db.transaction(TESTER) as conn:
        dependency = _dependency(conn, down.pipeline_id, up.pipeline_id)
        _consume(conn, db, expired, consumed, dependency, now - OLD)
        _consume(conn, db, retained, consumed, dependency, now)
        execute(
            conn,
            "INSERT INTO AUD_RUN_INTERVENTIONS (PIPELINE_RUN_ID, KIND, REASON, REQUESTED_AT, "
            "REQUESTED_BY, REQUESTED_BY_KIND) VALUES (:r, 'MARK', 'fixed by hand', :at, 't', "
            "'HUMAN')",
            r=intervened,
            at=stamp(db, now - OLD),
        )
    task = down.task_ids["report"]
    expired_logs = (logs / "down" / "run-1" / "a1.log", logs / "down" / "run-1" / "a2.log")
    expired_attempts = _attempts(
        db, seed_task_run(db, expired, task, "SUCCESS"), expired_logs, store, logs
    )
    retained_log = logs / "down" / "run-2" / "a1.log"
    _attempts(db, seed_task_run(db, retained, task, "SUCCESS"), (retained_log,), store, logs)
    return History(
        expired, consumed, intervened, retained, expired_attempts, expired_logs, retained_log
    )


def _ended_run(db: EngineDB, pipeline_id: int, ended: datetime) -> int:
    run_id = seed_run(db, pipeline_id, "SUCCESS")
    with db.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET END_DATE = :at WHERE PIPELINE_RUN_ID = :r",
            at=stamp(db, ended),
            r=run_id,
        )
    return run_id


def _dependency(conn: EngineConnection, pipeline_id: int, upstream_id: int) -> int:
    return int(
        execute(
            conn,
            "INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID) "
            "VALUES (:p, :u) RETURNING PIPELINE_DEPENDENCY_ID",
            p=pipeline_id,
            u=upstream_id,
        ).scalar_one()
    )


def _consume(
    conn: EngineConnection, db: EngineDB, run: int, upstream: int, dependency: int, at: datetime
) -> None:
    decision = execute(
        conn,
        "INSERT INTO AUD_GATE_DECISIONS (PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, "
        "SELECTED_PIPELINE_RUN_ID, RESULT, REASON, DECIDED_AT, DECIDED_BY, DECIDED_BY_KIND) "
        "VALUES (:r, :d, :u, 'SATISFIED', 'fresh', :at, 't', 'SYSTEM') RETURNING DECISION_ID",
        r=run,
        d=dependency,
        u=upstream,
        at=stamp(db, at),
    ).scalar_one()
    execute(
        conn,
        "INSERT INTO AUD_DEPENDENCY_CONSUMPTION (PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, "
        "DECISION_ID, CONSUMED_PIPELINE_RUN_ID, CONSUMED_AT) VALUES (:r, :d, :g, :u, :at)",
        r=run,
        d=dependency,
        g=decision,
        u=upstream,
        at=stamp(db, at),
    )


def stored_key(log: Path, root: Path) -> str:
    return f"logs/{log.relative_to(root).as_posix()}"


def _attempts(
    db: EngineDB,
    task_run: int,
    logs: tuple[Path, ...],
    store: ObjectStore | None,
    root: Path,
) -> tuple[int, ...]:
    ids = []
    with db.transaction(TESTER) as conn:
        for number, log in enumerate(logs, start=1):
            text = f"attempt {number} of task run {task_run}\n"
            location = str(log)
            if store is None:
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text(text)
            else:
                key = stored_key(log, root)
                store.put_bytes(key, text.encode())
                location = f"{store.url}/{key}"
            ids.append(
                int(
                    execute(
                        conn,
                        "INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, "
                        "SLOT_KIND, QUEUED_AT, ENDED_AT, LOG_PATH, TASK_LOG, REQUESTED_BY, "
                        "REQUESTED_BY_KIND) VALUES (:tr, :n, 'SUCCESS', 'warehouse', "
                        "etl_craft_now(), etl_craft_now(), :log, 'done', 't', 'HUMAN') "
                        "RETURNING ATTEMPT_ID",
                        tr=task_run,
                        n=number,
                        log=location,
                    ).scalar_one()
                )
            )
    return tuple(ids)


def count(db: EngineDB, table: str, where: str = "", **params: Any) -> int:
    with db.read() as conn:
        sql = f"SELECT count(*) FROM {table}" + (f" WHERE {where}" if where else "")
        return int(execute(conn, sql, **params).scalar_one())
