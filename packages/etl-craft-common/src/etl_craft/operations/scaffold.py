"""etl-craft new: a working project from the templates shipped in this package.

Template files end in ``.tmpl`` so that no tool (mypy, ruff, pytest) takes the example script
or configuration for part of etl-craft itself; the suffix is dropped when they are written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import ClassVar

from etl_craft.config.project import PROJECT_FOLDER
from etl_craft.core.errors import UsageError
from etl_craft.core.text import CODE_RULE, is_code

TEMPLATE_SUFFIX = ".tmpl"
PROJECT_CODE_MARK = "__PROJECT_CODE__"
DEFAULT_PROJECT_CODE = "starter"


@dataclass(frozen=True)
class NewProjectReport:
    schema: ClassVar[str] = "etl-craft/new/1"
    root: Path
    project_folder: Path
    project_code: str
    files: tuple[str, ...]  # relative to root
    next_steps: tuple[str, ...]


def new_project(path: Path, project_code: str | None = None) -> NewProjectReport:
    root = path.resolve()
    _refuse_occupied(root)
    code = project_code or code_from_name(root.name)
    if not is_code(code):
        raise UsageError(
            f"project code {code!r} breaks the code rule; expected {CODE_RULE}: "
            "pass another with --project_code"
        )
    template = files("etl_craft.operations") / "templates" / "new_project"
    written = sorted(_copy(template, root, code))
    return NewProjectReport(
        root=root,
        project_folder=root / PROJECT_FOLDER,
        project_code=code,
        files=tuple(path.relative_to(root).as_posix() for path in written),
        next_steps=(
            f"cd {root}",
            "etl-craft init-db",
            "etl-craft migrate",
            "etl-craft plan",
            "etl-craft validate",
        ),
    )


def code_from_name(name: str) -> str:
    """A project code from a folder name: other characters become _, a letter leads."""
    code = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_")[:128]
    if not code:
        return DEFAULT_PROJECT_CODE
    return code if code[0].isalpha() else f"p_{code}"[:128]


def _refuse_occupied(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise UsageError(
            f"{root} is a file; expected a new or empty folder for the project: choose another PATH"
        )
    if root.is_dir() and any(root.iterdir()):
        raise UsageError(
            f"{root} is not empty; expected a new or empty folder so that nothing of yours is "
            "overwritten: choose another PATH"
        )


def _copy(source: Traversable, target: Path, code: str) -> list[Path]:
    written: list[Path] = []
    for entry in source.iterdir():
        if entry.is_dir():
            written += _copy(entry, target / entry.name, code)
        elif entry.name.endswith(TEMPLATE_SUFFIX):
            destination = target / entry.name.removesuffix(TEMPLATE_SUFFIX)
            destination.parent.mkdir(parents=True, exist_ok=True)
            text = entry.read_text(encoding="utf-8").replace(PROJECT_CODE_MARK, code)
            destination.write_text(text, encoding="utf-8")
            written.append(destination)
    return written
