"""Runtime settings of the CLI and services, read from ETL_CRAFT_* environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from etl_craft.config.connector import Connector
from etl_craft.config.urls import query_credential_problem
from etl_craft.core import ranges
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.ranges import Range
from etl_craft.stores import StoreSettings, store_url_problem

ENV_PREFIX = "ETL_CRAFT_"
ENGINE_URL_VARIABLE = f"{ENV_PREFIX}ENGINE_URL"


def within(allowed: Range, default: float) -> Any:
    """A field that refuses a value outside ``allowed``, as every other number is refused."""
    return Field(default=default, ge=allowed.minimum, le=allowed.maximum)


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    engine_url: str | None = Field(default=None, repr=False)
    profile: str | None = None
    poll_seconds: float = within(ranges.POLL_SECONDS, 1.0)
    lease_seconds: int = within(ranges.TIMEOUT_SECONDS, 60)
    heartbeat_seconds: int = within(ranges.TIMEOUT_SECONDS, 15)
    # A connection attempt to an unreachable Engine DB gives up after this long, rather than
    # leaving its caller (a task process after its warehouse commit, say) hanging.
    engine_connect_timeout_seconds: int = within(ranges.CONNECT_TIMEOUT_SECONDS, 10)
    # An Engine DB statement running (or waiting on a lock) longer than this is cancelled,
    # so a stuck statement does not hold a slot; 0 sets no limit.
    engine_statement_timeout_seconds: float = within(ranges.STATEMENT_TIMEOUT_SECONDS, 120.0)
    # A service (server, worker, standby) that can't reach the Engine DB tries again with
    # backoff; it exits once this long went by without an answer. 0: it never gives up.
    engine_give_up_seconds: float = within(ranges.GIVE_UP_SECONDS, 0.0)
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

    @field_validator("logs_store", "artifacts_store")
    @classmethod
    def _store_is_a_store(cls, value: str | None) -> str | None:
        problem = None if value is None else store_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("engine_url")
    @classmethod
    def _engine_url_is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            make_url(value)
        except ArgumentError as error:
            # The value may hold a password, so only its shape is described.
            raise ValueError(
                "expected an SQLAlchemy URL such as postgresql+psycopg://etl@db/etl"
            ) from error
        refused = query_credential_problem(value)
        if refused is not None:
            raise ValueError(refused)
        return value

    @model_validator(mode="after")
    def _heartbeat_renews_before_expiry(self) -> Self:
        if self.heartbeat_seconds >= self.lease_seconds:
            raise ValueError(
                f"{ENV_PREFIX}HEARTBEAT_SECONDS={self.heartbeat_seconds} is not below "
                f"{ENV_PREFIX}LEASE_SECONDS={self.lease_seconds}; expected a heartbeat well "
                f"inside the lease (a quarter of it) so a live owner renews before it expires"
            )
        return self


def load_settings() -> ServiceSettings:
    """The settings from the environment; a bad variable raises ConfigurationError naming it."""
    try:
        return ServiceSettings()
    except ValidationError as error:
        lines = "\n".join(f"  {_describe(detail)}" for detail in error.errors())
        raise ConfigurationError(
            f"the ETL_CRAFT_* environment variables have {error.error_count()} "
            f"problem(s); fix or unset each one:\n{lines}"
        ) from error


def _describe(detail: ErrorDetails) -> str:
    message = detail["msg"].removeprefix("Value error, ")
    if not detail["loc"]:
        return message
    variable = f"{ENV_PREFIX}{str(detail['loc'][0]).upper()}"
    shown = "(hidden)" if variable == ENGINE_URL_VARIABLE else repr(detail["input"])
    return f"{variable}={shown}: {message}"


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
