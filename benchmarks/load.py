"""The load benchmark on one machine: projects × pipelines × tasks on one PostgreSQL Engine DB.

Run by hand (never in CI), from the repository root, with a PostgreSQL admin URL:

    ETL_CRAFT_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        uv run python benchmarks/load.py burst            # 500 pipelines, 455 runs at once
    ... uv run python benchmarks/load.py clustered --projects 100 --pipelines 100
    ... uv run python benchmarks/load.py spread --projects 100 --pipelines 100

The overseer (`etl-craft server --pool-provider queue`) and one worker (`etl-craft worker`)
run as separate processes on a fresh Engine DB holding projects × pipelines × no-op PYTHON
tasks. The benchmark plays the clock, with time compressed: each pipeline has one daily tick
(clustered: on the hour, 1/24 of the pipelines at each hour, so midnight is a cron cluster;
spread: evenly over the day), a day lasts --day-seconds, and the ticks of the first --hours of
the day are created as the schedule would create them (TriggerKind SCHEDULE, QUEUED). `burst`
creates --runs runs in one transaction instead. Once every run ended, it prints:

- admission latency (run QUEUED_AT to START_DATE) p50/p99, and from the commit of the
  transaction that created the run (QUEUED_AT is that transaction's start; creating hundreds
  of runs in one takes a while, during which the overseer cannot see them);
- queue age (attempt QUEUED_AT to CLAIMED_AT) p50/p99 of attempts queued while a slot was free;
- overseer pass time p50/p99 (each `run_pass`, timed inside the overseer process), also
  without its housekeeping (leases, workers, blocked pipelines, schedules: once a poll
  interval), and the housekeeping's own;
- tasks/s (attempts ended over the time from the first run queued to the last attempt ended);
- Engine DB rows and bytes per run (what every AUD_ table, indexes included, grew by);
- CPU (share of one core over the measurement) and the largest PSS of the overseer and the
  worker processes (task processes excluded).

The figures come from the rows' own times; the benchmark's polling shares the machine with what
it measures, so it polls seldom.
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
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.run_overhead import NOOP, percentile, wait_until_serving
from tests.fixtures.databases import create_database, drop_database, initialise, unique_name
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.cli.main import main as etl_craft
from etl_craft.core.enums import TriggerKind
from etl_craft.core.time import as_utc
from etl_craft.enginedb.transitions import create_run
from etl_craft_overseer.overseer import Overseer

POLL_SECONDS = 1.0
SAMPLE_SECONDS = 0.5
SERVE = "serve-timed"  # the overseer, with each pass timed (an argument of this script)


def metadata_sql(projects: int, pipelines: int, tasks: int, fan: str) -> str:
    """Projects (``default`` and p001...) × pipelines × no-op tasks, set-based."""
    edges = {
        "root-fed": "SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d JOIN CFG_TASKS u "
        "ON u.PIPELINE_ID = d.PIPELINE_ID AND u.TASK_CODE = 't00' WHERE d.TASK_CODE <> 't00'",
        "independent": None,
    }[fan]
    lines = [
        "INSERT INTO CFG_PROJECTS (PROJECT_CODE) SELECT 'p' || lpad(CAST(g AS TEXT), 3, '0') "
        f"FROM generate_series(1, {projects - 1}) AS g;",
        "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, OVERLAP_POLICY) SELECT "
        "p.PROJECT_ID, 'l' || lpad(CAST(g AS TEXT), 4, '0'), 'QUEUE' FROM CFG_PROJECTS p "
        f"CROSS JOIN generate_series(0, {pipelines - 1}) AS g;",
        "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT l.PIPELINE_ID, "
        "'t' || lpad(CAST(g AS TEXT), 2, '0'), 'PYTHON' FROM CFG_PIPELINES l "
        f"CROSS JOIN generate_series(0, {tasks - 1}) AS g;",
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
        "SELECT TASK_ID, 'SCRIPT', 'noop.py' FROM CFG_TASKS;",
    ]
    if edges:
        lines.append(f"INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID) {edges};")
    return "\n".join(lines)


class Process:
    """One service process: its CPU time and its largest PSS while sampled."""

    def __init__(self, name: str, popen: subprocess.Popen[bytes]) -> None:
        self.name, self.popen, self.pss_kb = name, popen, 0
        self.cpu_start = 0.0

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample(self) -> None:
        try:
            rollup = Path(f"/proc/{self.popen.pid}/smaps_rollup").read_text()
        except OSError:
            return
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                self.pss_kb = max(self.pss_kb, int(line.split()[1]))


def services(project: ProjectOnDisk, slots: int, passes: Path) -> list[Process]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ETL_CRAFT_")}
    env.update(ETL_CRAFT_LOG_LEVEL="WARNING")
    commands = {
        "overseer": [
            sys.executable,
            str(Path(__file__).resolve()),
            SERVE,
            str(passes),
            "server",
            "--pool-provider",
            "queue",
        ],
        "worker": [
            str(Path(sys.executable).parent / "etl-craft"),
            "worker",
            "--ingestion-slots",
            str(slots),
            "--warehouse-slots",
            "0",
        ],
    }
    started = [
        Process(
            name,
            subprocess.Popen(
                command,
                cwd=project.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=(project.root / f"{name}.log").open("wb"),
            ),
        )
        for name, command in commands.items()
    ]
    wait_until_serving(project, len(started), 180)
    return started


def first_passes(passes: Path) -> None:
    """Until the overseer ended its first passes, which judge every pipeline's metadata and
    catch up on schedules: start-up, not load."""
    deadline = time.monotonic() + 600
    while not passes.exists() or len(passes.read_text().splitlines()) < 2:
        if time.monotonic() > deadline:
            raise SystemExit("the overseer ended no pass within 600 s")
        time.sleep(POLL_SECONDS)


class Sampler(threading.Thread):
    def __init__(self, processes: list[Process]) -> None:
        super().__init__(daemon=True)
        self.processes, self.stopped = processes, threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(SAMPLE_SECONDS):
            for process in self.processes:
                process.sample()


@dataclass
class Ticks:
    """When each pipeline's runs are created, in seconds from the start."""

    at: list[tuple[float, list[int]]] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(len(ids) for _, ids in self.at)


def ticks(args: argparse.Namespace, pipeline_ids: list[int]) -> Ticks:
    if args.shape == "burst":
        return Ticks([(0.0, pipeline_ids[: args.runs])])
    by_minute: dict[int, list[int]] = {}
    total = len(pipeline_ids)
    for index, pipeline_id in enumerate(pipeline_ids):
        # Clustered: one pipeline in 24 on each hour; spread: evenly over the day's minutes.
        minute = (index % 24) * 60 if args.shape == "clustered" else index * 1440 // total
        if minute < args.hours * 60:
            by_minute.setdefault(minute, []).append(pipeline_id)
    scale = args.day_seconds / 1440
    return Ticks([(minute * scale, ids) for minute, ids in sorted(by_minute.items())])


def create_runs(
    project: ProjectOnDisk, pipeline_ids: list[int], tick: datetime
) -> dict[int, datetime]:
    """One transaction creating the tick's runs; each run's id, and when the commit returned
    (the runs' QUEUED_AT is the transaction's start, before a big one is visible)."""
    key = f"schedule:{tick.isoformat()}"
    with project.engine.transaction(TESTER) as conn:
        created = [
            create_run(
                conn,
                pipeline_id=pipeline_id,
                run_key=key,
                trigger_kind=TriggerKind.SCHEDULE,
                run_date=tick.date(),
                actor=TESTER,
            )
            for pipeline_id in pipeline_ids
        ]
    committed = datetime.now(UTC)
    return dict.fromkeys(created, committed)


def wait_for_runs(project: ProjectOnDisk, expected: int, timeout: float) -> None:
    query = (
        "SELECT count(*) FROM AUD_PIPELINES_RUN_LOG "
        "WHERE STATUS IN ('SUCCESS', 'FAILED', 'CANCELLED', 'SKIPPED')"
    )
    deadline = time.monotonic() + timeout
    while True:
        with project.engine.read() as conn:
            ended = int(execute(conn, query).scalar_one())
        if ended >= expected:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"only {ended} of {expected} runs ended within {timeout:.0f} s")
        time.sleep(POLL_SECONDS)


def queue_ages_while_free(rows: list[Any], slots: int) -> list[float]:
    """Queue age of the attempts queued while a slot was free for them: fewer than ``slots``
    attempts were then claimed, or queued before them and not yet claimed."""
    events: list[tuple[datetime, int, float]] = []  # (when, 0 ended / 1 queued, queue age)
    for queued, claimed, ended in rows:
        age = (as_utc(claimed) - as_utc(queued)).total_seconds()  # type: ignore[operator]
        events.append((as_utc(ended), 0, 0.0))  # type: ignore[arg-type]
        events.append((as_utc(queued), 1, age))  # type: ignore[arg-type]
    ages, demand = [], 0
    for _, queued, age in sorted(events):
        if not queued:
            demand -= 1
            continue
        if demand < slots:
            ages.append(age)
        demand += 1
    return ages


def footprint(project: ProjectOnDisk) -> tuple[int, int]:
    """Rows and bytes (indexes included) of every AUD_ table."""
    with project.engine.read() as conn:
        tables = [
            str(name)
            for (name,) in execute(
                conn,
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND upper(table_name) LIKE 'AUD\\_%'",
            ).all()
        ]
        rows = sum(int(execute(conn, f"SELECT count(*) FROM {t}").scalar_one()) for t in tables)
        size = sum(
            int(execute(conn, "SELECT pg_total_relation_size(:t)", t=t).scalar_one())
            for t in tables
        )
    return rows, size


def report(project: ProjectOnDisk, args: argparse.Namespace, processes: list[Process]) -> None:
    with project.engine.read() as conn:
        runs = execute(
            conn,
            "SELECT QUEUED_AT, START_DATE, STATUS, PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG",
        ).all()
        attempts = execute(
            conn,
            "SELECT QUEUED_AT, CLAIMED_AT, ENDED_AT FROM AUD_TASK_ATTEMPTS "
            "WHERE CLAIMED_AT IS NOT NULL AND ENDED_AT IS NOT NULL",
        ).all()
    statuses = sorted({str(status) for _, _, status, _ in runs})
    admitted = [
        (as_utc(start) - as_utc(queued)).total_seconds()  # type: ignore[operator]
        for queued, start, _, _ in runs
        if start is not None
    ]
    # From the commit that made the run visible: what the overseer alone takes.
    after_commit = [
        max(0.0, (as_utc(start) - args.visible[run_id]).total_seconds())
        for _, start, _, run_id in runs
        if start is not None
    ]
    ages = queue_ages_while_free(attempts, args.slots)
    first = min(queued for queued, _, _, _ in runs)
    last = max(ended for _, _, ended in attempts)
    wall = (last - first).total_seconds()
    timed = [
        (float(took), float(housekeeping))
        for at, took, housekeeping in (
            line.split() for line in args.passes.read_text().splitlines()
        )
        if float(at) >= args.since
    ]
    passes = [took for took, _ in timed]
    without = [took - housekeeping for took, housekeeping in timed]
    housekeeping = [housekeeping for _, housekeeping in timed if housekeeping]
    rows, size = footprint(project)
    rows, size = rows - args.footprint[0], size - args.footprint[1]
    ms = 1000.0
    print(f"  runs {len(runs)} ({', '.join(statuses)}), attempts {len(attempts)}, {wall:.1f} s")
    print(
        f"  admission latency p50 {percentile(admitted, 0.5) * ms:7.1f} ms, "
        f"p99 {percentile(admitted, 0.99) * ms:7.1f} ms, max {max(admitted) * ms:7.1f} ms; "
        f"from the creating commit p50 {percentile(after_commit, 0.5) * ms:7.1f} ms, "
        f"p99 {percentile(after_commit, 0.99) * ms:7.1f} ms"
    )
    if ages:
        print(
            f"  queue age while slots free ({len(ages)} attempts) "
            f"p50 {percentile(ages, 0.5) * ms:7.1f} ms, p99 {percentile(ages, 0.99) * ms:7.1f} ms"
        )
    else:
        print("  queue age while slots free: no attempt was queued while a slot was free")
    print(
        f"  overseer pass ({len(passes)} passes) p50 {percentile(passes, 0.5) * ms:7.1f} ms, "
        f"p99 {percentile(passes, 0.99) * ms:7.1f} ms, max {max(passes) * ms:7.1f} ms"
    )
    print(
        f"    without housekeeping p50 {percentile(without, 0.5) * ms:7.1f} ms, "
        f"p99 {percentile(without, 0.99) * ms:7.1f} ms; housekeeping ({len(housekeeping)} "
        f"passes) p50 {percentile(housekeeping, 0.5) * ms:7.1f} ms, "
        f"p99 {percentile(housekeeping, 0.99) * ms:7.1f} ms"
    )
    print(f"  tasks/s {len(attempts) / wall:6.1f}")
    print(
        f"  Engine DB per run: {rows / len(runs):6.1f} rows, {size / len(runs) / 1024:6.1f} KiB "
        f"(what the AUD_ tables, indexes included, grew by)"
    )
    for process in processes:
        share = (process.cpu_seconds() - process.cpu_start) / args.measured * 100
        print(
            f"  {process.name:<8} CPU {share:5.1f}% of a core, PSS max "
            f"{process.pss_kb / 1024:6.1f} MiB"
        )


def bench(admin: str, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        database = unique_name("etl_craft_load")
        url = create_database(admin, database)
        try:
            initialise(url)
            project = make_project(Path(folder) / "etl-craft", url)
            scripts = project.root / "ingestion_scripts"
            scripts.mkdir()
            (scripts / "noop.py").write_text(NOOP)
            project.migrate(
                "0001_load.sql", metadata_sql(args.projects, args.pipelines, args.tasks, args.fan)
            )
            with project.engine.read() as conn:
                pipeline_ids = [
                    int(pipeline_id)
                    for (pipeline_id,) in execute(
                        conn, "SELECT PIPELINE_ID FROM CFG_PIPELINES ORDER BY PIPELINE_ID"
                    ).all()
                ]
            plan = ticks(args, pipeline_ids)
            args.passes = Path(folder) / "passes.txt"
            processes = services(project, args.slots, args.passes)
            sampler = Sampler(processes)
            try:
                first_passes(args.passes)
                args.footprint = footprint(project)  # the metadata's own changes, and such
                args.since = time.time()
                for process in processes:
                    process.cpu_start = process.cpu_seconds()
                sampler.start()
                started = time.monotonic()
                day = datetime.combine(date.today(), datetime.min.time(), UTC)
                args.visible = {}
                for offset, ids in plan.at:
                    time.sleep(max(0.0, started + offset - time.monotonic()))
                    tick = day + timedelta(days=args.day_seconds and offset / args.day_seconds)
                    args.visible.update(create_runs(project, ids, tick))
                wait_for_runs(project, plan.runs, args.timeout)
                args.measured = time.monotonic() - started
                sampler.stopped.set()
                report(project, args, processes)
            finally:
                for process in processes:
                    process.popen.send_signal(signal.SIGTERM)
                for process in processes:
                    process.popen.wait(timeout=120)
                project.engine.dispose()
        finally:
            drop_database(admin, database)


def serve_timed(passes: Path, argv: list[str]) -> None:
    """`etl-craft <argv>` in this process, appending to ``passes`` each overseer pass's time
    and the part of it its housekeeping took (0 in the passes without)."""
    untimed_pass, untimed_housekeeping = Overseer.run_pass, Overseer._housekeeping
    out = passes.open("a", buffering=1)
    housekeeping = [0.0]

    def run_pass(self: Overseer, *, full: bool = True) -> None:
        housekeeping[0] = 0.0
        began = time.perf_counter()
        untimed_pass(self, full=full)
        out.write(f"{time.time():.3f} {time.perf_counter() - began:.6f} {housekeeping[0]:.6f}\n")

    def timed_housekeeping(self: Overseer) -> None:
        began = time.perf_counter()
        untimed_housekeeping(self)
        housekeeping[0] = time.perf_counter() - began

    Overseer.run_pass = run_pass  # type: ignore[method-assign]
    Overseer._housekeeping = timed_housekeeping  # type: ignore[method-assign]
    etl_craft(argv)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == SERVE:
        serve_timed(Path(sys.argv[2]), sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=["burst", "clustered", "spread"])
    parser.add_argument("--projects", type=int, default=1)
    parser.add_argument("--pipelines", type=int, default=500, help="per project")
    parser.add_argument("--tasks", type=int, default=10, help="per pipeline")
    parser.add_argument("--fan", choices=["root-fed", "independent"], default="independent")
    parser.add_argument("--runs", type=int, default=455, help="burst: runs queued at once")
    parser.add_argument("--slots", type=int, default=16, help="the worker's ingestion slots")
    parser.add_argument("--day-seconds", type=float, default=1440.0, help="a compressed day")
    parser.add_argument("--hours", type=float, default=1.0, help="hours of the day to run")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    admin = os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    if not admin:
        raise SystemExit("set ETL_CRAFT_TEST_DATABASE_URL to a PostgreSQL admin URL")
    for round_ in range(args.repeat):
        average = Path("/proc/loadavg").read_text().split()[0]
        print(
            f"{args.shape}: {args.projects} projects × {args.pipelines} pipelines × "
            f"{args.tasks} tasks ({args.fan}), {args.slots} slots, round {round_ + 1}, "
            f"load average {average}",
            flush=True,
        )
        bench(admin, args)


if __name__ == "__main__":
    main()
