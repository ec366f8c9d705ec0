"""CLI latency: how soon the reading commands answer on the demo project, beside `python -c pass`.

Run by hand (never in CI), from the repository root:

    uv run python benchmarks/cli_latency.py [--folder etl-craft-demo] [--repeat 7]

Without --folder it first runs `etl-craft demo` in a temporary folder (a few minutes). Then, on
the demo's SQLite Engine DB, it times `list`, `status`, `history` and `explain` (wall time of the
whole command, interleaved with the floor so a burst of load hits each alike), and how soon
`logs --follow` is attached: from its launch to the first log line on stdout. Each is printed
with its median and minimum wall time, its CPU time and the 300 ms target, beside the import of
SQLAlchemy, its SQLite dialect and PyYAML alone (what a command reading through SQLAlchemy, as
on a PostgreSQL Engine DB, pays before its first row; on SQLite they read through sqlite3); the
load average comes first, since figures only mean something on a quiet machine. For a command
over the target, `python -X importtime` shows where its start goes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ETL_CRAFT = str(Path(sys.executable).with_name("etl-craft"))
TARGET_MS = 300.0
FLOOR_IMPORTS = "import sqlalchemy, sqlalchemy.dialects.sqlite, yaml"


def timed(argv: Sequence[str], cwd: Path) -> tuple[float, float]:
    """Wall time and CPU time (user and system) of one run of ``argv``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime


def attached(argv: Sequence[str], cwd: Path) -> tuple[float, float]:
    """Seconds from the launch of ``argv`` to its first line on stdout; CPU of the whole run."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        assert process.stdout is not None
        process.stdout.readline()
        first_line = time.perf_counter() - started
        process.stdout.read()
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return first_line, now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime


def cli_json(folder: Path, *words: str) -> dict[str, object]:
    done = subprocess.run(
        [ETL_CRAFT, *words, "--format", "json"], cwd=folder, check=True, capture_output=True
    )
    loaded = json.loads(done.stdout)
    assert isinstance(loaded, dict)
    return loaded


def ms(value: float) -> str:
    return f"{value * 1000:7.1f} ms"


def measure(folder: Path, repeat: int) -> None:
    transform = cli_json(folder, "status", "--pipeline", "si_transform")
    run_id = str(transform["run_id"])
    tasks = transform["tasks"]
    assert isinstance(tasks, list)
    attempt = next(str(task["attempt_id"]) for task in tasks if task.get("attempt_id"))
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        # What a reading command would import before it reads a row through SQLAlchemy (on
        # PostgreSQL); on this demo's SQLite Engine DB they read through sqlite3 instead.
        "python: SQLAlchemy + SQLite + PyYAML": [sys.executable, "-c", FLOOR_IMPORTS],
        "etl-craft --version": [ETL_CRAFT, "--version"],
        "etl-craft list": [ETL_CRAFT, "list"],
        "etl-craft status": [ETL_CRAFT, "status", "--pipeline", "si_transform"],
        "etl-craft history": [ETL_CRAFT, "history", "--pipeline", "si_client_gamma"],
        "etl-craft explain": [
            *(ETL_CRAFT, "explain", "--pipeline", "si_transform"),
            *("--task", "notify_failure", "--run", run_id),
        ],
    }
    follow = [ETL_CRAFT, "logs", "--follow", "--attempt", attempt]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    times["etl-craft logs --follow (attached)"] = []
    for _ in range(repeat):  # interleaved: a burst of load hits each alike
        for name, argv in commands.items():
            times[name].append(timed(argv, folder))
        times["etl-craft logs --follow (attached)"].append(attached(follow, folder))
    floor = statistics.median(pair[0] for pair in times["python -c pass"])
    print(f"{'command':<36} {'wall median':>11} {'wall min':>10} {'CPU median':>11}  target")
    for name, pairs in times.items():
        walls, cpus = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
        median = statistics.median(walls)
        verdict = (
            "" if name.startswith("python") else ("met" if median * 1000 <= TARGET_MS else "OVER")
        )
        print(
            f"{name:<36} {ms(median):>11} {ms(min(walls)):>10} "
            f"{ms(statistics.median(cpus)):>11}  {verdict} "
            f"({median / floor:4.1f}x python -c pass)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="a demo folder already run (default: run one)")
    parser.add_argument("--repeat", type=int, default=7, help="runs of each command (default 7)")
    args = parser.parse_args()
    print(f"load average: {', '.join(f'{load:.2f}' for load in os.getloadavg())}")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # An installed package has its bytecode compiled; without it every import compiles
        # its source again, which triples these figures.
        print(
            "PYTHONDONTWRITEBYTECODE is set: imports compile from source each time, unlike an "
            "install; unset it (and `uv sync --compile-bytecode`) for figures that mean something"
        )
    if args.folder is not None:
        measure(args.folder.resolve(), args.repeat)
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "demo"
        subprocess.run(
            [ETL_CRAFT, "demo", "--folder", str(folder)], check=True, stdout=subprocess.DEVNULL
        )
        measure(folder, args.repeat)


if __name__ == "__main__":
    main()
