"""Run-supervision overhead: a 100-task fan-out and a 20-task chain of no-op tasks.

Run by hand (never in CI), from the repository root:

    ETL_CRAFT_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        uv run python benchmarks/run_overhead.py

Prints, per Engine DB dialect and shape, the wall time of the run and the per-task overhead:
the time from a task becoming ready (its run's admission, or its last upstream ending) to its
task process running (the attempt's STARTED_AT), as p50 and p95.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.core.time import as_utc

NOOP = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=0)
"""


def shape_sql(pipeline: str, tasks: int, upstream: str, parallel: int) -> str:
    """``tasks`` no-op tasks, each fed by its predecessor (``chain``), all but the first fed by
    the first (``root``), or none fed by another (``none``)."""
    lines = [
        f"INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS) SELECT "
        f"PROJECT_ID, '{pipeline}', {parallel} FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';"
    ]
    for n in range(tasks):
        lines.append(
            f"INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, "
            f"'t{n:03d}', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = '{pipeline}';"
        )
    lines.append(
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) SELECT "
        f"k.TASK_ID, 'SCRIPT', 'noop.py' FROM CFG_TASKS k JOIN CFG_PIPELINES p ON "
        f"p.PIPELINE_ID = k.PIPELINE_ID WHERE p.PIPELINE_CODE = '{pipeline}';"
    )
    upstreams = {
        "chain": [(f"t{n:03d}", f"t{n - 1:03d}") for n in range(1, tasks)],
        "root": [(f"t{n:03d}", "t000") for n in range(1, tasks)],
        "none": [],
    }[upstream]
    for down, up in upstreams:
        lines.append(
            "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID) SELECT d.TASK_ID, "
            f"u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u WHERE d.TASK_CODE = '{down}' AND "
            f"u.TASK_CODE = '{up}';"
        )
    return "\n".join(lines)


def measure(project: ProjectOnDisk, pipeline: str) -> tuple[float, list[float]]:
    run_id = project.new_run(pipeline)
    supervisor = project.supervisor(default_parallel_tasks=4, poll_seconds=1.0)
    started = time.monotonic()
    status = supervisor.supervise(run_id).status
    wall = time.monotonic() - started
    assert status.value == "SUCCESS", status
    return wall, overheads(project, run_id)


def overheads(project: ProjectOnDisk, run_id: int) -> list[float]:
    """Per task: from ready to its attempt's STARTED_AT."""
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT t.TASK_ID, a.STARTED_AT FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    ready = readiness(project, run_id)
    return [(as_utc(started) - ready[task]).total_seconds() for task, started in rows]  # type: ignore[operator]


def readiness(project: ProjectOnDisk, run_id: int) -> dict[int, datetime]:
    """When each task of the run became ready: its run's admission, or its last upstream's
    outcome recorded (its attempt's ENDED_AT)."""
    with project.engine.read() as conn:
        admitted = as_utc(
            execute(
                conn,
                "SELECT START_DATE FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
                r=run_id,
            ).scalar_one()
        )
        rows = execute(
            conn,
            "SELECT t.TASK_ID, a.ENDED_AT FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
        edges = execute(
            conn,
            "SELECT d.TASK_ID, d.DEPENDS_ON_TASK_ID FROM CFG_TASK_DEPENDENCY d JOIN CFG_TASKS k "
            "ON k.TASK_ID = d.TASK_ID JOIN AUD_TASK_RUN_LOG t ON t.TASK_ID = k.TASK_ID "
            "WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    assert admitted is not None
    ended = {task: as_utc(stamp) or datetime.min for task, stamp in rows}
    upstream: dict[int, list[int]] = {}
    for task, parent in edges:
        upstream.setdefault(task, []).append(parent)
    return {
        task: max(ended[parent] for parent in upstream[task]) if task in upstream else admitted
        for task in ended
    }


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    admin = os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    for dialect in ("sqlite", "postgresql"):
        if dialect == "postgresql" and not admin:
            print("postgresql: skipped, set ETL_CRAFT_TEST_DATABASE_URL")
            continue
        for name, tasks, upstream in (("fan-out", 100, "root"), ("chain", 20, "chain")):
            with tempfile.TemporaryDirectory() as folder:
                database = unique_name("etl_craft_bench") if dialect == "postgresql" else None
                url = None
                if database and admin:
                    url = create_database(admin, database)
                    initialise(url)
                project = make_project(Path(folder) / "etl-craft", url)
                scripts = project.root / "ingestion_scripts"
                scripts.mkdir()
                (scripts / "noop.py").write_text(NOOP)
                project.migrate("0001_bench.sql", shape_sql("bench", tasks, upstream, 4))
                wall, delays = measure(project, "bench")
                project.engine.dispose()
                if database and admin:
                    drop_database(admin, database)
            print(
                f"{dialect:<10} {name:<8} {tasks:>3} tasks: wall {wall:6.1f} s, "
                f"{tasks / wall:5.2f} tasks/s, ready->running "
                f"p50 {percentile(delays, 0.5) * 1000:6.0f} ms, "
                f"p95 {percentile(delays, 0.95) * 1000:6.0f} ms"
            )


if __name__ == "__main__":
    main()


def wait_until_serving(project: ProjectOnDisk, services: int, seconds: float) -> None:
    """Until ``services`` overseers and workers are up (the overseer leads, a worker is ACTIVE),
    so that a benchmark measures dispatch, not start-up."""
    deadline = time.monotonic() + seconds
    query = (
        "SELECT (SELECT count(*) FROM AUD_OVERSEERS WHERE STOPPED_AT IS NULL) "
        "+ (SELECT count(*) FROM AUD_WORKERS WHERE STATUS = 'ACTIVE')"
    )
    while True:
        with project.engine.read() as conn:
            if execute(conn, query).scalar_one() == services:
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"the services did not start within {seconds:g} s; see {project.root}")
        time.sleep(0.05)
