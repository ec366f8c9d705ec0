"""CPU per no-op task on the fork-server path: the dispatch benchmark's independent shape, with
the CPU time of the worker, its fork server and the fork server's task processes.

Run by hand (never in CI), from the repository root, with a PostgreSQL admin URL:

    ETL_CRAFT_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        uv run python benchmarks/task_cpu.py [--repeat 3] [--shape independent]

The fork server reaps its task processes, so their CPU time is its children's time
(/proc/<pid>/stat cutime and cstime); its own is its utime and stime. Both are read when the
run is queued and when it has ended, while the services still run. ``--py-spy PATH OUT``
records raw stacks of the fork server and the task processes it catches.

Figures on a 2-core VM, 200 independent no-op tasks on 16 slots, medians of interleaved runs
(tasks/s swings from 28 to 60 between runs on a shared machine; CPU per task is steadier):
fork server 4.2-4.5 ms per task, task processes 3.3 ms user + 8-10 ms system and about
1,480 minor faults each; the worker 6 ms, the overseer 3.5 ms. A task process spends, from
its fork to os._exit, about 3 ms user and 4.3 ms system (the rest of its system time is the
fork and the teardown of its ~60 MB of inherited anonymous memory): 1.2 ms taking its request
(log, environment, title), 1.9 ms loading and running the script, 1 ms handing the outcome
over, 0.5-0.6 ms each for decoding the invocation, logging and masked output.
Measured and kept: a prepared configuration costs the fork server two stats per release
instead of swapping its environment (fork server 4.3 -> 3.8 ms per task); a task process sets
only the environment entries that differ from the server's (about 35 fewer page faults).
Measured and dropped: gc.freeze() in the server before it forks (no change in either's CPU;
slightly more faults): CPython 3.11's young collections do not write to old objects.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import dispatch
from benchmarks.run_overhead import percentile
from tests.fixtures.projects import ProjectOnDisk

TICK = 1 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Times:
    user: float
    system: float
    children_user: float
    children_system: float
    faults: int
    children_faults: int


def times(pid: int) -> Times:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command: state is field 3; utime, stime, cutime, cstime are fields 14 to 17.
    user, system, c_user, c_system = (int(value) * TICK for value in fields[11:15])
    # Minor page faults (field 10) and those of the reaped children (field 11).
    return Times(user, system, c_user, c_system, int(fields[7]), int(fields[8]))


def processes(root: Path) -> dict[str, int]:
    """The worker, the overseer and the worker's fork server of the project at ``root``."""
    table: list[tuple[int, int, list[bytes], str]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = str((entry / "cwd").readlink().resolve())
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        table.append((int(entry.name), parent, command, cwd))
    here = str(root.resolve())
    found = {}
    for pid, _, command, cwd in table:
        if cwd == here and b"--ingestion-slots" in command:
            found["worker"] = pid
        elif cwd == here and b"--pool-provider" in command:
            found["overseer"] = pid
    for pid, parent, command, _ in table:
        if parent == found.get("worker") and any(b"runtime.forkserver" in a for a in command):
            found["forkserver"] = pid
    return found


PROFILE: list[str] = []
SPY = ("-r", "250", "-f", "raw", "-o")
RESULTS: list[dict[str, float]] = []
_measure = dispatch.measure


def measure(project: ProjectOnDisk, pipeline: str) -> tuple[float, list[float], list[float]]:
    pids = processes(project.root)
    profiler = None
    if PROFILE and "forkserver" in pids:
        # py-spy (https://github.com/benfred/py-spy), if installed: raw stacks of the fork server
        # and its task processes, for flamegraph.pl.
        profiler = subprocess.Popen(
            [
                PROFILE[0],
                "record",
                "-p",
                str(pids["forkserver"]),
                "--subprocesses",
                *SPY,
                PROFILE[1],
            ],
            stdout=subprocess.DEVNULL,
        )
        time.sleep(1)
    before = {name: times(pid) for name, pid in pids.items() if pid}
    wall, recorded, delays = _measure(project, pipeline)
    after = {name: times(pid) for name, pid in pids.items() if pid}
    if profiler is not None:
        profiler.send_signal(signal.SIGINT)
        profiler.wait()
    tasks = len(recorded)
    cpu: dict[str, float] = {"tasks/s": tasks / wall}
    for name, then in before.items():
        spent = after[name].user + after[name].system - then.user - then.system
        cpu[f"{name} ms"] = spent / tasks * 1000
    if "forkserver" in before:
        b, a = before["forkserver"], after["forkserver"]
        cpu["children user ms"] = (a.children_user - b.children_user) / tasks * 1000
        cpu["children sys ms"] = (a.children_system - b.children_system) / tasks * 1000
        cpu["server faults"] = (a.faults - b.faults) / tasks
        cpu["children faults"] = (a.children_faults - b.children_faults) / tasks
    print("    cpu per task: " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)
    RESULTS.append(cpu)
    return wall, recorded, delays


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="independent")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--py-spy", nargs=2, metavar=("PY_SPY", "OUTPUT"), help="profile")
    args = parser.parse_args()
    PROFILE.extend(args.py_spy or [])
    admin = os.environ.get("ETL_CRAFT_TEST_DATABASE_URL")
    if not admin:
        raise SystemExit("set ETL_CRAFT_TEST_DATABASE_URL to a PostgreSQL admin URL")
    dispatch.measure = measure
    shape = next(shape for shape in dispatch.SHAPES if shape[0] == args.shape)
    for _ in range(args.repeat):
        dispatch.bench(admin, "fork", shape)
    print(
        f"median over {len(RESULTS)} runs: "
        + ", ".join(
            f"{key} {percentile(sorted(r[key] for r in RESULTS), 0.5):.1f}" for key in RESULTS[0]
        )
    )


if __name__ == "__main__":
    main()
