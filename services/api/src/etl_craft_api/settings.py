"""The API's settings from ETL_CRAFT_API_* environment variables (its options override them)."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from etl_craft.config.environment import within
from etl_craft.core import ranges
from etl_craft.core.errors import ConfigurationError
from etl_craft_api.app import DEFAULT_MAX_BODY_BYTES

ENV_PREFIX = "ETL_CRAFT_API_"


class ApiSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    max_body_bytes: int = within(ranges.BODY_BYTES, DEFAULT_MAX_BODY_BYTES)


def load_api_settings() -> ApiSettings:
    try:
        return ApiSettings()
    except ValidationError as error:
        said = "; ".join(
            f"{ENV_PREFIX}{str(item['loc'][0]).upper()}: {item['msg']}" for item in error.errors()
        )
        remedy = f"set it to {ranges.BODY_BYTES.expectation.removeprefix('expected ')}, or unset it"
        raise ConfigurationError(f"{said}; {remedy}") from error
