"""The API's settings from ETL_CRAFT_API_* environment variables (its options override them)."""

from __future__ import annotations

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from etl_craft.core.errors import ConfigurationError
from etl_craft_api.app import DEFAULT_MAX_BODY_BYTES

ENV_PREFIX = "ETL_CRAFT_API_"


class ApiSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1)


def load_api_settings() -> ApiSettings:
    try:
        return ApiSettings()
    except ValidationError as error:
        said = "; ".join(
            f"{ENV_PREFIX}{str(item['loc'][0]).upper()}: {item['msg']}" for item in error.errors()
        )
        remedy = "set it to a whole number of bytes above 0, or unset it"
        raise ConfigurationError(f"{said}; {remedy}") from error
