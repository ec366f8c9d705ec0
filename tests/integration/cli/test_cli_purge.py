"""etl-craft purge: counts with --dry-run, one project with --project, a JSON document."""

from __future__ import annotations

from pathlib import Path

from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import TESTER, execute
from tests.integration.cli.conftest import PROJECT_CODE, Site
from tests.integration.retention.history import build_history


def _purged(document: dict[str, object]) -> dict[str, int]:
    tables = document["tables"]
    assert isinstance(tables, list)
    return {table["table"]: table["rows"] for table in tables if table["rows"]}


def test_purge_dry_run_then_by_project_then_all(sqlite_site: Site, tmp_path: Path) -> None:
    sqlite_site.run("init-db")
    engine = EngineDB(sqlite_site.engine_url)
    try:
        with engine.transaction(TESTER) as conn:
            execute(conn, "INSERT INTO CFG_PROJECTS (PROJECT_CODE) VALUES ('default')")
        history = build_history(engine, tmp_path / "logs")
    finally:
        engine.dispose()

    code, dry = sqlite_site.json("purge", "--dry-run")
    assert code == 0
    assert dry["schema"] == "etl-craft/purge/1"
    assert dry["dry_run"] is True
    assert _purged(dry)["AUD_TASK_ATTEMPTS"] == 2
    assert all(log.exists() for log in history.expired_logs)

    code, other = sqlite_site.json("purge", "--project", PROJECT_CODE)
    assert code == 0
    assert _purged(other) == {}

    code, done = sqlite_site.json("purge")
    assert code == 0
    assert _purged(done) == _purged(dry)
    assert not any(log.exists() for log in history.expired_logs)
    assert sqlite_site.query(
        "SELECT count(*) AS n FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
        r=history.expired,
    ) == [{"n": 0}]
