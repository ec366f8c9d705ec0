"""One overseer leads, always: through an Engine DB restart with a leader and a standby running
and a third server started after it, through a lock file removed under an SQLite leader, and
for servers and workers started while the Engine DB is away.

A watcher reads the Engine DB every 100 ms, around the proxy the services go through, for the
whole scene: the leadership epoch and who holds it, who holds the leadership lock, and every
overseer's heartbeat. Leadership is judged from those rows: at no instant do two processes hold
the lock, and no overseer beats while another holds the epoch (a heartbeat is a leader-only
write like ticks and admission, refused to a former leader by the Engine DB)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import rows
from tests.chaos.proxy import EngineProxy, cut_off
from tests.fixtures.processes import Processes, scripted_project
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.overseer.test_server import pair_pipeline, run_status

SAMPLE_SECONDS = 0.1
NO_METRICS = ("--metrics-port", "0")


@dataclass(frozen=True)
class Sample:
    epoch: int | None
    holder: str | None
    taken_at: datetime | None
    lock_holders: int  # backends holding the overseer lock (PostgreSQL; -1 on SQLite)
    beats: tuple[tuple[str, datetime], ...]  # each live overseer's last heartbeat


@dataclass
class Watcher:
    """Samples the leadership rows every SAMPLE_SECONDS on a connection of its own."""

    url: str
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._engine = create_engine(make_url(self.url).set(drivername=_driver(self.url)))
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.samples.append(self._sample())

    def _sample(self) -> Sample:
        with self._engine.connect() as conn:
            tenure = conn.execute(
                text("SELECT EPOCH, OVERSEER_ID, TAKEN_AT FROM AUD_LEADERSHIP")
            ).first()
            beats = conn.execute(
                text("SELECT OVERSEER_ID, HEARTBEAT_AT FROM AUD_OVERSEERS WHERE STOPPED_AT IS NULL")
            ).all()
            holders = -1
            if conn.dialect.name == "postgresql":
                holders = int(
                    conn.execute(
                        text(
                            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                            "AND granted AND database = (SELECT oid FROM pg_database "
                            "WHERE datname = current_database())"
                        )
                    ).scalar_one()
                )
        return Sample(
            None if tenure is None else int(tenure[0]),
            None if tenure is None else str(tenure[1]),
            None if tenure is None else _instant(tenure[2]),
            holders,
            tuple((str(overseer), _instant(beat)) for overseer, beat in beats),
        )

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._engine.dispose()

    def leader(self) -> str | None:
        return self.samples[-1].holder if self.samples else None

    def epochs(self) -> list[tuple[int, str, datetime]]:
        seen = {
            (sample.epoch, sample.holder, sample.taken_at)
            for sample in self.samples
            if sample.epoch is not None
        }
        return sorted((e, h, t) for e, h, t in seen if h is not None and t is not None)

    def assert_one_leader_at_every_instant(self) -> None:
        assert self.samples, "the watcher took no sample"
        assert all(sample.lock_holders <= 1 for sample in self.samples)
        epochs = self.epochs()
        # Every heartbeat seen was written while its overseer held the current epoch.
        beats = {beat for sample in self.samples for beat in sample.beats}
        for overseer, at in beats:
            current = [holder for _, holder, taken in epochs if taken <= at]
            assert current, (overseer, at, epochs)
            assert current[-1] == overseer, (overseer, at, epochs)


def _driver(url: str) -> str:
    return "postgresql+psycopg" if url.startswith("postgres") else "sqlite"


def _instant(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value
    return datetime.fromisoformat(str(value))


def _output(processes: Processes, process: Any) -> str:
    return (processes.folder / f"etl-craft-{processes.started.index(process)}.out").read_text()


def _pid_of(overseer_id: str | None) -> int | None:
    return None if overseer_id is None else int(overseer_id.split(":")[1])


@contextmanager
def _proxied(pg_fresh_url: str, tmp_path: Path) -> Iterator[tuple[EngineProxy, ProjectOnDisk]]:
    target = make_url(pg_fresh_url)
    proxy = EngineProxy((target.host or "127.0.0.1", target.port or 5432))
    project = scripted_project(tmp_path / "etl-craft", pg_fresh_url)
    try:
        yield proxy, project
    finally:
        proxy.close()
        project.engine.dispose()


def _quick_run_succeeds_under(project: ProjectOnDisk, leader: str) -> None:
    run_id = project.queued_run("pair")
    wait_for(lambda: run_status(project, run_id) == "SUCCESS", "the run to succeed", 120)
    owners = {
        str(owner)
        for (owner,) in rows(
            project,
            "SELECT a.OWNER_ID FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        )
    }
    assert owners == {leader}


@pytest.mark.postgres
@pytest.mark.parametrize("seconds", [3, 30], ids=["3s", "30s"])
def test_after_an_engine_db_restart_exactly_one_overseer_leads(
    seconds: int, pg_fresh_url: str, tmp_path: Path, processes: Processes
) -> None:
    """3 s: the leader and the standby race for the lock once it is back, and either may win.
    30 s: the leader is paused through the restart, so the standby takes the lead; resumed,
    the former leader finds its epoch gone and stands by."""
    with _proxied(pg_fresh_url, tmp_path) as (proxy, project), Watcher(pg_fresh_url) as watcher:
        pair_pipeline(project)
        via_proxy = {"engine_url": proxy.url(pg_fresh_url)}
        first = processes.start(project, "server", *NO_METRICS, settings=via_proxy)
        wait_for(lambda: _pid_of(watcher.leader()) == first.pid, "the first server to lead")
        standby = processes.start(project, "server", "--standby", *NO_METRICS, settings=via_proxy)
        wait_for(lambda: "standing by" in _output(processes, standby), "the standby to wait")
        paused = seconds >= 30
        if paused:
            first.send_signal(signal.SIGSTOP)
        with cut_off(proxy):
            time.sleep(seconds)  # the outage itself; nothing is asserted from its length
            assert standby.poll() is None, _output(processes, standby)
        wait_for(
            lambda: watcher.samples and (watcher.samples[-1].epoch or 0) >= 2,
            "a leader after the restart",
            60,
        )
        if paused:
            assert _pid_of(watcher.leader()) == standby.pid
            first.send_signal(signal.SIGCONT)
            wait_for(
                lambda: "no longer leads" in _output(processes, first),
                "the former leader to stand by",
                60,
            )
        third = processes.start(project, "server", *NO_METRICS, settings=via_proxy)
        refused = processes.finish(third)
        leader = watcher.leader()
        assert leader is not None
        assert refused.code == ExitCode.RUN_STATE, refused.output
        assert leader in refused.output
        _quick_run_succeeds_under(project, leader)
        assert first.poll() is None
        assert standby.poll() is None
    watcher.assert_one_leader_at_every_instant()
    assert len(watcher.epochs()) >= 2


def test_a_lock_file_removed_under_an_sqlite_leader_yields_no_second_leader(
    sqlite_project: ProjectOnDisk, processes: Processes
) -> None:
    project = sqlite_project
    pair_pipeline(project)
    url = f"sqlite:///{project.root / 'engine.db'}"
    with Watcher(url) as watcher:
        first = processes.start(project, "server")
        wait_for(lambda: _pid_of(watcher.leader()) == first.pid, "the first server to lead")
        # Paused, so that the second server finds the path free before the first looks again.
        first.send_signal(signal.SIGSTOP)
        (project.root / "engine.db.overseer.lock").unlink()
        second = processes.start(project, "server")
        wait_for(lambda: _pid_of(watcher.leader()) == second.pid, "the second server to lead")
        first.send_signal(signal.SIGCONT)
        wait_for(
            lambda: "no longer leads" in _output(processes, first),
            "the first server to find it no longer leads",
        )
        _quick_run_succeeds_under(project, str(watcher.leader()))
        assert first.poll() is None
        assert second.poll() is None
    watcher.assert_one_leader_at_every_instant()


@pytest.mark.postgres
def test_a_standby_and_a_worker_started_during_an_outage_come_up_when_it_ends(
    pg_fresh_url: str, tmp_path: Path, processes: Processes
) -> None:
    with _proxied(pg_fresh_url, tmp_path) as (proxy, project):
        pair_pipeline(project)
        via_proxy = {"engine_url": proxy.url(pg_fresh_url)}
        with cut_off(proxy):
            server = processes.start(
                project,
                "server",
                "--standby",
                "--pool-provider",
                "queue",
                *NO_METRICS,
                settings=via_proxy,
            )
            worker = processes.start(project, "worker", *NO_METRICS, settings=via_proxy)
            wait_for(
                lambda: (
                    "waits for the Engine DB" in _output(processes, worker)
                    and "waits for the Engine DB" in _output(processes, server)
                ),
                "both to say they wait for the Engine DB",
            )
            assert server.poll() is None
        assert worker.poll() is None
        wait_for(
            lambda: rows(project, "SELECT OVERSEER_ID FROM AUD_LEADERSHIP"),
            "the server to lead",
            60,
        )
        [(leader,)] = rows(project, "SELECT OVERSEER_ID FROM AUD_LEADERSHIP")
        assert _pid_of(str(leader)) == server.pid
        wait_for(
            lambda: rows(project, "SELECT WORKER_ID FROM AUD_WORKERS WHERE PID = :p", p=worker.pid),
            "the worker to register",
            60,
        )
        run_id = project.queued_run("pair")
        wait_for(lambda: run_status(project, run_id) == "SUCCESS", "the run to succeed", 120)


def test_a_worker_that_gives_up_on_an_unreachable_engine_db_exits_saying_so(
    sqlite_project: ProjectOnDisk, processes: Processes
) -> None:
    settings = {
        "engine_url": "postgresql://nobody@127.0.0.1:9/none",  # nothing listens on port 9
        "engine_give_up_seconds": "2",
    }
    done = processes.finish(
        processes.start(sqlite_project, "worker", *NO_METRICS, settings=settings)
    )
    assert done.code == ExitCode.ENGINE_DB, done.output
    assert "gave up after" in done.output
    assert "ETL_CRAFT_ENGINE_GIVE_UP_SECONDS=2" in done.output
