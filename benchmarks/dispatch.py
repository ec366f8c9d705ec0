"""Dispatch through the overseer and a worker agent: a 40-task chain and fan-outs.

Run by hand (never in CI), from the repository root, with a PostgreSQL admin URL:

    ETL_CRAFT_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        uv run python benchmarks/dispatch.py [fork] [spawn] [--shape chain] [--repeat 5]

The overseer (`etl-craft server --pool-provider queue`) and one worker (`etl-craft worker`) run
as separate processes on a fresh Engine DB; runs of no-op PYTHON tasks are queued and the
overseer admits them. Shapes: a chain of 40 tasks on 4 slots, a root-fed fan-out (one task
feeds 199) on 16, and independent ones (tasks with no upstream, as in the Airflow comparison):
100 on 4 slots and 400 on 16. Prints,
per task start mode (fork server, fresh interpreter) and shape: end-to-end wall time (run
queued to run ended), tasks/s, ready->running latency (ready: a task's last upstream's outcome
recorded, or its run's admission) both to the attempt recorded RUNNING and to the script's
code running, as the script notes it; the time of each stage of an attempt; and the resident
memory of the task processes sampled while they ran.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run_overhead import overheads, percentile, readiness, shape_sql, wait_until_serving
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.core.enums import TriggerKind
from etl_craft.core.time import as_utc
from etl_craft.enginedb.transitions import create_run

ETL_CRAFT = str(Path(sys.executable).parent / "etl-craft")
# A no-op that notes when its code began (the task processes' working folder is the project).
NOOP = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    began = time.time()
    stamps = Path("task-starts")
    stamps.mkdir(exist_ok=True)
    (stamps / str(context.task_id)).write_text(repr(began))
    return ScriptResult(row_count=0)
"""
# (name, tasks, upstream of each task: see shape_sql, slots: the worker's ingestion slots and
# the pipeline's MAX_PARALLEL_TASKS). The budgets name chain_40, fanout_100 with 4 slots
# and the independent fan-out of 400 with 16.
SHAPES = (
    ("chain", 40, "chain", 4),
    ("fan-out", 200, "root", 16),
    ("fanout_100", 100, "none", 4),
    ("independent", 400, "none", 16),
)
# The benchmark's own polling and sampling share the two cores with what it measures: not too
# often (the figures come from the rows' own times, not from when they were seen).
SAMPLE_SECONDS = 0.05
RSS_SAMPLE_SECONDS = 0.25  # a walk of /proc: rarer than the status polls


def services(project: ProjectOnDisk, start: str, slots: int) -> list[subprocess.Popen[bytes]]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ETL_CRAFT_")}
    env.update(ETL_CRAFT_TASK_START=start, ETL_CRAFT_LOG_LEVEL="WARNING")
    started = []
    for args in (
        ["server", "--pool-provider", "queue"],
        ["worker", "--ingestion-slots", str(slots), "--warehouse-slots", "0"],
    ):
        started.append(
            subprocess.Popen(
                [ETL_CRAFT, *args],
                cwd=project.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=(project.root / f"{args[0]}.log").open("wb"),
            )
        )
    wait_until_serving(project, len(started), 120)
    return started


class RssSampler(threading.Thread):
    """Samples the resident memory of this project's task processes while they run."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root, self.samples, self.stopped = str(root), list[float](), threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(RSS_SAMPLE_SECONDS):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    command = (entry / "cmdline").read_bytes().decode(errors="replace")
                    if "etl_craft.runtime.child" not in command or self.root not in command:
                        continue
                    status = (entry / "status").read_text()
                except OSError:
                    continue
                for line in status.splitlines():
                    if line.startswith("VmRSS:"):
                        self.samples.append(int(line.split()[1]) / 1024)


def stages(project: ProjectOnDisk, run_id: int) -> dict[str, list[float]]:
    """Per attempt: the overseer's reaction (an attempt ended -> the next one queued),
    queued->claimed (the worker's claim, which records RUNNING in the same transaction) and
    claimed->ended (the task process released, the no-op run, its outcome handed over and
    recorded by the worker)."""
    with project.engine.read() as conn:
        found = execute(
            conn,
            "SELECT a.QUEUED_AT, a.CLAIMED_AT, a.ENDED_AT FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    endings = sorted(ended for _, _, ended in found)
    return {
        # The overseer's reaction: the last attempt to end before one was queued, to its queuing.
        "react": [
            (queued - max(ended for ended in endings if ended <= queued)).total_seconds()
            for queued, _, _ in found
            if endings[0] <= queued
        ],
        "claim": [(claimed - queued).total_seconds() for queued, claimed, _ in found],
        "run": [(ended - claimed).total_seconds() for _, claimed, ended in found],
    }


def measure(project: ProjectOnDisk, pipeline: str) -> tuple[float, list[float], list[float]]:
    with project.engine.transaction(TESTER) as conn:
        run_id = create_run(
            conn,
            pipeline_id=project.pipeline_id(pipeline),
            run_key=f"bench:{time.monotonic_ns()}",
            trigger_kind=TriggerKind.MANUAL,
            run_date=date.today(),
            actor=TESTER,
        )
    query = (
        "SELECT STATUS, QUEUED_AT, END_DATE FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r"
    )
    deadline = time.monotonic() + 600
    while True:
        with project.engine.read() as conn:
            status, queued, ended = execute(conn, query, r=run_id).one()
        if status in ("SUCCESS", "FAILED", "CANCELLED", "SKIPPED"):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"run {run_id} of {pipeline} still {status} after 600 s")
        time.sleep(SAMPLE_SECONDS)
    assert status == "SUCCESS", f"run {run_id} of {pipeline} ended {status}"
    wall = (as_utc(ended) - as_utc(queued)).total_seconds()  # type: ignore[operator]
    for stage, values in stages(project, run_id).items():
        print(
            f"    {stage:<5} p50 {percentile(values, 0.5) * 1000:6.1f} ms, "
            f"p99 {percentile(values, 0.99) * 1000:6.1f} ms"
        )
    return wall, overheads(project, run_id), ready_to_running(project, run_id)


def ready_to_running(project: ProjectOnDisk, run_id: int) -> list[float]:
    """Per task: from ready to its script's code running, as the script itself noted it."""
    return [
        float((project.root / "task-starts" / str(task)).read_text()) - ready.timestamp()
        for task, ready in readiness(project, run_id).items()
    ]


@dataclass(frozen=True)
class Result:
    wall: float
    delays: list[float]
    rss: list[float]


def bench(admin: str, start: str, shape: tuple[str, int, str, int]) -> Result:
    """One shape on a fresh Engine DB (task codes repeat across shapes)."""
    name, tasks, upstream, parallel = shape
    with tempfile.TemporaryDirectory() as folder:
        database = unique_name("etl_craft_dispatch")
        url = create_database(admin, database)
        initialise(url)
        project = make_project(Path(folder) / "etl-craft", url)
        scripts = project.root / "ingestion_scripts"
        scripts.mkdir()
        (scripts / "noop.py").write_text(NOOP)
        project.migrate("0001_bench.sql", shape_sql("bench", tasks, upstream, parallel))
        started = services(project, start, parallel)
        sampler = RssSampler(project.root)
        sampler.start()
        try:
            wall, recorded, delays = measure(project, "bench")
        finally:
            sampler.stopped.set()
            for process in started:
                process.send_signal(signal.SIGTERM)
            for process in started:
                process.wait(timeout=60)
            project.engine.dispose()
            drop_database(admin, database)
    print(
        f"{start:<6} {name:<11} {tasks:>3} tasks ({parallel:>2} slots): "
        f"end-to-end {wall:6.2f} s, {tasks / wall:6.1f} tasks/s; ready->RUNNING recorded "
        f"p50 {percentile(recorded, 0.5) * 1000:5.1f} ms; ready->task code running "
        f"p50 {percentile(delays, 0.5) * 1000:5.1f} ms, "
        f"p99 {percentile(delays, 0.99) * 1000:6.1f} ms",
        flush=True,
    )
    return Result(wall, delays, sampler.samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("starts", nargs="*", choices=["fork", "spawn"], default=["fork", "spawn"])
    parser.add_argument("--shape", choices=[shape[0] for shape in SHAPES], action="append")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each shape (default 1)")
    args = parser.parse_args()
    admin = os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    if not admin:
        raise SystemExit("set ETL_CRAFT_TEST_DATABASE_URL to a PostgreSQL admin URL")
    shapes = [shape for shape in SHAPES if not args.shape or shape[0] in args.shape]
    for start in args.starts:
        samples: list[float] = []
        for shape in shapes:
            results = [bench(admin, start, shape) for _ in range(args.repeat)]
            samples += [sample for result in results for sample in result.rss]
            if args.repeat > 1:
                walls = sorted(result.wall for result in results)
                p50s = sorted(percentile(result.delays, 0.5) * 1000 for result in results)
                print(
                    f"{start:<6} {shape[0]:<11} over {args.repeat} runs: end-to-end median "
                    f"{percentile(walls, 0.5):.2f} s (min {walls[0]:.2f}, max {walls[-1]:.2f}); "
                    f"ready->running p50 median {percentile(p50s, 0.5):.1f} ms "
                    f"(min {p50s[0]:.1f}, max {p50s[-1]:.1f})",
                    flush=True,
                )
        if samples:
            print(
                f"{start:<6} task process RSS: median {percentile(samples, 0.5):.1f} MB, "
                f"max {max(samples):.1f} MB ({len(samples)} samples)"
            )


if __name__ == "__main__":
    main()
