"""doctor --worker: the latest bundle's script imports this interpreter can't resolve."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk

PULL = """
import json
import os.path
from datetime import date

import helper
import etl_craft_missing_package.client
from etl_craft_other_missing import thing
from . import sibling

import sqlglot


def run(context):
    import lazily_missing_module
"""


def test_doctor_worker_lists_the_imports_the_interpreter_cant_resolve(
    sqlite_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    project = sqlite_project
    with project.config.open("a") as config:
        config.write(f"Artifacts:\n  store: {(tmp_path / 'artifacts').as_uri()}\n")
    scripts = project.root / "ingestion_scripts"
    (scripts / "pull.py").write_text(PULL)
    (scripts / "helper.py").write_text("VALUE = 1\n")
    assert processes.run(project, "bundle", "publish").code == 0

    done = processes.run(project, "doctor", "--worker", "--format", "json")
    checks = {check["name"]: check for check in json.loads(done.output)["checks"]}
    found = checks["bundle-imports"]
    assert found["status"] == "FAIL"
    assert found["detail"].splitlines()[1:] == [
        "ingestion_scripts/pull.py:7 imports etl_craft_missing_package.client",
        "ingestion_scripts/pull.py:8 imports etl_craft_other_missing",
        "ingestion_scripts/pull.py:15 imports lazily_missing_module",
    ]
    assert done.code == 1

    plain = processes.run(project, "doctor", "--format", "json")
    assert "bundle-imports" not in {check["name"] for check in json.loads(plain.output)["checks"]}
