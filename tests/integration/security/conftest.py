"""A project seeded with one secret per source, run once per Engine DB dialect.

Its pipeline ``vault`` has a task that prints, logs and echoes every secret it can reach, and
one that fails with all of them in its error, past the length a recorded error is cut at.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from etl_craft.config.connector import load_connector
from etl_craft.core.actor import SYSTEM
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.migrations import initialize
from etl_craft.operations.runs.foreground import RunRequest, run_pipeline
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.api.conftest import Api, served

# Distinct enough that any eight characters of one are found nowhere else (no word such as
# "warehouse" that the output writes for its own reasons, as doctor's check names do).
ENVIRONMENT = {
    "SMTP_PASSWORD": "Smtp7Qv3pw-relay-9241",
    "ENGINE_PW": "Eng5Xr2userinfo-login-7713",
    "WAREHOUSE_PW": "Whs4Kp8whlogin-dsn-3391",
}
TASK_TOKEN = "Tok3Wd9param-token-1187"
INPUT_KEY = "Inp6Hs1json-apikey-6642"
PARAMETER_SECRETS = (TASK_TOKEN, INPUT_KEY)
FRAGMENT = 8  # characters of a secret that must not show anywhere

SCRIPT = f'''
import os
import subprocess
import sys

from etl_craft.scripting import ScriptContext, ScriptResult

TOKEN = "{TASK_TOKEN}"  # the task's Api_Token parameter, as a script would be given it
NAMES = {sorted(ENVIRONMENT)!r}


def secrets(context: ScriptContext) -> str:
    found = [os.environ.get(name, "") for name in NAMES]
    return " ".join([TOKEN, str(context.input_params["api_key"]), *found])


def run(context: ScriptContext) -> ScriptResult:
    line = secrets(context)
    print("printed:", line)
    context.log.info("logged: %s", line)
    sys.stderr.write("stderr: " + line + "\\n")
    os.write(1, ("descriptor: " + line + "\\n").encode())
    subprocess.run(["echo", "program:", line], check=True)
    if context.input_params["fail"]:
        # Recorded as "script leak.py raised RuntimeError: x...": cut 2,000 characters
        # in, that is through the first secret.
        raise RuntimeError("x" * 1953 + " " + line)
    return ScriptResult(row_count=0)
'''


def _task(code: str, fail: bool) -> str:
    inputs = f'{{"user": "etl", "api_key": "{INPUT_KEY}", "fail": {str(fail).lower()}}}'
    return f"""
    INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
    SELECT PIPELINE_ID, '{code}', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'vault';
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, 'SCRIPT', 'leak.py' FROM CFG_TASKS WHERE TASK_CODE = '{code}';
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, 'Api_Token', '{TASK_TOKEN}' FROM CFG_TASKS WHERE TASK_CODE = '{code}';
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, 'INPUT_PARAMS', '{inputs}' FROM CFG_TASKS WHERE TASK_CODE = '{code}';
    """


VAULT = (
    """
    INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
    SELECT PROJECT_ID, 'vault' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
    """
    + _task("leaky", fail=False)
    + _task("failing", fail=True)
)


@dataclass
class Seeded:
    api: Api
    run_id: int
    output: str  # what every process wrote to the test's own stdout and stderr
    dialect: str

    @property
    def project(self) -> ProjectOnDisk:
        return self.api.project

    @property
    def secrets(self) -> tuple[str, ...]:
        # A SQLite Engine DB and a DuckDB warehouse have no URL password: on SQLite the
        # ENGINE_ and WAREHOUSE_ variables are nobody's secret.
        servers = ("ENGINE_PW", "WAREHOUSE_PW")
        engine = servers if self.dialect == "postgresql" else ()
        named = ("SMTP_PASSWORD", *engine)
        return (*PARAMETER_SECRETS, *(ENVIRONMENT[name] for name in named))


def fragments(secret: str) -> set[str]:
    return {secret[start : start + FRAGMENT] for start in range(len(secret) - FRAGMENT + 1)}


def leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    return sorted({part for secret in secrets for part in fragments(secret) if part in text})


def _connector_file(engine_url: str | None) -> str:
    email = (
        "Email:\n  host: smtp.example.com\n  from_address: etl@example.com\n"
        "  username: etl\n  password_variable: SMTP_PASSWORD\n"
    )
    if engine_url is None:
        warehouse = "Warehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"
        return "Engine:\n  path: engine.db\n" + warehouse + email
    url = make_url(engine_url)
    # The server trusts local logins, so any password connects; what matters is where it shows.
    warehouse = (
        "Warehouse:\n  type: postgresql\n  url: "
        f"postgresql://{url.username}:${{WAREHOUSE_PW}}@{url.host}:{url.port}/{url.database}\n"
    )
    template = f"postgresql://{url.username}:${{ENGINE_PW}}@{url.host}:{url.port}/{url.database}"
    return f"Engine:\n  url: {template}\n" + warehouse + email


def _project(root: Path, engine_url: str | None) -> ProjectOnDisk:
    root.mkdir(parents=True)
    (root / "craft-connector.yml").write_text(_connector_file(engine_url))
    scripts = root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "leak.py").write_text(SCRIPT)
    connector = load_connector(root / "craft-connector.yml", profile=None)
    db = EngineDB(connector.engine_url)
    initialize(db, SYSTEM, project_code="default", timezone="UTC")
    project = ProjectOnDisk(root, connector, db)
    project.migrate("0001_vault.sql", textwrap.dedent(VAULT))
    return project


@contextmanager
def captured_descriptors(into: Path) -> Iterator[None]:
    """Descriptors 1 and 2 of this process, and so of every process it starts, into a file."""
    saved = [os.dup(1), os.dup(2)]
    with into.open("wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in saved:
            os.close(descriptor)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Seeded]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_engine_url"))
    folder = tmp_path_factory.mktemp("security")
    with pytest.MonkeyPatch.context() as env:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            env.delenv(key)
        env.setenv("ETL_CRAFT_ACTOR", TESTER.name)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        for name, value in ENVIRONMENT.items():
            env.setenv(name, value)
        project = _project(folder / "etl-craft", url)
        api = served(project)
        output = folder / "output.txt"
        with captured_descriptors(output):
            view = run_pipeline(api.tester, RunRequest("vault"))
        assert view.status.value == "FAILED", output.read_text()
        yield Seeded(api, view.run_id, output.read_text(errors="replace"), request.param)
        api.client.close()
        api.ctx.close()
        project.engine.dispose()
