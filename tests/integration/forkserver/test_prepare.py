"""What the fork server reads ahead for the next task processes: once per configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.runtime import child
from etl_craft.runtime.forkserver import _take_environment


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", None)
    yield made
    made.engine.dispose()


def argv(attempt_id: int) -> list[str]:
    return [
        "--attempt-id",
        str(attempt_id),
        "--owner-id",
        "owner",
        "--config",
        "craft-connector.yml",
    ]


def test_the_server_leaves_its_environment_alone_once_a_configuration_is_prepared(
    project: ProjectOnDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every release prepares the last request's configuration: when it is prepared already,
    # the server must not swap its environment and working folder for the children's again.
    monkeypatch.setattr(child, "_configured", {})
    monkeypatch.setattr(child, "_engines", {})
    environ = {**os.environ, "ETL_CRAFT_LOG_PATH": "/dev/null"}
    cwd = str(project.root)
    child.prepare(argv(1), environ, cwd)
    assert len(child._configured) == 1
    swaps: list[str] = []
    monkeypatch.setattr(os, "chdir", lambda path: swaps.append(str(path)))
    monkeypatch.setattr(os.environ, "clear", lambda: swaps.append("environ"))

    # Another attempt of the same owner: only what differs per attempt differs.
    child.prepare(argv(2), {**environ, "ETL_CRAFT_LOG_PATH": "/tmp/2.log"}, cwd)

    assert swaps == []
    assert len(child._configured) == 1


def test_the_server_prepares_a_changed_configuration_again(
    project: ProjectOnDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child, "_configured", {})
    monkeypatch.setattr(child, "_engines", {})
    cwd = str(project.root)
    child.prepare(argv(1), dict(os.environ), cwd)
    project.config.write_text(project.config.read_text() + "\n# edited\n")
    child.prepare(argv(2), dict(os.environ), cwd)
    child.prepare(argv(3), {**os.environ, "SOME_SETTING": "changed"}, cwd)

    configured = [value for value in child._configured.values() if value is not None]
    assert len(configured) == 3


def test_a_task_process_takes_exactly_the_environment_of_its_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERVER_ONLY", "gone")
    monkeypatch.setenv("SHARED", "server")
    monkeypatch.setenv("SAME", "same")
    saved = dict(os.environ)
    wanted = {"SHARED": "request", "SAME": "same", "REQUEST_ONLY": "new"}
    try:
        _take_environment(wanted)
        assert dict(os.environ) == wanted
        assert [os.getenv(name) for name in ("SERVER_ONLY", "SHARED", "REQUEST_ONLY")] == [
            None,
            "request",
            "new",
        ]
    finally:
        os.environ.clear()
        os.environ.update(saved)
