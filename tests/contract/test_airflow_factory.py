"""The DAG factory against real Airflow: every demo pipeline's YAML loads through DagBag with no
import error, and the DAG Airflow builds has etl-craft's graph, trigger rules and commands.

Each Airflow version runs in a venv the suite builds with uv and caches between runs
(tests/fixtures/airflow_venvs.py); under CI a venv that cannot be built fails the test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from etl_craft.core.enums import DependencyType
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.metadata import ProjectMetadata, read_project_metadata
from tests.fixtures.airflow_venvs import AirflowVenv, require_airflow_venv
from tests.fixtures.processes import ETL_CRAFT, clean_env

REPOSITORY = Path(__file__).resolve().parents[2]
DEMO = REPOSITORY / "examples" / "demo"
PROBE = Path(__file__).with_name("airflow_probe.py")
VERSIONS = ("3.3.2", "2.11.0")
RULES = {"SUCCESS": "all_success", "FAILURE": "all_failed", "ALWAYS": "all_done"}
ANY_RULES = {"SUCCESS": "one_success", "FAILURE": "one_failed", "ALWAYS": "one_done"}


@dataclass(frozen=True)
class RemoteDemo:
    project: Path
    dags: Path
    metadata: ProjectMetadata


def etl_craft(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ETL_CRAFT), *args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def remote_demo(tmp_path_factory: pytest.TempPathFactory) -> RemoteDemo:
    """The demo's metadata with its remote-mode migration, and the YAML generate-yml writes."""
    root = tmp_path_factory.mktemp("remote-demo")
    project = root / "etl-craft"
    shutil.copytree(DEMO / "etl-craft", project)
    shutil.copy(DEMO / "remote_mode" / "0007_remote_mode.sql", project / "migrations")
    for command in (("init-db",), ("migrate",)):
        done = etl_craft(*command, cwd=project)
        assert done.returncode == 0, done.stderr
    dags = root / "yaml"
    done = etl_craft(
        "generate-yml",
        "--output",
        str(dags),
        "--etl-craft-command",
        str(ETL_CRAFT),
        "--connector-path",
        str(project / "craft-connector.yml"),
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    engine = EngineDB(f"sqlite:///{project / 'data' / 'engine.db'}")
    try:
        with engine.read() as conn:
            metadata = read_project_metadata(conn, "demo")
    finally:
        engine.dispose()
    return RemoteDemo(project, dags, metadata)


def load_through_dagbag(venv: AirflowVenv, yaml_folder: Path, home: Path) -> dict[str, Any]:
    dags_folder = home / "dags"
    dags_folder.mkdir(parents=True)
    (dags_folder / "etl_craft_dags.py").write_text(
        f"from etl_craft_airflow import load_dags\n\nload_dags({str(yaml_folder)!r}, globals())\n"
    )
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
    }
    done = subprocess.run(
        [str(venv.python), str(PROBE), str(dags_folder)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    loaded: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.fixture(scope="module", params=VERSIONS)
def loaded(
    request: pytest.FixtureRequest,
    remote_demo: RemoteDemo,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    venv = require_airflow_venv(str(request.param))
    home = tmp_path_factory.mktemp(f"airflow-{request.param}")
    return load_through_dagbag(venv, remote_demo.dags, home)


def expected_upstream(metadata: ProjectMetadata, pipeline_code: str) -> dict[str, set[str]]:
    """etl-craft's graph as the DAG must have it, control steps and sensors included."""
    pipeline = metadata.pipeline(pipeline_code)
    gates = {
        f"__wait__{d.upstream_pipeline_code}"
        for d in metadata.pipeline_dependencies_of(pipeline.pipeline_id)
    }
    expected: dict[str, set[str]] = {"__init__": set(), **{gate: {"__init__"} for gate in gates}}
    for task in metadata.tasks_of(pipeline.pipeline_id):
        edges = metadata.dependencies_of(task.task_id)
        own = {d.upstream_task_code for d in edges if d.upstream_pipeline_id == task.pipeline_id}
        sensors = {
            f"__wait__{d.upstream_pipeline_code}__{d.upstream_task_code}"
            for d in edges
            if d.upstream_pipeline_id != task.pipeline_id
        }
        for sensor in sensors:
            expected[sensor] = {"__init__"}
        expected[task.code] = (own or gates or {"__init__"}) | sensors
    expected["__finalize__"] = set(expected) - {"__init__"}
    return expected


def test_every_demo_pipeline_loads_through_dagbag_without_import_errors(
    loaded: dict[str, Any], remote_demo: RemoteDemo
) -> None:
    assert loaded["import_errors"] == {}
    pipelines = sorted(p.code for p in remote_demo.metadata.pipelines if p.active)
    assert sorted(loaded["dags"]) == pipelines
    assert sorted(p.stem for p in remote_demo.dags.iterdir()) == pipelines
    for dag in loaded["dags"].values():
        assert dag["max_active_runs"] == 1
        assert dag["catchup"] is False


def test_the_task_graph_and_trigger_rules_are_etl_crafts(
    loaded: dict[str, Any], remote_demo: RemoteDemo
) -> None:
    metadata = remote_demo.metadata
    for pipeline_code, dag in loaded["dags"].items():
        tasks = dag["tasks"]
        expected = expected_upstream(metadata, pipeline_code)
        assert {name: set(task["upstream"]) for name, task in tasks.items()} == expected
        assert tasks["__finalize__"]["trigger_rule"] == "all_done"
        for task in metadata.tasks_of(metadata.pipeline(pipeline_code).pipeline_id):
            own = [
                d
                for d in metadata.dependencies_of(task.task_id)
                if d.upstream_pipeline_id == task.pipeline_id
            ]
            rules = ANY_RULES if task.run_condition.value == "ANY" else RULES
            want = rules[own[0].type.value] if own else "all_success"
            assert tasks[task.code]["trigger_rule"] == want, (pipeline_code, task.code)


def test_sensors_wait_on_the_upstream_dag_with_the_states_of_each_dependency_type(
    loaded: dict[str, Any], remote_demo: RemoteDemo
) -> None:
    transform = loaded["dags"]["si_transform"]["tasks"]
    pipeline = remote_demo.metadata.pipeline("si_transform")
    dependencies = remote_demo.metadata.pipeline_dependencies_of(pipeline.pipeline_id)
    assert {d.type for d in dependencies} == {DependencyType.SUCCESS}
    for dependency in dependencies:
        sensor = transform[f"__wait__{dependency.upstream_pipeline_code}"]
        assert sensor["operator"] == "ExternalTaskSensor"
        assert sensor["external_dag_id"] == dependency.upstream_pipeline_code
        assert sensor["external_task_id"] == "__finalize__"
        assert sensor["allowed_states"] == ["success"]
        assert sensor["failed_states"] == ["failed", "skipped", "upstream_failed"]
        assert sensor["mode"] == "reschedule"


def test_each_step_runs_the_etl_craft_command_for_its_task_and_the_orchestrators_run(
    loaded: dict[str, Any], remote_demo: RemoteDemo
) -> None:
    config = str(remote_demo.project / "craft-connector.yml")
    for pipeline_code, dag in loaded["dags"].items():
        for name, task in dag["tasks"].items():
            if task["operator"] != "BashOperator":
                continue
            words = shlex.split(task["bash_command"])
            options = {"__init__": ["--init-only"], "__finalize__": ["--finalize-only"]}.get(
                name, ["--task", name]
            )
            assert words == [
                str(ETL_CRAFT),
                "--config",
                config,
                "run",
                "--pipeline",
                pipeline_code,
                *options,
                "--run-key",
                "$ETL_CRAFT_RUN_KEY",
                "--run-date",
                "$ETL_CRAFT_RUN_DATE",
            ]
            assert task["env"] == {
                "ETL_CRAFT_RUN_KEY": "orchestrator:{{ run_id }}",
                "ETL_CRAFT_RUN_DATE": "{{ data_interval_end | ds }}",
            }
