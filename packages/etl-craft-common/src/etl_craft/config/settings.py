"""Runtime settings of the CLI and services, read from ETL_CRAFT_* environment variables.

The values are a plain dataclass; pydantic-settings (config/environment) reads and checks
them from the environment when a variable names one of them. With none set, the defaults need
no reading, and a one-shot command such as `etl-craft status` is spared the import of
pydantic and pydantic-settings, some 40 ms of its start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from etl_craft.core.errors import ConfigurationError
from etl_craft.stores import StoreSettings

if TYPE_CHECKING:
    from etl_craft.config.connector import Connector

ENV_PREFIX = "ETL_CRAFT_"
ENGINE_URL_VARIABLE = f"{ENV_PREFIX}ENGINE_URL"


@dataclass(frozen=True)
class ServiceSettings:
    """The settings' values, each one's default here; their ranges and checks are the
    environment reader's (config/environment)."""

    engine_url: str | None = field(default=None, repr=False)
    profile: str | None = None
    poll_seconds: float = 1.0
    lease_seconds: int = 60
    heartbeat_seconds: int = 15
    # A connection attempt to an unreachable Engine DB gives up after this long, rather than
    # leaving its caller (a task process after its warehouse commit, say) hanging.
    engine_connect_timeout_seconds: int = 10
    # An Engine DB statement running (or waiting on a lock) longer than this is cancelled,
    # so a stuck statement does not hold a slot; 0 sets no limit.
    engine_statement_timeout_seconds: float = 120.0
    # A service (server, worker, standby) that can't reach the Engine DB tries again with
    # backoff; it exits once this long went by without an answer. 0: it never gives up.
    engine_give_up_seconds: float = 0.0
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "text"
    # fork: the owner's fork server forks each task process; spawn: a fresh interpreter each.
    task_start: Literal["fork", "spawn"] = "fork"
    # The stores of a process with no project folder (a worker running bundles); each one
    # replaces its craft-connector.yml section (Logs.store, Artifacts.store) when set.
    logs_store: str | None = None
    artifacts_store: str | None = None
    store_endpoint_url: str | None = None  # an S3-compatible service's address
    store_region: str | None = None
    # Where an owner materialises bundles; by default ~/.cache/etl-craft/bundles/<Engine DB>.
    bundle_cache: Path | None = None
    # The credential workers ask for before they serve a running attempt's log, and readers
    # (etl-craft logs, the API, the UI) present; unset, workers serve no logs.
    worker_token: str | None = field(default=None, repr=False)
    # The settings a variable gave, rather than their defaults: an explicit lease or heartbeat
    # wins over the project's.
    given: frozenset[str] = field(default=frozenset(), compare=False)


SETTING_NAMES = frozenset(setting.name for setting in fields(ServiceSettings)) - {"given"}


def load_settings() -> ServiceSettings:
    """The settings from the environment; a bad variable raises ConfigurationError naming it."""
    if not any(_names_a_setting(variable) for variable in os.environ):
        return ServiceSettings()
    # The reader and its checks, with pydantic and pydantic-settings, load only when there
    # is a variable to read.
    from etl_craft.config.environment import read_environment  # noqa: PLC0415

    return read_environment()


def _names_a_setting(variable: str) -> bool:
    # pydantic-settings matches variable names regardless of case.
    upper = variable.upper()
    return upper.startswith(ENV_PREFIX) and upper[len(ENV_PREFIX) :].lower() in SETTING_NAMES


def resolve_engine_url(settings: ServiceSettings, connector: Connector | None) -> str:
    """ETL_CRAFT_ENGINE_URL when set, for every command and service; else the project's Engine."""
    if settings.engine_url is not None:
        return settings.engine_url
    if connector is not None:
        return connector.engine_url
    raise ConfigurationError(
        f"no Engine DB to use: there is no etl-craft project (no craft-connector.yml at or "
        f"above the working directory) and {ENGINE_URL_VARIABLE} is not set; run inside a "
        f"project (create one with etl-craft new PATH) or set {ENGINE_URL_VARIABLE} to an "
        f"SQLAlchemy URL"
    )


def logs_store(settings: ServiceSettings, connector: Connector | None) -> StoreSettings | None:
    """ETL_CRAFT_LOGS_STORE when set, else the project's Logs.store; None: logs stay local."""
    return _store(settings.logs_store, settings, connector.logs.store if connector else None)


def artifacts_store(settings: ServiceSettings, connector: Connector | None) -> StoreSettings | None:
    """ETL_CRAFT_ARTIFACTS_STORE when set, else the project's Artifacts.store."""
    return _store(settings.artifacts_store, settings, connector.artifacts if connector else None)


def _store(
    url: str | None, settings: ServiceSettings, configured: StoreSettings | None
) -> StoreSettings | None:
    if url is None:
        return configured
    return StoreSettings(
        url.rstrip("/"), endpoint_url=settings.store_endpoint_url, region=settings.store_region
    )
