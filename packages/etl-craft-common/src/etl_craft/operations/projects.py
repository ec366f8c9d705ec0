"""The projects one Engine DB holds: listed for a switcher, and the check that one exists.

Light to import: every command checks its --project with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.metadata import read_active_project_codes
from etl_craft.operations.context import OperationContext


@dataclass(frozen=True)
class ProjectList:
    schema: ClassVar[str] = "etl-craft/projects/1"
    current: str
    projects: tuple[str, ...]


def list_projects(ctx: OperationContext) -> ProjectList:
    with ctx.engine.read_only() as conn:
        codes = read_active_project_codes(conn)
    return ProjectList(current=ctx.project_code, projects=codes)


def unknown_project(project_code: str, known: tuple[str, ...]) -> NotFoundError:
    listed = ", ".join(known) if known else "none yet"
    return NotFoundError(
        f"project {project_code!r} is not in the Engine DB (its projects: {listed}); pick one "
        "of those with --project, or create it with etl-craft migrate from its folder"
    )


def require_project(ctx: OperationContext) -> OperationContext:
    """``ctx`` itself, once its project is known to the Engine DB; else NotFoundError."""
    with ctx.engine.read_only() as conn:
        known = read_active_project_codes(conn)
    if ctx.project_code not in known:
        raise unknown_project(ctx.project_code, known)
    return ctx
