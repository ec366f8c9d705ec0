"""What every operation acts with: the project, its configuration, the Engine DB and the actor.

The steps that find them are public one by one, so that ``doctor`` can take each step on
its own and report every failure, where ``build_context`` stops at the first.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from etl_craft.config.connector import Connector, load_connector
from etl_craft.config.owner import OwnerSettings, lease_timing, owner_settings
from etl_craft.config.project import CONNECTOR_FILE, Project, find_project
from etl_craft.config.rules import DEFAULT_WRITER_ROLE
from etl_craft.config.settings import load_settings, logs_store, resolve_engine_url
from etl_craft.core.actor import Actor, human_actor
from etl_craft.core.errors import ConfigurationError
from etl_craft.enginedb.connection import EngineDB, EngineTimeouts
from etl_craft.enginedb.metadata import read_project_timezone
from etl_craft.enginedb.pool_budget import pool_size
from etl_craft.runtime.identity import owner_id
from etl_craft.runtime.logfile import attempt_logs_dir, bundle_cache_dir
from etl_craft.stores import ObjectStore, open_store

DEFAULT_PROJECT_CODE = "default"
DEFAULT_TIMEZONE = "UTC"


@dataclass(frozen=True)
class ContextRequest:
    """What the user asked for: a craft-connector.yml (else discovery from cwd) and a profile."""

    config: Path | None = None
    profile: str | None = None
    cwd: Path = field(default_factory=Path.cwd)
    # A worker's slots of every kind together, which size its Engine DB pool; None: not a worker.
    slots: int | None = None
    # --project: the project of the Engine DB to act on; None: the connector's
    # Orchestration.project, else the default project.
    project: str | None = None


@dataclass(frozen=True)
class OperationContext:
    project: Project | None
    connector: Connector | None
    engine: EngineDB
    actor: Actor
    # A project chosen over the connector's own (--project, an API path, the UI's switcher):
    # one Engine DB holds many projects, and one process may act on any of them.
    chosen_project: str | None = None

    @property
    def project_code(self) -> str:
        if self.chosen_project is not None:
            return self.chosen_project
        return self.connector.orchestration.project if self.connector else DEFAULT_PROJECT_CODE

    @property
    def acts_on_own_project(self) -> bool:
        """Whether the project acted on is the one whose folder and warehouse the connector
        describes; another project's files and warehouse are in its published bundle."""
        return self.chosen_project is None or self.chosen_project == (
            self.connector.orchestration.project if self.connector else DEFAULT_PROJECT_CODE
        )

    def for_project(self, project_code: str) -> OperationContext:
        """This context acting on ``project_code``, the same Engine DB and actor."""
        return dataclasses.replace(self, chosen_project=project_code)

    @property
    def writer_role(self) -> str:
        return self.connector.writer_role if self.connector else DEFAULT_WRITER_ROLE

    @property
    def timezone(self) -> str:
        if not self.acts_on_own_project:
            return self._chosen_timezone
        return self.connector.orchestration.timezone if self.connector else DEFAULT_TIMEZONE

    @cached_property
    def _chosen_timezone(self) -> str:
        # Another project's time zone is its CFG_PROJECTS row's, not this configuration's.
        with self.engine.read_only() as conn:
            return read_project_timezone(conn, self.project_code) or DEFAULT_TIMEZONE

    @property
    def attempt_logs_dir(self) -> Path:
        logs = self.project.logs_dir if self.project else Path.cwd() / "logs"
        return attempt_logs_dir(logs, self.engine.url_text, self.project_code)

    @cached_property
    def log_store(self) -> ObjectStore | None:
        """Where attempt logs are kept once their attempts end; None: on their owners' hosts."""
        found = logs_store(load_settings(), self.connector)
        return None if found is None else open_store(found, "Logs.store")

    @cached_property
    def owner(self) -> OwnerSettings:
        """This process's settings as an owner of runs and attempts, read once."""
        return self.owner_settings()

    def owner_settings(self, timing: tuple[float, float] | None = None) -> OwnerSettings:
        """Owner settings from this context's configuration; ``timing`` (lease, heartbeat
        seconds) replaces what the configuration gives (a worker's own)."""
        return owner_settings(
            load_settings(),
            self.connector,
            owner_id=owner_id(),
            engine_url=self.engine.url.render_as_string(hide_password=False),
            logs_dir=self.attempt_logs_dir,
            timing=timing,
            bundle_cache=bundle_cache_dir(self.engine.url),
        )

    def close(self) -> None:
        self.engine.dispose()


def locate_connector(request: ContextRequest) -> Path | None:
    """The craft-connector.yml named by --config, else the one found from cwd, else None."""
    if request.config is None:
        project = find_project(request.cwd)
        return None if project is None else project.connector_path
    path = request.config if request.config.is_absolute() else request.cwd / request.config
    if not path.is_file():
        raise ConfigurationError(
            f"--config {request.config}: found no file at {path.resolve()}; expected the path "
            f"of a {CONNECTOR_FILE}, or leave --config out to find it from the current folder"
        )
    return path.resolve()


def load_project_connector(path: Path | None, request: ContextRequest) -> Connector | None:
    return None if path is None else load_connector(path, profile=request.profile)


def build_context(request: ContextRequest) -> OperationContext:
    """Every piece an operation needs; the first problem raises with its remedy."""
    actor = human_actor()
    settings = load_settings()
    connector = load_project_connector(locate_connector(request), request)
    timeouts = EngineTimeouts.configured()
    with contextlib.suppress(ConfigurationError):  # refused where an owner reads its timing
        # Within the lease: an owner whose Engine DB goes silent must learn it before its
        # leases run out (runtime/leases).
        timeouts = timeouts.within_lease(lease_timing(settings, connector)[0])
    configured = None if connector is None else connector.orchestration.db_pool_size
    engine = EngineDB(
        resolve_engine_url(settings, connector),
        pool_size=pool_size(configured, request.slots),
        timeouts=timeouts,
    )
    project = None if connector is None else connector.project
    return OperationContext(
        project=project,
        connector=connector,
        engine=engine,
        actor=actor,
        chosen_project=request.project,
    )
