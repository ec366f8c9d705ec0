"""The projects one Engine DB holds: listed for a switcher, the check that one exists, and
where the files of one that is not the configuration's own are read from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.config.project import Project
from etl_craft.config.settings import artifacts_store, load_settings
from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.enginedb.bundles import latest_bundle
from etl_craft.enginedb.metadata import read_active_project_codes
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.bundles import ARTIFACTS_SETTING, BundleCache
from etl_craft.runtime.logfile import bundle_cache_dir
from etl_craft.stores import open_store


@dataclass(frozen=True)
class ProjectList:
    schema: ClassVar[str] = "etl-craft/projects/1"
    current: str
    projects: tuple[str, ...]


def list_projects(ctx: OperationContext) -> ProjectList:
    with ctx.engine.read() as conn:
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
    with ctx.engine.read() as conn:
        known = read_active_project_codes(conn)
    if ctx.project_code not in known:
        raise unknown_project(ctx.project_code, known)
    return ctx


def project_files(ctx: OperationContext) -> Project | None:
    """The files of the project acted on: the connector's folder for its own project, else the
    project's latest published bundle, materialised in this host's bundle cache."""
    if ctx.acts_on_own_project:
        return ctx.project
    store = artifacts_store(load_settings(), ctx.connector)
    if store is None:
        raise ConfigurationError(
            f"project {ctx.project_code}'s files are in its published bundle, and this "
            "configuration has no Artifacts store; set Artifacts.store (or "
            f"ETL_CRAFT_ARTIFACTS_STORE), or run from project {ctx.project_code}'s folder"
        )
    with ctx.engine.read() as conn:
        record = latest_bundle(conn, ctx.project_code)
    if record is None:
        raise ConfigurationError(
            f"project {ctx.project_code} has no published bundle to read its files from; "
            "publish one from its folder (etl-craft bundle publish), or run from that folder"
        )
    cache = BundleCache(open_store(store, ARTIFACTS_SETTING), bundle_cache_dir(ctx.engine.url))
    return Project(cache.materialise(record))


def files_if_reachable(ctx: OperationContext) -> Project | None:
    """``project_files``, or None when this host cannot reach another project's bundle: views
    built from what is stored (lineage's traces) then stand on that alone."""
    try:
        return project_files(ctx)
    except ConfigurationError:
        return None
