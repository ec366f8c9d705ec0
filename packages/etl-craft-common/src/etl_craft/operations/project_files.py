"""Where the files of the project acted on are read from: the configuration's folder for its
own project, another project's latest published bundle otherwise."""

from __future__ import annotations

from etl_craft.config.project import Project
from etl_craft.config.settings import artifacts_store, load_settings
from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.bundles import latest_bundle
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.bundles import ARTIFACTS_SETTING, BundleCache
from etl_craft.runtime.logfile import bundle_cache_dir
from etl_craft.stores import open_store


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
