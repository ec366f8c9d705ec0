"""etl-craft server refuses an Engine DB migrated to another schema version, naming both."""

from __future__ import annotations

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import scalar
from tests.fixtures.metadata import record_newer_schema
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk


def test_a_server_refuses_an_engine_db_migrated_by_a_newer_etl_craft(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    newer = record_newer_schema(chaos_project.engine)

    done = processes.run(chaos_project, "server")

    assert done.code == ExitCode.MIGRATION, done.output
    assert f"is at schema version {newer}, but this overseer" in done.output
    assert f"built for schema version {newer - 1};" in done.output
    assert "upgrade the overseer" in done.output
    assert scalar(chaos_project, "SELECT count(*) FROM AUD_OVERSEERS") == 0
