"""Finding a project from where a command runs, and keeping its paths inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.project import Project, find_project, require_project
from etl_craft.core.errors import ConfigurationError


def make_project(parent: Path) -> Path:
    root = parent / "etl-craft"
    root.mkdir(parents=True)
    (root / "craft-connector.yml").write_text("Engine:\n  path: engine.db\n")
    return root


def test_a_folder_holding_etl_craft_finds_it(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    assert find_project(tmp_path) == Project(root)


def test_a_folder_inside_the_project_finds_it_upwards(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    deep = root / "sql_files" / "sales"
    deep.mkdir(parents=True)
    assert find_project(deep) == Project(root)
    assert find_project(root) == Project(root)


def test_a_sibling_folder_finds_the_project_beside_an_ancestor(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    elsewhere = tmp_path / "src" / "pipelines"
    elsewhere.mkdir(parents=True)
    assert find_project(elsewhere) == Project(root)


def test_a_folder_named_etl_craft_without_the_file_is_not_a_project(tmp_path: Path) -> None:
    (tmp_path / "etl-craft").mkdir()
    found = find_project(tmp_path)
    assert found is None or not found.root.is_relative_to(tmp_path)


def test_the_folder_holding_the_file_wins_over_a_nested_project(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "craft-connector.yml").write_text("Engine:\n  path: engine.db\n")
    assert find_project(tmp_path) == Project(tmp_path)


def test_no_project_is_refused_with_the_remedy(tmp_path: Path) -> None:
    start = tmp_path / "empty"
    start.mkdir()
    if find_project(start) is not None:
        pytest.skip("a craft-connector.yml exists above the temporary folder")
    with pytest.raises(ConfigurationError) as caught:
        require_project(start)
    assert str(start.resolve()) in str(caught.value)
    assert "etl-craft new PATH" in str(caught.value)


def test_helpers_name_the_project_folders(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.connector_path == tmp_path / "craft-connector.yml"
    assert project.migrations_dir == tmp_path / "migrations"
    assert project.sql_files_dir == tmp_path / "sql_files"
    assert project.ingestion_scripts_dir == tmp_path / "ingestion_scripts"
    assert project.logs_dir == tmp_path / "logs"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("sql_files/orders.sql", "sql_files/orders.sql"),
        ("sql_files/../ingestion_scripts/load.py", "ingestion_scripts/load.py"),
        ("./logs", "logs"),
    ],
)
def test_relative_paths_resolve_inside_the_project(
    tmp_path: Path, written: str, expected: str
) -> None:
    resolved = Project(tmp_path).resolve(written)
    assert resolved.resolve() == (tmp_path / expected).resolve()


@pytest.mark.parametrize(
    ("written", "expectation"),
    [
        ("/etc/passwd", "not an absolute one"),
        ("C:\\data\\orders.sql", "not an absolute one"),
        ("../secrets.txt", "no '..' leading out of it"),
        ("sql_files/../../secrets.txt", "no '..' leading out of it"),
        ("sql_files\\..\\..\\secrets.txt", "no '..' leading out of it"),
        ("  ", "not empty text"),
    ],
)
def test_paths_leaving_the_project_are_refused(
    tmp_path: Path, written: str, expectation: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Project(tmp_path).resolve(written)
    message = str(caught.value)
    assert repr(written) in message
    assert expectation in message
    assert f"write it relative to the project folder {tmp_path}" in message
