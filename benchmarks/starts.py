"""Starts: what the CLI costs before it does anything, and how soon `etl-craft run` runs a task.

Run by hand (never in CI), from the repository root:

    uv run python benchmarks/starts.py [--repeat 11]

On a fresh project (SQLite Engine DB, DuckDB warehouse, one pipeline of one no-op PYTHON task)
prints, side by side, the median wall time of `python -c pass`, `etl-craft --version` and
`etl-craft status --format json`; then, over as many `etl-craft run` of that pipeline, the
median time from the run's admission (its START_DATE) to its first attempt claimed
(CLAIMED_AT) and to its task process started (STARTED_AT), and the command's wall time.
Figures only mean something on a quiet machine: the load average is printed first, and the CPU
time of each command beside its wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.core.time import as_utc

ETL_CRAFT = str(Path(sys.executable).with_name("etl-craft"))
NOOP = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=0)
"""
PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'one'
  FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, 'noop', 'PYTHON'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'one';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
  SELECT TASK_ID, 'SCRIPT', 'noop.py' FROM CFG_TASKS WHERE TASK_CODE = 'noop';
"""


def wall(argv: Sequence[str], cwd: Path) -> float:
    return timed(argv, cwd)[0]


def timed(argv: Sequence[str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time (user and system, the command's processes that it waited for)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime


def median_ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:7.1f} ms"


def first_attempt(project: ProjectOnDisk, run_key: str) -> tuple[float, float]:
    """Seconds from the run's admission to its first attempt's CLAIMED_AT and STARTED_AT."""
    with project.engine.read() as conn:
        admitted, claimed, started = execute(
            conn,
            "SELECT r.START_DATE, a.CLAIMED_AT, a.STARTED_AT FROM AUD_PIPELINES_RUN_LOG r "
            "JOIN AUD_TASK_RUN_LOG t ON t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID "
            "JOIN AUD_TASK_ATTEMPTS a ON a.TASK_RUN_ID = t.TASK_RUN_ID "
            "WHERE r.RUN_KEY = :k ORDER BY a.ATTEMPT_ID",
            k=run_key,
        ).first()
    admission = as_utc(admitted)
    assert admission is not None
    return (
        (as_utc(claimed) - admission).total_seconds(),  # type: ignore[operator]
        (as_utc(started) - admission).total_seconds(),  # type: ignore[operator]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="starts of each kind (default 11)")
    args = parser.parse_args()
    print(f"load average: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        project = make_project(Path(folder) / "etl-craft")
        scripts = project.root / "ingestion_scripts"
        scripts.mkdir()
        (scripts / "noop.py").write_text(NOOP)
        project.migrate("0001_one.sql", PIPELINE)
        root = project.root
        run = [ETL_CRAFT, "run", "--pipeline", "one"]
        subprocess.run([*run, "--run-key", "warm"], cwd=root, check=True, capture_output=True)
        with project.engine.read() as conn:
            warm = execute(
                conn, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG WHERE RUN_KEY = 'warm'"
            ).scalar_one()
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "etl-craft --version": [ETL_CRAFT, "--version"],
            "etl-craft status --format json": [
                *(ETL_CRAFT, "status", "--pipeline", "one", "--run", str(warm)),
                *("--format", "json"),
            ],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # interleaved: a burst of load hits each alike
            for name, argv in commands.items():
                times[name].append(timed(argv, root))
        for name, pairs in times.items():
            elapsed, cpus = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
            print(
                f"{name:<32} wall median {median_ms(elapsed)} (min {min(elapsed) * 1000:6.1f} ms), "
                f"CPU median {median_ms(cpus)}"
            )
        claimed, started, walls = [], [], []
        for n in range(args.repeat):
            walls.append(wall([*run, "--run-key", f"bench:{n}"], root))
            to_claim, to_start = first_attempt(project, f"bench:{n}")
            claimed.append(to_claim)
            started.append(to_start)
        project.engine.dispose()
    print(
        f"etl-craft run, 1 task on SQLite: admission -> first attempt claimed median "
        f"{median_ms(claimed)}, -> its process started (STARTED_AT) median {median_ms(started)} "
        f"(max {max(started) * 1000:.1f} ms); command wall median {median_ms(walls)}"
    )


if __name__ == "__main__":
    main()
