"""The reader of ETL_CRAFT_* environment variables: pydantic-settings checks each one against
its type and range, and the result is the plain ServiceSettings every caller reads."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from etl_craft.config.settings import ENGINE_URL_VARIABLE, ENV_PREFIX, ServiceSettings
from etl_craft.config.urls import query_credential_problem
from etl_craft.core import ranges
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.ranges import Range
from etl_craft.stores import store_url_problem

DEFAULTS = asdict(ServiceSettings())


def within(allowed: Range, default: float) -> Any:
    """A field that refuses a value outside ``allowed``, as every other number is refused."""
    return Field(default=default, ge=allowed.minimum, le=allowed.maximum)


class EnvironmentSettings(BaseSettings):
    """ServiceSettings' fields, as the environment gives them (the defaults are its own)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    engine_url: str | None = Field(default=DEFAULTS["engine_url"], repr=False)
    profile: str | None = DEFAULTS["profile"]
    poll_seconds: float = within(ranges.POLL_SECONDS, DEFAULTS["poll_seconds"])
    lease_seconds: int = within(ranges.TIMEOUT_SECONDS, DEFAULTS["lease_seconds"])
    heartbeat_seconds: int = within(ranges.TIMEOUT_SECONDS, DEFAULTS["heartbeat_seconds"])
    engine_connect_timeout_seconds: int = within(
        ranges.CONNECT_TIMEOUT_SECONDS, DEFAULTS["engine_connect_timeout_seconds"]
    )
    engine_statement_timeout_seconds: float = within(
        ranges.STATEMENT_TIMEOUT_SECONDS, DEFAULTS["engine_statement_timeout_seconds"]
    )
    engine_give_up_seconds: float = within(
        ranges.GIVE_UP_SECONDS, DEFAULTS["engine_give_up_seconds"]
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = DEFAULTS["log_level"]
    log_format: Literal["text", "json"] = DEFAULTS["log_format"]
    task_start: Literal["fork", "spawn"] = DEFAULTS["task_start"]
    logs_store: str | None = DEFAULTS["logs_store"]
    artifacts_store: str | None = DEFAULTS["artifacts_store"]
    store_endpoint_url: str | None = DEFAULTS["store_endpoint_url"]
    store_region: str | None = DEFAULTS["store_region"]
    bundle_cache: Path | None = DEFAULTS["bundle_cache"]
    worker_token: str | None = Field(default=DEFAULTS["worker_token"], repr=False)

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


def read_environment() -> ServiceSettings:
    """The settings the environment gives; a bad variable raises ConfigurationError naming it."""
    try:
        read = EnvironmentSettings()
    except ValidationError as error:
        lines = "\n".join(f"  {_describe(detail)}" for detail in error.errors())
        raise ConfigurationError(
            f"the ETL_CRAFT_* environment variables have {error.error_count()} "
            f"problem(s); fix or unset each one:\n{lines}"
        ) from error
    return ServiceSettings(**read.model_dump(), given=frozenset(read.model_fields_set))


def _describe(detail: ErrorDetails) -> str:
    message = detail["msg"].removeprefix("Value error, ")
    if not detail["loc"]:
        return message
    variable = f"{ENV_PREFIX}{str(detail['loc'][0]).upper()}"
    shown = "(hidden)" if variable == ENGINE_URL_VARIABLE else repr(detail["input"])
    return f"{variable}={shown}: {message}"
