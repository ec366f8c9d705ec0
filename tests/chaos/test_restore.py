"""A PostgreSQL Engine DB dumped while a run is in flight, restored into a new database: doctor
and reconcile settle it, and a server finishes the run with nothing lost or doubled."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from tests.chaos.harness import attempts, held_pipeline, leases_expired, scalar
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture
def restored_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_restored")
    url = create_database(pg_admin_url, name)
    yield url
    drop_database(pg_admin_url, name)


def _restored(project: ProjectOnDisk, url: str) -> ProjectOnDisk:
    """The same project folder, its Engine DB now the restored database."""
    (project.root / ".env").write_text(f"TEST_ENGINE_URL={url}\n")
    connector = load_connector(project.config, profile=None, environ={"TEST_ENGINE_URL": url})
    return ProjectOnDisk(project.root, connector, EngineDB(url))


def test_a_dump_taken_mid_run_restores_and_the_run_finishes_once(
    pg_project: ProjectOnDisk, processes: Processes, tmp_path: Path, restored_url: str
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(pg_project, started, release)
    processes.start(pg_project, "server")
    run_id = pg_project.queued_run("held")
    wait_for(started.exists, "the held task to start")

    dump = tmp_path / "engine.dump"
    source = _libpq(pg_project.connector.engine_url)
    subprocess.run(["pg_dump", "--format=custom", f"--file={dump}", source], check=True)
    processes.stop_all()  # the old site is gone, its task process with it
    subprocess.run(
        ["pg_restore", "--no-owner", f"--dbname={_libpq(restored_url)}", str(dump)], check=True
    )
    restored = _restored(pg_project, restored_url)
    try:
        doctor = processes.run(restored, "--format", "json", "doctor")
        checks = {check["name"]: check for check in json.loads(doctor.output)["checks"]}
        assert doctor.code == 0, doctor.output
        assert checks["schema"]["status"] == "PASS"
        assert checks["write-guards"]["status"] == "PASS"
        wait_for(lambda: leases_expired(restored), "the dumped leases to expire")
        reconciled = processes.run(restored, "reconcile")
        assert reconciled.code == 0, reconciled.output
        assert attempts(restored, "pull") == [(1, "LOST", "RECONCILER")]

        processes.start(restored, "server")
        wait_for(
            lambda: (
                scalar(
                    restored,
                    "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
                    r=run_id,
                )
                == "SUCCESS"
            ),
            "the restored run to finish",
        )
        assert attempts(restored, "pull") == [(1, "LOST", "RECONCILER"), (2, "SUCCESS", "CHILD")]
        assert attempts(restored, "after") == [(1, "SUCCESS", "CHILD")]
        assert scalar(restored, "SELECT count(*) FROM AUD_PIPELINES_RUN_LOG") == 1
        assert scalar(restored, "SELECT count(*) FROM AUD_TASK_RUN_LOG") == 2
        offset = scalar(restored, "SELECT OFFSET_VALUE FROM AUD_TASK_OFFSETS")
        assert offset.startswith("attempt-")
    finally:
        processes.stop_all()
        restored.engine.dispose()
