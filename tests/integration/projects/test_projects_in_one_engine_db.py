"""Projects in one Engine DB: ten projects share it, pipelines of the same code run side by
side into each project's own warehouse under one overseer and one worker, a pipeline depends on
another project's, one project's quota and pause leave the others alone, and --project scopes
what every command reads and acts on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.connection import EngineDB
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.projects.cluster import (
    TIMEZONES,
    Cluster,
    clean_environment,
    open_project,
    python_task,
    write_host,
    write_project,
)
from tests.integration.worker.queueing import start_worker

pytestmark = pytest.mark.postgres

CODES = ("alpha", "beta", *(f"p{n:02d}" for n in range(3, 11)))
HOLD_PARAMS = '{{"folder": "{folder}", "name": "{name}"}}'


def alpha_extras(root: Path) -> str:
    """alpha: a quota of one task at a time, a pipeline of two held tasks, and feed."""
    hold = [
        python_task("alpha", "hold", name, "wait.py", HOLD_PARAMS.format(folder=root, name=name))
        for name in ("first", "second")
    ]
    return "\n".join(
        [
            "UPDATE CFG_PROJECTS SET MAX_RUNNING_TASKS = 1 WHERE PROJECT_CODE = 'alpha';",
            "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'hold' "
            "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'alpha';",
            *hold,
            "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'feed' "
            "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'alpha';",
            python_task("alpha", "feed", "quick", "quick.py", "{}"),
        ]
    )


# beta's report waits for alpha's feed: a dependency across projects, by pipeline id.
BETA_EXTRAS = (
    "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'report' "
    "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'beta';\n"
    + python_task("beta", "report", "quick", "quick.py", "{}")
    + """
INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID)
SELECT d.PIPELINE_ID, u.PIPELINE_ID
  FROM CFG_PIPELINES d JOIN CFG_PROJECTS dj ON dj.PROJECT_ID = d.PROJECT_ID,
       CFG_PIPELINES u JOIN CFG_PROJECTS uj ON uj.PROJECT_ID = u.PROJECT_ID
 WHERE dj.PROJECT_CODE = 'beta' AND d.PIPELINE_CODE = 'report'
   AND uj.PROJECT_CODE = 'alpha' AND u.PIPELINE_CODE = 'feed';
"""
)


@pytest.fixture(scope="module")
def served(pg_engine_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Ten projects migrated and published into one Engine DB; one overseer and one worker
    started from a folder with no project in it."""
    folder = tmp_path_factory.mktemp("projects")
    store = (folder / "artifacts").as_uri()
    engine = EngineDB(pg_engine_url)
    projects: dict[str, ProjectOnDisk] = {}
    processes = Processes(folder)
    with clean_environment():
        for code in CODES:
            root = folder / code
            extras = {"alpha": alpha_extras(root), "beta": BETA_EXTRAS}.get(code, "")
            write_project(root, code, pg_engine_url, store, extras)
            config = str(root / "craft-connector.yml")
            assert run_cli(["--config", config, "init-db"]) == 0
            assert run_cli(["--config", config, "migrate", "--publish-bundle"]) == 0
            projects[code] = open_project(root, engine)
        write_host(folder / "host", pg_engine_url, store)
        host = open_project(folder / "host", engine)
        try:
            processes.start(host, "server", "--pool-provider", "queue", "--metrics-port", "0")
            start_worker(
                processes,
                host,
                "--ingestion-slots",
                "4",
                "--warehouse-slots",
                "4",
                settings={"bundle_cache": str(folder / "cache")},
            )
            yield Cluster(engine, projects, processes, host.root)
        finally:
            processes.stop_all()
            engine.dispose()


@pytest.fixture
def cluster(served: Cluster, capsys: pytest.CaptureFixture[str]) -> Iterator[Cluster]:
    served.capsys = capsys
    with clean_environment():
        yield served


def test_ten_projects_run_the_same_pipeline_code_side_by_side_into_their_own_warehouses(
    cluster: Cluster,
) -> None:
    for code in CODES:
        listed = cluster.cli_json("alpha", "--project", code, "list")
        assert listed["project"] == code
        own = {p["pipeline_code"] for p in listed["pipelines"]}
        assert {p["timezone"] for p in listed["pipelines"]} == {TIMEZONES.get(code, "UTC")}
        assert own & {f"only_{other}" for other in CODES} == {f"only_{code}"}
        assert "load" in own

    # Queued by one process, whose own configuration is alpha's, for every project.
    runs = {code: cluster.trigger("alpha", code, "load", "side-by-side") for code in CODES}
    for code, run_id in runs.items():
        assert cluster.wait_ended(run_id) == "SUCCESS", code
        assert cluster.warehouse(code, "SELECT project, n FROM dm.who") == [(code, 1)]
        history = cluster.cli_json("beta", "history", "--project", code, "--pipeline", "load")
        assert [run["run_id"] for run in history["runs"]] == [run_id]
    [(workers,)] = rows(cluster.projects["alpha"], "SELECT count(*) FROM AUD_WORKERS")
    assert workers == 1


def test_a_pipeline_waits_for_its_dependency_in_another_project(cluster: Cluster) -> None:
    validated = cluster.cli_json("alpha", "--project", "beta", "validate")
    assert (validated["project"], validated["valid"], validated["findings"]) == ("beta", True, [])

    report = cluster.trigger("alpha", "beta", "report", "across")
    assert cluster.status(report) in ("QUEUED", "IN-PROGRESS")  # alpha's feed never ran
    feed = cluster.trigger("beta", "alpha", "feed", "across")
    assert cluster.wait_ended(feed) == "SUCCESS"
    assert cluster.wait_ended(report) == "SUCCESS"
    decisions = rows(
        cluster.projects["beta"],
        "SELECT RESULT, SELECTED_PIPELINE_RUN_ID FROM AUD_GATE_DECISIONS "
        "WHERE PIPELINE_RUN_ID = :r AND RESULT = 'SATISFIED'",
        r=report,
    )
    assert decisions == [("SATISFIED", feed)]


def test_a_project_at_its_quota_does_not_hold_back_another(cluster: Cluster) -> None:
    alpha = cluster.projects["alpha"]
    held = cluster.trigger("alpha", "alpha", "hold", "quota")
    starts = alpha.root / "starts.log"
    wait_for(starts.exists, "alpha's first held task to start", 60)
    # alpha holds its one slot of quota: beta's run goes through meanwhile.
    beta = cluster.trigger("alpha", "beta", "load", "quota")
    assert cluster.wait_ended(beta) == "SUCCESS"
    assert len(starts.read_text().splitlines()) == 1  # the second task has not started
    (alpha.root / "release-all").write_text("go")
    assert cluster.wait_ended(held) == "SUCCESS"
    assert len(starts.read_text().splitlines()) == 2  # both, one after the other


def test_pause_project_pauses_that_project_only(cluster: Cluster) -> None:
    code, _, err = cluster.cli("alpha", "pause", "--project", "beta", "--reason", "freeze")
    assert code == 0, err
    paused = {
        project: {
            p["paused"]
            for p in cluster.cli_json("alpha", "--project", project, "list")["pipelines"]
        }
        for project in ("alpha", "beta", "p03")
    }
    assert paused == {"alpha": {False}, "beta": {True}, "p03": {False}}
    alpha_run = cluster.trigger("beta", "alpha", "load", "beta-paused")
    assert cluster.wait_ended(alpha_run) == "SUCCESS"
    code, _, err = cluster.cli("alpha", "--project", "beta", "pause", "--project", "--reason", "x")
    assert code == ExitCode.RUN_STATE
    assert "project beta is paused already" in err
    assert "etl-craft resume --project beta" in err
    code, _, err = cluster.cli("alpha", "--project", "beta", "resume", "--project")
    assert code == 0, err
    assert {
        p["paused"] for p in cluster.cli_json("alpha", "--project", "beta", "list")["pipelines"]
    } == {False}


def test_an_unknown_project_is_refused_with_the_known_ones(cluster: Cluster) -> None:
    code, out, err = cluster.cli("alpha", "--format", "json", "--project", "gamma", "list")
    assert code == ExitCode.NOT_FOUND
    assert "project 'gamma' is not in the Engine DB" in err
    assert "alpha, beta, default, p03" in err
    assert json.loads(out)["exit_name"] == "NOT_FOUND"


def test_a_folder_applies_its_migrations_to_its_own_project_only(cluster: Cluster) -> None:
    code, _, err = cluster.cli("alpha", "--project", "beta", "migrate")
    assert code == ExitCode.USAGE
    assert "whose project is alpha" in err
    [(versions,)] = rows(
        cluster.projects["beta"],
        "SELECT count(*) FROM CFG_PIPELINES p JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID "
        "WHERE j.PROJECT_CODE = 'beta' AND p.PIPELINE_CODE IN ('hold', 'feed')",
    )
    assert versions == 0
