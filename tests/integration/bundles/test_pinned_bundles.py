"""Pinned project bundles: published to the Artifacts store, pinned by each run when it is
admitted, executed by every attempt of the run wherever it runs, cached and checked by hash."""

from __future__ import annotations

import logging
from pathlib import Path

import duckdb
import pytest

from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.bundles import bundle
from etl_craft.operations.bundles import publish_bundle
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft.runtime.bundles import BundleCache, object_key
from etl_craft.stores import StoreSettings, open_store
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import WAIT, migrate, queue_run, start_worker, status_of

PINNED = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'pinned' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'hold', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'pinned';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'pinned';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'load' AND u.TASK_CODE = 'hold';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
  SELECT 'hold' AS T, 'SCRIPT' AS N, 'wait.py' AS V
  UNION ALL SELECT 'hold', 'INPUT_PARAMS', '{"folder": "FOLDER", "name": "hold"}'
  UNION ALL SELECT 'load', 'ACTION', 'CREATE_TABLE'
  UNION ALL SELECT 'load', 'TARGET_OBJECT', 'dm.version'
  UNION ALL SELECT 'load', 'SOURCE_SQL_FILE', 'version.sql'
) x ON x.T = k.TASK_CODE;
"""


def configure(project: ProjectOnDisk, store: str) -> None:
    """The project with an Artifacts store: the local provider then runs bundles."""
    with project.config.open("a") as config:
        config.write(f"Artifacts:\n  store: {store}\n")


def test_editing_a_sql_file_mid_run_does_not_change_the_run(
    sqlite_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    project = sqlite_project
    configure(project, (tmp_path / "artifacts").as_uri())
    (project.root / "ingestion_scripts" / "wait.py").write_text(WAIT)
    (project.root / "sql_files").mkdir()
    version = project.root / "sql_files" / "version.sql"
    version.write_text("SELECT 1 AS version")
    migrate(project, "pinned", PINNED.replace("FOLDER", str(project.root)))
    published = processes.run(project, "bundle", "publish")
    assert published.code == 0, published.output
    assert "published bundle 1" in published.output

    run = processes.start(project, "run", "--pipeline-code", "pinned")
    wait_for((project.root / "starts.log").exists, "the first task to start", 60)
    # Mid-run: the SQL file changes, and is even published as a newer bundle.
    version.write_text("SELECT 2 AS version")
    again = processes.run(project, "bundle", "publish")
    assert "published bundle 2" in again.output, again.output
    (project.root / "release-hold").write_text("go")
    done = processes.finish(run)
    assert done.code == 0, done.output

    with duckdb.connect(str(project.root / "warehouse.duckdb"), read_only=True) as warehouse:
        assert warehouse.execute("SELECT version FROM dm.version").fetchall() == [(1,)]
    assert rows(project, "SELECT BUNDLE_ID FROM AUD_PIPELINES_RUN_LOG") == [(1,)]


@pytest.fixture(params=("file", "s3"))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreSettings:
    if request.param == "file":
        return StoreSettings((tmp_path / "artifacts").as_uri())
    settings = request.getfixturevalue("s3_store")
    assert isinstance(settings, StoreSettings)
    return settings


def test_a_corrupted_cached_file_is_detected_and_fetched_again(
    sqlite_project: ProjectOnDisk,
    store: StoreSettings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    project = sqlite_project
    configure(project, store.url)
    with project.config.open("a") as config:
        config.write(f"  endpoint_url: {store.endpoint_url}\n" if store.endpoint_url else "")
        config.write(f"  region: {store.region}\n" if store.region else "")
    (project.root / "sql_files").mkdir()
    (project.root / "sql_files" / "a.sql").write_text("SELECT 1 AS a")
    (project.root / "ingestion_scripts" / "pull.py").write_text("VALUE = 1\n")
    ctx = build_context(ContextRequest(project.config))
    try:
        view = publish_bundle(ctx)
        with ctx.engine.read() as conn:
            record = bundle(conn, view.bundle_id)
    finally:
        ctx.close()
    assert record is not None
    assert sorted(record.manifest) == [
        "craft-connector.yml",
        "ingestion_scripts/pull.py",
        "sql_files/a.sql",
    ]
    opened = open_store(store, "Artifacts.store")
    cache = BundleCache(opened, tmp_path / "cache")
    root = cache.materialise(record)
    cached = root / "sql_files" / "a.sql"
    assert cached.read_text() == "SELECT 1 AS a"

    cached.write_text("SELECT 666 AS a")  # corrupted on disk
    (root / "ingestion_scripts" / "pull.py").unlink()  # and a file lost
    with caplog.at_level(logging.WARNING, logger="etl_craft.runtime.bundles"):
        assert cache.materialise(record) == root
    assert cached.read_text() == "SELECT 1 AS a"
    assert (root / "ingestion_scripts" / "pull.py").read_text() == "VALUE = 1\n"
    assert "is fetched again" in caplog.text
    assert record.manifest["sql_files/a.sql"] in caplog.text

    # A store whose copy was changed after publishing is refused, never run.
    opened.put_bytes(object_key("default", record.manifest["sql_files/a.sql"]), b"SELECT 7")
    cached.write_text("SELECT 666 AS a")
    with pytest.raises(ConfigurationError, match="publish the project again"):
        cache.materialise(record)


SPEAKS = """
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult

HERE = Path(__file__)


def run(context: ScriptContext) -> ScriptResult:
    marker = Path(context.input_params["marker"])
    marker.write_text(f"{HERE} {(HERE.parent.parent / 'sql_files' / 'note.sql').read_text()}")
    return ScriptResult(row_count=1)
"""


@pytest.mark.postgres
def test_a_worker_on_another_host_with_no_project_folder_runs_from_the_s3_store(
    pg_project: ProjectOnDisk, processes: Processes, s3_store: StoreSettings, tmp_path: Path
) -> None:
    project = pg_project
    assert s3_store.endpoint_url is not None
    assert s3_store.region is not None
    with project.config.open("a") as config:
        config.write(
            f"Artifacts:\n  store: {s3_store.url}\n  endpoint_url: {s3_store.endpoint_url}\n"
            f"  region: {s3_store.region}\n"
        )
    (project.root / "ingestion_scripts" / "speaks.py").write_text(SPEAKS)
    (project.root / "sql_files").mkdir()
    (project.root / "sql_files" / "note.sql").write_text("SELECT 'from the bundle'")
    marker = tmp_path / "marker.txt"
    migrate(
        project,
        "far",
        "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'far' "
        "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';\n"
        "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, 'speak', "
        "'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'far';\n"
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) SELECT "
        f"TASK_ID, x.N, x.V FROM CFG_TASKS, (SELECT 'SCRIPT' AS N, 'speaks.py' AS V UNION ALL "
        f"SELECT 'INPUT_PARAMS', '{{\"marker\": \"{marker}\"}}') x WHERE TASK_CODE = 'speak';\n",
    )
    published = processes.run(project, "migrate", "--publish-bundle")
    assert published.code == 0, published.output
    assert "published bundle 1" in published.output

    # Another host: an empty folder, the Engine DB and the stores from its environment.
    far = ProjectOnDisk(tmp_path / "far-host", project.connector, project.engine)
    far.root.mkdir()
    cache = tmp_path / "far-cache"
    start_worker(
        processes,
        far,
        settings={
            "engine_url": project.connector.engine_url,
            "artifacts_store": s3_store.url,
            "store_endpoint_url": s3_store.endpoint_url,
            "store_region": s3_store.region,
            "host_name": "far-host",
            "bundle_cache": str(cache),
        },
    )
    (project.root / "sql_files" / "note.sql").write_text("SELECT 'from the folder'")
    [attempt_id] = queue_run(project, "far", ["speak"]).values()
    wait_for(lambda: status_of(project, attempt_id) != "QUEUED", "the worker to claim", 60)
    wait_for(lambda: status_of(project, attempt_id) not in ("CLAIMED", "RUNNING"), "the end", 60)

    [(status, host, error)] = rows(
        project, "SELECT STATUS, HOST, ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS"
    )
    assert (status, host) == ("SUCCESS", "far-host"), error
    script, note = marker.read_text().split(" ", 1)
    assert Path(script).is_relative_to(cache)
    assert note == "SELECT 'from the bundle'"
    assert not list(far.root.rglob("*.yml"))  # the worker's host never had the project
