"""The UI's settings from ETL_CRAFT_UI_* environment variables (its options override them)."""

from __future__ import annotations

import secrets

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from etl_craft.core.errors import ConfigurationError
from etl_craft.operations.access.ui_sessions import SignInPolicy
from etl_craft_ui.options import DEFAULT_HOST, DEFAULT_PORT

ENV_PREFIX = "ETL_CRAFT_UI_"
DEFAULT_SESSION_SECONDS = 8 * 3600  # a working day
# Failed sign-ins a client, or an account, may make in the window before the next is refused.
DEFAULT_CLIENT_FAILURES = 20
DEFAULT_ACCOUNT_FAILURES = 5
DEFAULT_FAILURE_WINDOW_SECONDS = 15 * 60
MIN_SECRET_LENGTH = 32


class UiSettings(BaseSettings):
    """``secret`` (ETL_CRAFT_UI_SECRET) signs the session cookies: without one, each process
    draws its own, and sessions end when it restarts (and reach only the replica that signed
    them)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    session_seconds: int = Field(default=DEFAULT_SESSION_SECONDS, ge=60)
    secret: str = Field(
        default_factory=lambda: secrets.token_urlsafe(MIN_SECRET_LENGTH),
        min_length=MIN_SECRET_LENGTH,
        repr=False,
    )
    # Behind TLS (directly or at a proxy) the cookie carries Secure: a browser then never sends
    # it over plain HTTP.
    secure_cookies: bool = False
    sign_in_client_failures: int = Field(default=DEFAULT_CLIENT_FAILURES, ge=1)
    sign_in_account_failures: int = Field(default=DEFAULT_ACCOUNT_FAILURES, ge=1)
    sign_in_window_seconds: int = Field(default=DEFAULT_FAILURE_WINDOW_SECONDS, ge=60)

    @property
    def sign_in_policy(self) -> SignInPolicy:
        return SignInPolicy(
            client_failures=self.sign_in_client_failures,
            account_failures=self.sign_in_account_failures,
            window_seconds=self.sign_in_window_seconds,
            session_seconds=self.session_seconds,
        )

    @field_validator("secret", mode="before")
    @classmethod
    def _drawn_when_empty(cls, value: object) -> object:
        # An empty ETL_CRAFT_UI_SECRET (compose passes one when it is unset) means "none given".
        return secrets.token_urlsafe(MIN_SECRET_LENGTH) if value in (None, "") else value


def load_ui_settings(**overrides: object) -> UiSettings:
    """The settings from the environment, with ``overrides`` (the command's options) on top."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return UiSettings(**given)  # type: ignore[arg-type]
    except ValidationError as error:
        said = "; ".join(
            f"{ENV_PREFIX}{str(item['loc'][0]).upper()}: {item['msg']}" for item in error.errors()
        )
        remedy = (
            f"fix or unset it (ETL_CRAFT_UI_SECRET needs {MIN_SECRET_LENGTH} characters or more: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))' draws one)"
        )
        raise ConfigurationError(f"{said}; {remedy}") from error
