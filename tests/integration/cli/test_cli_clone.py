"""etl-craft clone: a JSON document of what it copied, off without a Cloning section, and
doctor's check of the mirror."""

from __future__ import annotations

from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import TESTER, execute
from tests.integration.cli.conftest import Site, checks_by_name
from tests.integration.retention.history import build_history


def test_clone_reports_its_copies_and_doctor_checks_the_mirror(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    engine = EngineDB(sqlite_site.engine_url)
    try:
        with engine.transaction(TESTER) as conn:
            execute(conn, "INSERT INTO CFG_PROJECTS (PROJECT_CODE) VALUES ('default')")
        build_history(engine, sqlite_site.root / "logs")
    finally:
        engine.dispose()
    off = sqlite_site.run("clone")
    assert off.returncode == 3  # a configuration error: no Cloning section
    assert "no Cloning section" in off.stderr
    assert checks_by_name(sqlite_site.json("doctor")[1])["cloning"]["status"] == "SKIP"
    connector = sqlite_site.project / "craft-connector.yml"
    connector.write_text(connector.read_text() + "Cloning:\n  schema: history_mirror\n")
    _, before = sqlite_site.json("doctor")
    assert checks_by_name(before)["cloning"]["status"] == "WARN"  # nothing cloned yet

    code, done = sqlite_site.json("clone")
    assert code == 0
    assert done["schema"] == "etl-craft/clone/1"
    assert done["mirror_schema"] == "history_mirror"
    assert done["skipped"] is False
    copied = {table["table"]: table["copied"] for table in done["tables"]}
    assert copied["AUD_TASK_ATTEMPTS"] == 3
    assert copied["AUD_PIPELINES_RUN_LOG"] == 4
    _, after = sqlite_site.json("doctor")
    assert checks_by_name(after)["cloning"]["status"] == "PASS"
