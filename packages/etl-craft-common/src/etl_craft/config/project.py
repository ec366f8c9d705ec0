"""A user's project: the folder that holds craft-connector.yml, and paths inside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from etl_craft.core.errors import ConfigurationError

PROJECT_FOLDER = "etl-craft"
CONNECTOR_FILE = "craft-connector.yml"
ENV_FILE = ".env"


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def connector_path(self) -> Path:
        return self.root / CONNECTOR_FILE

    @property
    def env_file(self) -> Path:
        return self.root / ENV_FILE

    @property
    def migrations_dir(self) -> Path:
        return self.root / "migrations"

    @property
    def pipelines_dir(self) -> Path:
        return self.root / "pipelines"

    @property
    def sql_files_dir(self) -> Path:
        return self.root / "sql_files"

    @property
    def ingestion_scripts_dir(self) -> Path:
        return self.root / "ingestion_scripts"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    def resolve(self, relative: str) -> Path:
        """The absolute path of ``relative``, which must stay inside the project."""
        problem = relative_path_problem(relative)
        if problem:
            raise ConfigurationError(
                f"path {relative!r}: {problem}; write it relative to the project folder {self.root}"
            )
        return self.root.joinpath(*PurePosixPath(relative.replace("\\", "/")).parts)


def relative_path_problem(relative: str) -> str | None:
    """Why ``relative`` can't name a place inside a project, or None when it can.

    The check is lexical: a symlink inside the project may point elsewhere on purpose, so
    only what is written is judged.
    """
    if not relative.strip():
        return "expected a path inside the project such as sql_files/orders.sql, not empty text"
    if _is_absolute(relative):
        return (
            "expected a path relative to the project such as sql_files/orders.sql, "
            "not an absolute one"
        )
    depth = 0
    for part in PurePosixPath(relative.replace("\\", "/")).parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            return "expected a path inside the project folder, with no '..' leading out of it"
    return None


def _is_absolute(relative: str) -> bool:
    # A project moves between Linux hosts and Windows laptops; a drive letter is absolute too.
    return PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute()


def find_project(start: Path) -> Project | None:
    """The project that ``start`` is in, or holds as ``etl-craft/``, searching upwards."""
    for folder in (start.resolve(), *start.resolve().parents):
        # The folder you stand in wins over one nested below it.
        if (folder / CONNECTOR_FILE).is_file():
            return Project(folder)
        if (folder / PROJECT_FOLDER / CONNECTOR_FILE).is_file():
            return Project(folder / PROJECT_FOLDER)
    return None


def require_project(start: Path) -> Project:
    project = find_project(start)
    if project is None:
        raise ConfigurationError(
            f"no etl-craft project at or above {start.resolve()}: found no {CONNECTOR_FILE} "
            f"and no {PROJECT_FOLDER}/{CONNECTOR_FILE}; run inside a project or create one "
            f"with etl-craft new PATH"
        )
    return project
